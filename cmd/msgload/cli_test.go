package main

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryFlagReadsOneEnvVar walks every command's flags: each has exactly one
// environment variable, MSGLOAD_<COMMAND>_<FLAG>, and the command's --help
// shows it the one way ([$NAME]) on the flag's line, with no other style, a
// placeholder that is one upper-case word, and an example.
func TestEveryFlagReadsOneEnvVar(t *testing.T) {
	g := &globalState{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	rule := regexp.MustCompile(`^MSGLOAD_[A-Z]+_[A-Z0-9]+(_[A-Z0-9]+)*$`)
	placeholder := regexp.MustCompile("`([^`]*)`")
	seen := map[string]string{}
	for _, cmd := range g.app().Commands {
		code, help, stderr := runProgram(t, nil, nil, cmd.Name, "--help")
		if code != exitOK || stderr != "" {
			t.Fatalf("%s --help: exit %d, stderr %q", cmd.Name, code, stderr)
		}
		if strings.Contains(help, "(env ") || strings.Contains(help, "env MSGLOAD") {
			t.Errorf("%s --help names a variable in another style than [$NAME]:\n%s", cmd.Name, help)
		}
		if !strings.Contains(help, "\nEXAMPLES:\n   ") || !regexp.MustCompile(`(?m)^   .*msgload `+cmd.Name+`\b`).MatchString(help) {
			t.Errorf("%s --help has no example of the command:\n%s", cmd.Name, help)
		}
		for _, f := range cmd.Flags {
			name := f.Names()[0]
			d, ok := f.(cli.DocGenerationFlag)
			if !ok {
				t.Errorf("%s --%s: %T shows no variable", cmd.Name, name, f)
				continue
			}
			envs := d.GetEnvVars()
			want := "MSGLOAD_" + strings.ToUpper(strings.ReplaceAll(cmd.Name+"_"+name, "-", "_"))
			if len(envs) != 1 || envs[0] != want || !rule.MatchString(envs[0]) {
				t.Errorf("%s --%s: variables %v, want exactly [%s]", cmd.Name, name, envs, want)
				continue
			}
			if other, dup := seen[want]; dup {
				t.Errorf("%s is read by %s and by %s --%s", want, other, cmd.Name, name)
			}
			seen[want] = cmd.Name + " --" + name
			line := regexp.MustCompile(`(?m)^\s+--` + regexp.QuoteMeta(name) + `\b.*$`).FindString(help)
			if !strings.HasSuffix(line, "[$"+want+"]") {
				t.Errorf("%s --help: the line of --%s does not end with [$%s]: %q", cmd.Name, name, want, line)
			}
			// A backquoted word in a usage is the value's placeholder: one word.
			for _, m := range placeholder.FindAllStringSubmatch(d.GetUsage(), -1) {
				if !regexp.MustCompile(`^[A-Z_]+$`).MatchString(m[1]) {
					t.Errorf("%s --%s: placeholder %q is not one upper-case word", cmd.Name, name, m[1])
				}
			}
		}
	}
	if _, root, _ := runProgram(t, nil, nil, "--help"); !strings.Contains(root, "EXAMPLES:\n   msgload run") {
		t.Errorf("msgload --help has no examples:\n%s", root)
	}
}

// TestEnvVarsApply: a variable sets its flag through the injected environment,
// a flag on the command line wins, an old name still works with a warning, and
// a value that does not parse is bad input naming the variable.
func TestEnvVarsApply(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		json   bool   // stdout is the JSON plan
		stderr string // a regexp stderr must match ("" = empty)
	}{
		// The variable of --json turns it on.
		{"variable", map[string]string{"MSGLOAD_VALIDATE_JSON": "true"}, nil, exitOK, true, ``},
		// The flag given wins over a bad variable, which is then not read.
		{"flag wins", map[string]string{"MSGLOAD_VALIDATE_MAX_MESSAGES": "lots"}, []string{"--max-messages", "3"}, exitOK, false, ``},
		// A bad value names the variable and the flag.
		{"bad value", map[string]string{"MSGLOAD_VALIDATE_MAX_MESSAGES": "lots"}, nil, exitBadInput, false,
			`^msgload: MSGLOAD_VALIDATE_MAX_MESSAGES="lots": not a valid value of --max-messages: want a whole number, e.g. 100; see 'msgload validate --help'\n$`},
		// The name before the rule still works, with a warning.
		{"old name", map[string]string{"MSGLOAD_JSON": "1"}, nil, exitOK, true, `MSGLOAD_JSON is renamed MSGLOAD_VALIDATE_JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runProgram(t, tt.env, nil, append(append([]string{"validate"}, tt.args...), "smoke")...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			if tt.stderr == "" && stderr != "" || !regexp.MustCompile(tt.stderr).MatchString(stderr) {
				t.Errorf("stderr %q, want %q", stderr, tt.stderr)
			}
			if code == exitOK && json.Valid([]byte(stdout)) != tt.json {
				t.Errorf("stdout JSON = %v, want %v:\n%s", json.Valid([]byte(stdout)), tt.json, stdout)
			}
		})
	}
}

// TestUsageErrors: a mistyped command or flag, wherever it is written, is one
// line on stderr with the nearest name and where the help is, exit 2, and no
// help dumped.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		// A mistyped command.
		{[]string{"runn", "smoke"}, "msgload: unknown command runn (did you mean run?); see 'msgload --help'"},
		// Two letters swapped is one slip, not two.
		{[]string{"rnu", "smoke"}, "msgload: unknown command rnu (did you mean run?); see 'msgload --help'"},
		{[]string{"reprot", "x"}, "msgload: unknown command reprot (did you mean report?); see 'msgload --help'"},
		// Nothing near: no suggestion.
		{[]string{"frobnicate"}, "msgload: unknown command frobnicate; see 'msgload --help'"},
		// A mistyped flag before the scenario.
		{[]string{"run", "--metrics-adr", ":0", "smoke"}, "msgload: unknown flag --metrics-adr (did you mean --metrics-addr?); see 'msgload run --help'"},
		// … and after it.
		{[]string{"run", "smoke", "--max-mesages", "3"}, "msgload: unknown flag --max-mesages (did you mean --max-messages?); see 'msgload run --help'"},
		// Another command, the = form.
		{[]string{"validate", "smoke", "--jsn=true"}, "msgload: unknown flag --jsn (did you mean --json?); see 'msgload validate --help'"},
		// A global flag.
		{[]string{"--verison"}, "msgload: unknown flag --verison (did you mean --version?); see 'msgload --help'"},
		// A missing argument points at the help too.
		{[]string{"run"}, "msgload: run: name exactly one scenario, got 0; see 'msgload run --help'"},
		{[]string{"compare", "a"}, "msgload: compare: want two arguments, BASE and NEW; see 'msgload compare --help'"},
		// A value that does not parse names the flag, the value and the form wanted.
		{[]string{"run", "--max-messages", "many", "smoke"}, `msgload: --max-messages "many": want a whole number, e.g. 100; see 'msgload run --help'`},
		{[]string{"run", "smoke", "--checkpoint", "5"}, `msgload: --checkpoint "5": want a duration, e.g. 30s, 1m30s or 500ms; see 'msgload run --help'`},
		{[]string{"replay", "--speed", "fast", "f.jsonl"}, `msgload: --speed "fast": want a number, e.g. 0.5 or 2; see 'msgload replay --help'`},
		// A run directory that is not there says so.
		{[]string{"report", "/nonexistent/run"}, `msgload: report: "/nonexistent/run" does not exist`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runProgram(t, nil, nil, tt.args...)
			if code != exitBadInput || stderr != tt.want+"\n" || stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q\nwant exit 2 and %q", code, stderr, stdout, tt.want)
			}
		})
	}
}

// TestCompletion: each shell's script is non-empty and names every command;
// bash's parses (bash -n) and completes commands, flags and scenario names.
func TestCompletion(t *testing.T) {
	g := &globalState{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	var commands []string
	for _, c := range g.app().Commands {
		commands = append(commands, c.Name)
	}
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		code, stdout, stderr := runProgram(t, nil, nil, "completion", sh)
		if code != exitOK || stderr != "" || len(stdout) < 200 {
			t.Fatalf("completion %s: exit %d, %d bytes, stderr %q", sh, code, len(stdout), stderr)
		}
		for _, c := range commands {
			if !regexp.MustCompile(`\b` + c + `\b`).MatchString(stdout) {
				t.Errorf("completion %s does not mention %s", sh, c)
			}
		}
		scripts[sh] = stdout
	}
	if code, _, stderr := runProgram(t, nil, nil, "completion", "powershell"); code != exitBadInput || !strings.Contains(stderr, "unknown shell") {
		t.Errorf("completion powershell: exit %d, %q", code, stderr)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	f, err := os.CreateTemp(t.TempDir(), "msgload.bash")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(scripts["bash"])
	f.Close()
	if out, err := exec.Command(bash, "-n", f.Name()).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	for _, tt := range []struct{ line, want string }{
		// Commands.
		{"msgload ru", "run"},
		// A command's flags.
		{"msgload run --metrics-a", "--metrics-addr"},
		// Built-in scenario names for run.
		{"msgload run smo", "smoke"},
		// The shells for completion.
		{"msgload completion fi", "fish"},
	} {
		script := ". " + f.Name() + "\nCOMP_WORDS=(" + tt.line + ")\nCOMP_CWORD=$((${#COMP_WORDS[@]}-1))\n_msgload\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "-c", script).CombinedOutput()
		if err != nil || !strings.Contains(" "+string(out), " "+tt.want) {
			t.Errorf("completing %q: %q (%v), want %s", tt.line, out, err, tt.want)
		}
	}
}

// lookShell finds a shell the completion tests run, skipping when it is not
// installed (required when CI=true: .ci/run installs it).
func lookShell(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required when CI=true (.ci/run installs it)", name)
		}
		t.Skipf("%s not installed: its completion is not tried", name)
	}
	return p
}

// TestCompletionFishAndZsh runs the fish and zsh scripts in the real shells:
// fish completes a command line itself (`complete -C`); zsh runs _msgload
// with the words of a line, its completion builtins (_describe, _arguments,
// compadd) replaced by functions that print what they would offer.
func TestCompletionFishAndZsh(t *testing.T) {
	lines := []struct{ line, want string }{
		{"msgload ru", "run"},                                 // commands
		{"msgload run --metrics-a", "--metrics-addr"},         // a command's flags
		{"msgload run smo", "smoke"},                          // built-in scenario names for run
		{"msgload validate notify-r", "notify-respect-limit"}, // ... and validate
		{"msgload completion fi", "fish"},                     // the shells
	}
	script := func(t *testing.T, sh string) string {
		code, stdout, stderr := runProgram(t, nil, nil, "completion", sh)
		if code != exitOK || stderr != "" {
			t.Fatalf("completion %s: exit %d, %q", sh, code, stderr)
		}
		f := filepath.Join(t.TempDir(), "msgload."+sh)
		if err := os.WriteFile(f, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	t.Run("fish", func(t *testing.T) {
		fish := lookShell(t, "fish")
		f := script(t, "fish")
		if out, err := exec.Command(fish, "-n", f).CombinedOutput(); err != nil {
			t.Fatalf("fish -n: %v\n%s", err, out)
		}
		for _, tt := range lines {
			cmd := exec.Command(fish, "--no-config", "-c", "source "+f+"; complete -C '"+tt.line+"'")
			cmd.Dir = t.TempDir() // no file names to offer
			out, err := cmd.CombinedOutput()
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
			if err != nil || !slices.Contains(got, tt.want) {
				t.Errorf("fish completing %q: %q (%v), want %s", tt.line, got, err, tt.want)
			}
		}
	})
	t.Run("zsh", func(t *testing.T) {
		zsh := lookShell(t, "zsh")
		f := script(t, "zsh")
		if out, err := exec.Command(zsh, "-n", f).CombinedOutput(); err != nil {
			t.Fatalf("zsh -n: %v\n%s", err, out)
		}
		harness := `compdef() { : }
_describe() { local n=${@[-1]}; print -rl -- ${(P)n} }
_arguments() { print -rl -- "$@" }
compadd() { print -rl -- "$@" }
_files() { : }
source ` + f + `
words=(${=1}); CURRENT=${#words}
_msgload
`
		for _, tt := range lines {
			out, err := exec.Command(zsh, "-f", "-c", harness, "zsh", tt.line).CombinedOutput()
			// An offered word stands alone, or starts a "word:description"
			// or "--flag[description]" spec, or is inside "(a b c)".
			re := regexp.MustCompile(`(^|[\s(])` + regexp.QuoteMeta(tt.want) + `($|[\s:\[)])`)
			if err != nil || !re.Match(out) {
				t.Errorf("zsh completing %q: %v\n%s\nwant %s", tt.line, err, out, tt.want)
			}
		}
	})
}
