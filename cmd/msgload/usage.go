package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/internal/suggest"
)

// A usage mistake (an unknown command or flag, a flag without its value) is
// answered with one line on stderr and exit 2, never with the whole help:
//
//	msgload: unknown flag --metrics-adr (did you mean --metrics-addr?); see 'msgload run --help'

const flagNotDefined = "flag provided but not defined: -"

// usageError is err as bad input, pointing at the help of path ("msgload run").
func usageError(path string, flags []cli.Flag, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, flagNotDefined); ok {
		msg = "unknown flag " + dashed(name)
		if near := nearestFlag(name, flags); near != "" {
			msg += " (did you mean " + dashed(near) + "?)"
		}
	} else if m := badValue.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("%s %s: want %s", dashed(m[2]), m[1], valueForm(findFlag(m[2], flags)))
	}
	return badInput(fmt.Errorf("%s; see '%s --help'", msg, path))
}

// badValue is how the flag package says a value did not parse
// ("invalid value "abc" for flag -max-messages: parse error"): the value
// (quoted) and the flag.
var badValue = regexp.MustCompile(`^invalid value ("(?:[^"\\]|\\.)*") for flag -([\w-]+): `)

// findFlag is the flag of flags named name, or nil.
func findFlag(name string, flags []cli.Flag) cli.Flag {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// valueForm says what a value of f looks like, for an error about one that
// did not parse (a flag or its environment variable).
func valueForm(f cli.Flag) string {
	switch f.(type) {
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "a whole number, e.g. 100"
	case *cli.Float64Flag:
		return "a number, e.g. 0.5 or 2"
	case *cli.DurationFlag:
		return "a duration, e.g. 30s, 1m30s or 500ms"
	case *cli.BoolFlag:
		return "true or false"
	}
	return "a valid value"
}

// unknownCommand is the answer to `msgload runn`.
func unknownCommand(name string, cmds []*cli.Command) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	msg := "unknown command " + name
	if near, _ := suggest.Nearest(name, names, nearLimit(name)); near != "" {
		msg += " (did you mean " + near + "?)"
	}
	return badInput(fmt.Errorf("%s; see 'msgload --help'", msg))
}

// nearestFlag is the name among flags (and help) nearest to got, or "".
func nearestFlag(got string, flags []cli.Flag) string {
	names := []string{"help"}
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	near, _ := suggest.Nearest(got, names, nearLimit(got))
	return near
}

// nearLimit is how far a name may be from what was typed to be suggested: a
// third of its length, at least 1 (runn → run, metrics-adr → metrics-addr).
func nearLimit(s string) int { return max(1, len(s)/3) }

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// examples are shown at the end of each command's --help (and of msgload
// --help under ""): what a person types most often.
var examples = map[string][]string{
	"": {
		"msgload run smoke                      # the built-in smoke scenario against the embedded simulator and sink",
		"msgload validate my-scenario.yaml      # check a scenario and print its plan",
		"msgload run my-scenario.yaml --quiet   # no progress line and no summary: only the final lines",
		"source <(msgload completion bash)      # complete commands, flags and scenario names",
	},
	"run": {
		"msgload run smoke",
		"msgload run my-scenario.yaml --max-messages 100 --quiet",
		"MSGLOAD_RUN_OUT=/tmp/runs msgload run notify-respect-limit --metrics-addr 127.0.0.1:0",
		"msgload run prod.yaml --confirm-target api.example.com",
		"msgload run big.yaml --shard 0/3 --start-at 2026-11-23T15:00:00Z --out /runs   # one of three shards",
		"JOB_COMPLETION_INDEX=1 MSGLOAD_RUN_SHARDS=3 msgload run big.yaml --run-id big-1   # the shard an Indexed Job's pod runs",
	},
	"validate": {
		"msgload validate smoke soak",
		"msgload validate --json my-scenario.yaml --max-messages 100",
	},
	"sim": {
		"msgload sim",
		"msgload sim --addr 127.0.0.1:8081 --rate-limit 100/1m --rate-limit-algorithm fixed --seed 7",
	},
	"sink": {
		"msgload sink --data ./sink-data",
		"MSGLOAD_SINK_BEARER_TOKEN=… msgload sink --addr 0.0.0.0:8082 --data /var/lib/msgload-sink",
	},
	"report": {
		"msgload report runs/20261123T024146Z-smoke-16df98",
		"msgload report --quiet runs/20261123T024146Z-smoke-16df98 && echo pass",
		"msgload report --merge runs/big-1 runs/big-1/shard-*   # one run from the shards of a sharded run",
	},
	"compare": {
		"msgload compare runs/BASE runs/NEW",
		"msgload compare runs/BASE/summary.json runs/NEW --format markdown --latency-tolerance 5%",
		"msgload compare runs/BASE runs/NEW --json | jq '.comparisons[].rows[] | select(.verdict == \"regression\")'",
	},
	"record": {
		"msgload record --upstream https://api.example.com --out traffic.jsonl --mask-recipients",
	},
	"replay": {
		"msgload replay traffic.jsonl --speed 2",
		"msgload replay traffic.har --scenario smoke",
	},
	"completion": {
		"source <(msgload completion bash)                              # this shell",
		"msgload completion bash > /etc/bash_completion.d/msgload",
		"msgload completion zsh > \"${fpath[1]}/_msgload\"",
		"msgload completion fish > ~/.config/fish/completions/msgload.fish",
	},
}

// examplesSection is the EXAMPLES part of a help template (literal text: the
// examples hold no template actions).
func examplesSection(cmd string) string {
	var b strings.Builder
	b.WriteString("\nEXAMPLES:\n")
	for _, e := range examples[cmd] {
		b.WriteString("   " + e + "\n")
	}
	return b.String()
}
