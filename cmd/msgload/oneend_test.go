package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/rundir"
)

// msgload replay is a run of a recording: it takes run's flags and ends as a
// run does (runHarness). The tests here hold both commands to one table.

// targetOf runs cmd ("run" or "replay") with a notification API at target
// and a token endpoint on a host never confirmed, confirming what confirm
// says (nil: nothing). The second host is always refused, so nothing is
// sent; which hosts the refusal names tells whether target was accepted.
func targetOf(t *testing.T, cmd, target string, confirm []string) (code int, stderr string) {
	t.Helper()
	const token = "http://never-confirmed.example.org/oauth/token"
	args := []string{cmd, "--out", t.TempDir(), "--metrics-addr", ""}
	for _, c := range confirm {
		args = append(args, "--confirm-target", c)
	}
	var env map[string]string
	switch cmd {
	case "run":
		args = append(args, writeScenario(t, fmt.Sprintf("name: t\napi: notify\ntarget: { baseUrl: %q, tokenUrl: %q }\n"+
			"auth: { clientId: a, clientSecret: b }\nload: { rate: 1/s, requests: 1 }\nmessage: { recipient: \"+79990000001\", text: x }\n", target, token)))
	case "replay":
		env = map[string]string{envReplayClientID: "a", envReplayClientSecret: "b"}
		args = append(args, "--notify-url", target, "--token-url", token, emptyRecording(t))
	}
	code, _, stderr = runProgram(t, env, nil, args...)
	return code, stderr
}

// emptyRecording is a recording with its header only.
func emptyRecording(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "traffic.jsonl")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(`{"format":%q,"version":%d,"started":"2026-11-23T10:00:00Z"}`+"\n", replay.FormatName, replay.FormatVersion)), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestRunAndReplayAcceptTheSameTargets: the loopback spellings and the
// --confirm-target forms run accepts, replay accepts, and the ones run
// refuses, replay refuses (one rule: harness.CheckTarget).
func TestRunAndReplayAcceptTheSameTargets(t *testing.T) {
	const remote = "http://api.example.com:8080"
	tests := []struct {
		name, target string
		confirm      []string
		host         string // as a refusal names it
		accepted     bool
	}{
		{"LOCALHOST", "http://LOCALHOST:1", nil, "LOCALHOST", true},
		{"127.0.0.1", "http://127.0.0.1:1", nil, "127.0.0.1", true},
		{"127.1.2.3", "http://127.1.2.3:1", nil, "127.1.2.3", true},
		{"[::1]", "http://[::1]:1", nil, "::1", true},
		{"localhost.", "http://localhost.:1", nil, "localhost.", true},
		{"localhost.example.com", "http://localhost.example.com:1", nil, "localhost.example.com", false},
		{"10.0.0.1", "http://10.0.0.1:1", nil, "10.0.0.1", false},
		{"unconfirmed", remote, nil, "api.example.com", false},
		{"host", remote, []string{"api.example.com"}, "api.example.com", true},
		{"host:port", remote, []string{"api.example.com:8080"}, "api.example.com", true},
		{"HOST", remote, []string{"API.Example.COM"}, "api.example.com", true},
		{"a,b", remote, []string{"other.example.com,api.example.com"}, "api.example.com", true},
		{"repeated", remote, []string{"other.example.com", "api.example.com"}, "api.example.com", true},
		{"another port", remote, []string{"api.example.com:9090"}, "api.example.com", false},
		{"parent domain", remote, []string{"example.com"}, "api.example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, cmd := range []string{"run", "replay"} {
				code, stderr := targetOf(t, cmd, tt.target, tt.confirm)
				refused := strings.Contains(stderr, "host "+tt.host+" of ")
				if code != exitBadInput || refused == tt.accepted {
					t.Errorf("%s: exit %d, accepted %v, want exit 2 and accepted %v:\n%s", cmd, code, !refused, tt.accepted, stderr)
				}
				if tt.accepted && !strings.Contains(stderr, "host never-confirmed.example.org of ") {
					t.Errorf("%s: the token endpoint's host was not checked after the target's:\n%s", cmd, stderr)
				}
			}
		})
	}
}

// TestReplayTakesRunsFlags: every flag of run that is not about shards is a
// flag of replay, with the same default.
func TestReplayTakesRunsFlags(t *testing.T) {
	g := &globalState{}
	var opts runOpts
	replayFlags := map[string]string{}
	for _, f := range g.replayCommand().Flags {
		replayFlags[f.Names()[0]] = f.String()
	}
	for _, f := range opts.flags() {
		name := f.Names()[0]
		got, ok := replayFlags[name]
		if !ok {
			t.Errorf("replay has no --%s", name)
			continue
		}
		// Help texts may differ; the default (in the String form) must not.
		if def, rdef := defaultOf(f.String()), defaultOf(got); def != rdef {
			t.Errorf("--%s: run's default %q, replay's %q", name, def, rdef)
		}
	}
}

