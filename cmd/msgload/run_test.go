package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// runProgram runs msgload in-process with args and returns its exit code and
// output. sig, when not nil, is the interrupt channel the program sees.
func runProgram(t *testing.T, env map[string]string, sig chan os.Signal, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if sig == nil {
		sig = make(chan os.Signal)
	}
	g := &globalState{
		stdout:  &stdout,
		stderr:  &stderr,
		getenv:  func(k string) string { return env[k] },
		signals: func() (<-chan os.Signal, func()) { return sig, func() {} },
	}
	code := g.run(context.Background(), append([]string{"msgload"}, args...))
	return code, stdout.String(), stderr.String()
}

// skipIfPlanNotHeld stops a test that needs its run to hold the plan when
// the machine could not (a busy CI machine): the run then exits 3 and its
// summary.json under out (the one run there, or its shards) must say so —
// incomplete, every reason the load generator's limit (environment). Tests
// never assume the machine keeps up.
func skipIfPlanNotHeld(t *testing.T, code int, out string) {
	t.Helper()
	if code != exitIncomplete {
		return
	}
	var paths []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == rundir.SummaryFile {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) == 0 {
		return
	}
	var why []string
	for _, p := range paths {
		s, err := reports.ReadSummary(p)
		if err != nil || s.Verdict == reports.VerdictPass {
			continue
		}
		if s.Verdict != reports.VerdictIncomplete || len(s.Reasons) == 0 {
			return
		}
		for _, r := range s.Reasons {
			if r.Whose != reports.WhoseEnvironment || !reports.GeneratorLimit(r.Limit) {
				return
			}
		}
		why = append(why, s.VerdictReasons...)
	}
	if len(why) > 0 {
		t.Skipf("the load generator could not hold the plan on this machine, and the verdict says so: %s", strings.Join(why, "; "))
	}
}

func writeScenario(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const quickNotify = `name: quick
api: notify
target: embedded
clients: 2
load: { rate: 20/s, requests: 10 }
limit: { rate: 100/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { grace: 10s }
thresholds:
  - delivery.lost == 0
  - %s
`

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		scenario string   // file contents; "" = args name a built-in
		args     []string // before the scenario
		want     int
		stderr   string // a regexp the error output must match
	}{
		// Every threshold holds: 0, and the summary is printed.
		{"pass", strings.Replace(quickNotify, "%s", "requests.total > 0", 1), nil, exitOK, ``},
		// A threshold fails: 1, the report is still written.
		{"threshold fails", strings.Replace(quickNotify, "%s", "requests.total > 1000000", 1), nil, exitThresholds, `threshold`},
		// A bad scenario: 2, with file:line:col.
		{"bad scenario", "name: x\napi: notify\nload: { rate: fast }\n", nil, exitBadInput, `s\.yaml:3:\d+: load\.rate`},
		// A real host without confirmation: 2, nothing sent.
		{"unconfirmed target", "name: x\napi: notify\ntarget: { baseUrl: \"https://api.example.com\", tokenUrl: \"https://id.example.com/token\" }\nauth: { clientId: a, clientSecret: b }\nload: { rate: 1/s, requests: 1 }\nmessage: { recipient: \"+79990000001\", text: x }\n", nil, exitBadInput, `neither embedded nor loopback`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", "--out", out, "--metrics-addr", "127.0.0.1:0"}, tt.args...)
			args = append(args, writeScenario(t, tt.scenario))
			code, stdout, stderr := runProgram(t, nil, nil, args...)
			if tt.want == exitOK {
				skipIfPlanNotHeld(t, code, out)
			}
			if code != tt.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.want, stdout, stderr)
			}
			if tt.stderr != "" && !regexp.MustCompile(tt.stderr).MatchString(stderr) {
				t.Errorf("stderr does not match %q:\n%s", tt.stderr, stderr)
			}
			runs, _ := os.ReadDir(out)
			if tt.want == exitBadInput {
				if len(runs) != 0 {
					t.Errorf("bad input left a run directory: %v", runs)
				}
				return
			}
			if len(runs) != 1 {
				t.Fatalf("want one run directory, got %d", len(runs))
			}
			var sum struct {
				OK bool `json:"ok"`
			}
			b, err := os.ReadFile(filepath.Join(out, runs[0].Name(), "summary.json"))
			if err != nil || json.Unmarshal(b, &sum) != nil {
				t.Fatalf("summary.json: %v", err)
			}
			if sum.OK != (tt.want == exitOK) {
				t.Errorf("summary ok = %v with exit %d", sum.OK, code)
			}
		})
	}
}

