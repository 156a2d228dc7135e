package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// partialSummary is what the checkpoint test reads of summary.json.
type partialSummary struct {
	Partial  bool     `json:"partial"`
	Verdict  string   `json:"verdict"`
	Reasons  []string `json:"verdict_reasons"`
	Requests struct {
		Messages int64 `json:"messages"`
	} `json:"requests"`
}

// readPartial reads dir's summary.json, or reports why not.
func readPartial(dir string) (partialSummary, error) {
	var s partialSummary
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	return s, err
}

// A soak killed with SIGKILL still leaves its figures: while the run goes,
// summary.json is rewritten every checkpoint period (here 1 s), marked
// partial, verdict incomplete, with the figures so far; msgload report of
// the killed run's directory then gives the figures up to the kill — every
// send the process had counted (its metrics, scraped) 1.5 s before the kill
// — with verdict incomplete. The waits are bounds, not timings: what is
// asserted is what the process said it did.
func TestCheckpointOfAKilledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs msgload in a subprocess for some seconds")
	}
	scen := writeScenario(t, `name: soaked
api: notify
target: embedded
load: { rate: 20/s, duration: 5m }
limit: { rate: 100000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
delivery: { grace: 30s }
sim: { rateLimit: { rate: 100000/1m }, notifyDelay: { median: 200ms, p95: 1s } }
`)
	out := t.TempDir()
	p := startMsgload(t, "run", "--out", out, "--metrics-addr", "127.0.0.1:0", "--checkpoint", "1s", scen)
	var dir string
	var cp partialSummary
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if dirs, _ := filepath.Glob(filepath.Join(out, "*", rundir.MetaFile)); len(dirs) == 1 {
			dir = filepath.Dir(dirs[0])
			var err error
			if cp, err = readPartial(dir); err == nil && cp.Requests.Messages > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint with figures in a minute (dir %q):\n%s", dir, p.stderr())
		}
	}
	if !cp.Partial || cp.Verdict != reports.VerdictIncomplete || !strings.Contains(strings.Join(cp.Reasons, "|"), "partial: the run is still going") {
		t.Errorf("checkpoint %+v: want partial, incomplete, saying the run is still going", cp)
	}
	sent := p.waitSends(t, 40)
	time.Sleep(1500 * time.Millisecond)
	p.kill(t)

	// What the process left: its last checkpoint, partial.
	if last, err := readPartial(dir); err != nil || !last.Partial || last.Requests.Messages < cp.Requests.Messages {
		t.Errorf("summary.json after the kill: %+v (%v), want a partial checkpoint at least as far as %d messages", last, err, cp.Requests.Messages)
	}
	code, _, stderr := runProgram(t, nil, nil, "report", "--quiet", dir)
	s, err := readPartial(dir)
	if err != nil || s.Partial || s.Verdict != reports.VerdictIncomplete || code != exitIncomplete {
		t.Fatalf("msgload report of the killed run: exit %d, %+v (%v), want incomplete and not partial\n%s", code, s, err, stderr)
	}
	if float64(s.Requests.Messages) < sent {
		t.Errorf("msgload report of the killed run counts %d messages; the process had counted %v sends 1.5 s before it was killed", s.Requests.Messages, sent)
	}
}

// A run an abortOnFail threshold stopped exits 1 (fail), not 130 (it was
// not interrupted), and its last line says FAIL; stderr says which
// threshold stopped it.
func TestAbortOnFailExitsFail(t *testing.T) {
	scen := writeScenario(t, `name: aborted
api: notify
target: embedded
load: { rate: 20/s, duration: 2m }
limit: { rate: 100000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
delivery: { via: none }
sim: { rateLimit: { rate: 100000/1m }, faults: { error500: 50% } }
thresholds:
  - { expr: 'requests.codes["500"] == 0', abortOnFail: true }
`)
	out := t.TempDir()
	code, stdout, stderr := runProgram(t, nil, nil, "run", "--out", out, "--metrics-addr", "", scen)
	if code == exitIncomplete {
		abortedButPlanNotHeld(t, out, stdout, stderr)
		return
	}
	if code != exitThresholds || !strings.Contains(stdout, "FAIL") || !strings.Contains(stderr, `abortOnFail threshold requests.codes["500"] == 0 fails`) {
		t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitThresholds, stdout, stderr)
	}
	if !strings.Contains(stdout, "aborted at") {
		t.Errorf("the summary does not say the run was aborted:\n%s", stdout)
	}
}

// abortedButPlanNotHeld accepts what a busy machine makes of the run above:
// the generator could not hold 20/s until the abort, so the verdict is
// incomplete (an environment reason ranks over the service's fail) — but the
// abort must still have happened and its threshold must still be the
// service's failing reason beside the environment's.
func abortedButPlanNotHeld(t *testing.T, out, stdout, stderr string) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(out, "*", rundir.SummaryFile))
	if len(dirs) != 1 {
		t.Fatalf("exit %d and no summary.json under %s\nstdout:\n%s\nstderr:\n%s", exitIncomplete, out, stdout, stderr)
	}
	b, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var s reports.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	service, generator := false, false
	for _, r := range s.Reasons {
		switch {
		case r.Whose == reports.WhoseService:
			service = true
		case r.Whose == reports.WhoseEnvironment && reports.GeneratorLimit(r.Limit):
			generator = true
		default:
			t.Errorf("reason %+v: want only the threshold's (service) and the generator's (environment)", r)
		}
	}
	if !service || !generator || !strings.Contains(stderr, `abortOnFail threshold requests.codes["500"] == 0 fails`) || !strings.Contains(stdout, "aborted at") {
		t.Errorf("exit %d: want the abort and its failing threshold beside the generator's shortfall; reasons %+v\nstdout:\n%s\nstderr:\n%s", exitIncomplete, s.Reasons, stdout, stderr)
	}
	t.Logf("the generator could not hold the plan on this machine; the verdict says so (incomplete) and still names the abort")
}