// defaultOf is the "(default: …)" of a flag's help line, or "".
func defaultOf(help string) string {
	_, after, ok := strings.Cut(help, "(default: ")
	if !ok {
		return ""
	}
	d, _, _ := strings.Cut(after, ")")
	return d
}

// TestRunAndReplayWriteTheSameRunJSON: a run and a replay against the
// embedded simulator write run.json with the same fields (the commit of the
// build among them), and both end on the line NAME: VERDICT — report.
func TestRunAndReplayWriteTheSameRunJSON(t *testing.T) {
	defer func(c, d string) { commit, commitDate = c, d }(commit, commitDate)
	commit, commitDate = "0123456789ab", "2026-11-26T06:00:00Z"

	fields := map[string][]string{}
	for _, cmd := range []string{"run", "replay"} {
		out := t.TempDir()
		args := []string{cmd, "--out", out, "--metrics-addr", ""}
		if cmd == "run" {
			// quickNotify without thresholds, as the built-in replay scenario has none
			args = append(args, writeScenario(t, quickNotify[:strings.Index(quickNotify, "thresholds:")]))
		} else {
			args = append(args, "--speed", "5", "--grace", "10s", recording(t, 3))
		}
		code, stdout, stderr := runProgram(t, nil, nil, args...)
		skipIfPlanNotHeld(t, code, out)
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s\n%s", cmd, code, stdout, stderr)
		}
		dirs, _ := filepath.Glob(filepath.Join(out, "*", rundir.MetaFile))
		if len(dirs) != 1 {
			t.Fatalf("%s: run.json files %v", cmd, dirs)
		}
		var meta map[string]any
		b, err := os.ReadFile(dirs[0])
		if err == nil {
			err = json.Unmarshal(b, &meta)
		}
		if err != nil {
			t.Fatal(err)
		}
		if meta["commit"] != commit {
			t.Errorf("%s: run.json commit %v, want %s", cmd, meta["commit"], commit)
		}
		fields[cmd] = slices.Sorted(maps.Keys(meta))
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		last := lines[len(lines)-1]
		if want := ": PASS — " + filepath.Join(filepath.Dir(dirs[0]), rundir.HTMLFile); !strings.HasSuffix(last, want) {
			t.Errorf("%s: last line %q, want NAME%s", cmd, last, want)
		}
	}
	if !slices.Equal(fields["run"], fields["replay"]) {
		t.Errorf("run.json fields differ:\nrun    %v\nreplay %v", fields["run"], fields["replay"])
	}
}

// recording is a msgload recording of n notifications, 100 ms apart, with
// kept externalIds.
func recording(t *testing.T, n int) string {
	t.Helper()
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	lines := []string{fmt.Sprintf(`{"format":%q,"version":%d,"started":%q}`, replay.FormatName, replay.FormatVersion, start.Format(time.RFC3339Nano))}
	for i := range n {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		lines = append(lines, fmt.Sprintf(`{"time":%q,"offset_ns":%d,"method":"POST","path":"/api/v1/notifications","headers":{"Content-Type":["application/json"]},"body":%q,"client":"app-1","code":200,"latency_s":0.001}`,
			at.Format(time.RFC3339Nano), at.Sub(start).Nanoseconds(), fmt.Sprintf(`{"externalId":"order-%d","recipient":{"value":"+7999123456%d"},"notificationText":"shipped"}`, i, i)))
	}
	file := filepath.Join(t.TempDir(), "traffic.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestReplayQuietJSONMaxMessages: replay --quiet --json --max-messages 2 of
// a recording of 3 sends 2 (planned 2: a cap on purpose is no shortfall),
// prints summary.json on stdout and only the final lines on stderr.
func TestReplayQuietJSONMaxMessages(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runProgram(t, nil, nil, "replay", "--out", out, "--metrics-addr", "", "--speed", "5", "--grace", "10s",
		"--quiet", "--json", "--max-messages", "2", recording(t, 3))
	skipIfPlanNotHeld(t, code, out)
	var sum struct {
		Verdict  string `json:"verdict"`
		Requests struct {
			Messages int64 `json:"messages"`
			Planned  int64 `json:"planned_messages"`
		} `json:"requests"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("stdout is not summary.json: %v\n%s", err, stdout)
	}
	if code != exitOK || sum.Verdict != "pass" || sum.Requests.Messages != 2 || sum.Requests.Planned != 2 {
		t.Errorf("exit %d, verdict %s, messages %d of %d planned; want 0, pass, 2 of 2\n%s", code, sum.Verdict, sum.Requests.Messages, sum.Requests.Planned, stderr)
	}
	if strings.Contains(stderr, "request latency") || strings.Contains(stderr, "pacing:") {
		t.Errorf("--quiet printed the summary or the replay table:\n%s", stderr)
	}
	if !strings.Contains(stderr, ": PASS — ") {
		t.Errorf("no final line on stderr:\n%s", stderr)
	}
}