func TestIntersperse(t *testing.T) {
	g := &globalState{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	app := g.app()
	tests := []struct {
		name string
		in   string
		want string
	}{
		// Flags after the scenario move before it, with their values.
		{"trailing value flags", "msgload run smoke --out x --max-messages 5", "msgload run --out x --max-messages 5 smoke"},
		// --name=value stays one word.
		{"equals form", "msgload run smoke --out=x", "msgload run --out=x smoke"},
		// Already in order: unchanged.
		{"ordered", "msgload run --out x smoke", "msgload run --out x smoke"},
		// A bool flag takes no value: the word after it stays an argument.
		{"bool flag", "msgload validate a --json b", "msgload validate --json a b"},
		// An unknown flag moves too, for the parser to answer; words after -- stay arguments.
		{"unknown and terminator", "msgload run smoke --nope -- --out x", "msgload run --nope smoke -- --out x"},
		// --help after the scenario is a flag too.
		{"help", "msgload run smoke --help", "msgload run --help smoke"},
		// No subcommand: unchanged.
		{"no command", "msgload --help", "msgload --help"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(intersperse(app, strings.Fields(tt.in)), " ")
			if got != tt.want {
				t.Errorf("intersperse(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRunFlagsAfterScenario(t *testing.T) {
	out := t.TempDir()
	scen := writeScenario(t, strings.Replace(quickNotify, "%s", "requests.total > 0", 1))
	code, stdout, stderr := runProgram(t, nil, nil, "run", scen, "--out", out, "--metrics-addr", "127.0.0.1:0", "--max-messages", "4")
	skipIfPlanNotHeld(t, code, out) // --max-messages is a deliberate cap: only a busy machine makes this run short
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	runs, _ := os.ReadDir(out)
	if len(runs) != 1 {
		t.Fatalf("--out after the scenario was not applied: %d runs in it", len(runs))
	}
	n := 0
	_ = rundir.ReadJSONL(filepath.Join(out, runs[0].Name(), rundir.AttemptsFile), func(a rundir.Attempt) error {
		if a.Op == "send" && a.Attempt <= 1 && a.Probe == "" {
			n++
		}
		return nil
	}, nil)
	if n != 4 {
		t.Errorf("--max-messages 4 after the scenario: %d messages sent", n)
	}
}

// TestRunBinaryInterrupted builds the real binary, starts a long run and sends
// SIGINT: the program stops sending, waits for callbacks, writes the partial
// report and exits 130.
func TestRunBinaryInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "msgload")
	build := exec.Command("go", "build", "-o", bin, ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	scen := writeScenario(t, `name: long
api: notify
target: embedded
load: { rate: 10/s, duration: 10m }
limit: { rate: 1000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
delivery: { grace: 20s }
sim: { rateLimit: { rate: 1000/1m } }
thresholds: [ "delivery.lost == 0" ]
`)
	out := t.TempDir()
	cmd := exec.Command(bin, "run", "--out", out, "--metrics-addr", "127.0.0.1:0", scen)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
			t.Fatalf("exit: %v, want %d\nstdout:\n%s\nstderr:\n%s", err, exitInterrupted, stdout.String(), stderr.String())
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("a run of 10 minutes did not end after SIGINT")
	}
	runs, _ := os.ReadDir(out)
	if len(runs) != 1 {
		t.Fatalf("want one run directory, got %d", len(runs))
	}
	for _, f := range []string{"attempts.jsonl", "events.jsonl", "summary.json", "report.html"} {
		if fi, err := os.Stat(filepath.Join(out, runs[0].Name(), f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s missing or empty after an interrupt", f)
		}
	}
	if !strings.Contains(stderr.String(), "no new sends") {
		t.Errorf("stderr does not say what the interrupt did:\n%s", stderr.String())
	}
}

// TestVersion: --version names the build (module version, revision when known).
func TestVersion(t *testing.T) {
	code, stdout, _ := runProgram(t, nil, nil, "--version")
	if code != exitOK || !strings.HasPrefix(stdout, "msgload version ") || strings.TrimSpace(strings.TrimPrefix(stdout, "msgload version ")) == "" {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
}
