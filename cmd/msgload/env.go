package main

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/urfave/cli/v2"
)

// The one rule for environment variables: every flag of every command reads
// MSGLOAD_<COMMAND>_<FLAG>, both upper-cased with "-" as "_" (`msgload run
// --metrics-addr` reads MSGLOAD_RUN_METRICS_ADDR). A flag given on the command
// line wins over its variable. Help shows the variable the one way urfave/cli
// does, "[$MSGLOAD_RUN_OUT]", after the flag's text.
//
// Secrets are not flags and keep names of their own (MSGLOAD_SINK_BEARER_TOKEN,
// MSGLOAD_REPLAY_CLIENT_SECRET, …), listed in each command's description.

// envName is the variable of flag (its first name) of command cmd.
func envName(cmd, flag string) string {
	up := func(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }
	return "MSGLOAD_" + up(cmd) + "_" + up(flag)
}

// legacyEnv are variables renamed when the rule above was applied to every
// flag; the old name is still read, with a warning, when the new one is unset.
var legacyEnv = map[string][]string{
	"MSGLOAD_RUN_OUT":               {"MSGLOAD_OUT"},
	"MSGLOAD_RUN_METRICS_ADDR":      {"MSGLOAD_METRICS_ADDR"},
	"MSGLOAD_RUN_METRICS_LINGER":    {"MSGLOAD_METRICS_LINGER"},
	"MSGLOAD_RUN_MAX_MESSAGES":      {"MSGLOAD_MAX_MESSAGES"},
	"MSGLOAD_RUN_CONFIRM_TARGET":    {"MSGLOAD_CONFIRM_TARGET"},
	"MSGLOAD_VALIDATE_MAX_MESSAGES": {"MSGLOAD_MAX_MESSAGES"},
	"MSGLOAD_VALIDATE_JSON":         {"MSGLOAD_JSON"},
	"MSGLOAD_REPLAY_OUT":            {"MSGLOAD_OUT"},
	"MSGLOAD_REPLAY_METRICS_ADDR":   {"MSGLOAD_METRICS_ADDR"},
	"MSGLOAD_REPLAY_CONFIRM_TARGET": {"MSGLOAD_CONFIRM_TARGET"},
	"MSGLOAD_RECORD_REDACT_FIELD":   {"MSGLOAD_RECORD_REDACT_FIELDS", "MSGLOAD_RECORD_SECRET_FIELDS"},
	"MSGLOAD_RECORD_SECRET_HEADER":  {"MSGLOAD_RECORD_SECRET_HEADERS"},
}

// setEnvVars gives every flag of cmd its one variable by the rule.
func setEnvVars(cmd *cli.Command) {
	for _, f := range cmd.Flags {
		v := reflect.ValueOf(f).Elem().FieldByName("EnvVars")
		if !v.IsValid() {
			panic(fmt.Sprintf("msgload %s: flag %T has no EnvVars", cmd.Name, f))
		}
		v.Set(reflect.ValueOf([]string{envName(cmd.Name, f.Names()[0])}))
	}
}

// applyEnv sets every flag of the command not given on the command line from
// its variable, read through g.getenv (urfave/cli reads the process
// environment itself; this makes the injected environment the one that counts,
// and reads the old names). A value that does not parse is bad input naming
// the variable.
func (g *globalState) applyEnv(c *cli.Context) error {
	cmd := c.Command
	for _, f := range cmd.Flags {
		name := f.Names()[0]
		if name == "help" || c.IsSet(name) {
			continue
		}
		env := envName(cmd.Name, name)
		val := g.getenv(env)
		if val == "" {
			for _, old := range legacyEnv[env] {
				if val = g.getenv(old); val != "" {
					fmt.Fprintf(g.stderr, "msgload: warning: %s is renamed %s; reading the old name for now\n", old, env)
					env = old
					break
				}
			}
		}
		if val == "" {
			continue
		}
		vals := []string{val}
		if _, isSlice := f.(*cli.StringSliceFlag); isSlice {
			vals = splitList(val)
		}
		for _, v := range vals {
			if err := c.Set(name, v); err != nil {
				return badInput(fmt.Errorf("%s=%q: not a valid value of --%s: want %s; see 'msgload %s --help'", env, val, name, valueForm(f), cmd.Name))
			}
		}
	}
	return nil
}

// splitList reads a comma-separated list, blanks dropped.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
