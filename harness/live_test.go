package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// abortSource: a 10-minute plan against the embedded simulator answering
// half the sends 500, with an abortOnFail threshold (%s).
const abortSource = `
name: abort
api: notify
target: embedded
load: { profile: constant, rate: 20/s, duration: 10m }
limit: { rate: 100000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
delivery: { via: none }
sim: { rateLimit: { rate: 100000/1m }, faults: { error500: 50%% } }
thresholds:
  - "requests.total > 0"
  - %s
`

// An abortOnFail threshold stops a 10-minute run soon after it fails: a
// count that only grows, over its bound (it can no longer pass), and a share
// that fails after its delayAbortEval (k6's rule). The run sent a small part
// of its plan, its report is complete (run.json has an end, every report is
// written), not interrupted, and its verdict is fail with the reason naming
// the threshold — or incomplete when, besides, the machine could not hold
// the rate while it ran, which the verdict then says. Nothing here is timed:
// the bound on what was sent is a tenth of the plan, a minute of sends.
func TestAbortOnFailStopsTheRun(t *testing.T) {
	for _, tt := range []struct {
		threshold string
		final     bool
	}{
		{`{ expr: 'requests.codes["500"] == 0', abortOnFail: true }`, true},
		{`{ expr: "requests.error_rate < 0.01", abortOnFail: true, delayAbortEval: 1s }`, false},
	} {
		t.Run(tt.threshold, func(t *testing.T) {
			s, err := scenarios.Parse("abort.yaml", "", []byte(strings.ReplaceAll(strings.Replace(abortSource, "%s", tt.threshold, 1), "%%", "%")), func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			// A safety net, not an assertion: a run the threshold did not
			// stop is stopped here as by an interrupt, and fails below.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			var stderr strings.Builder
			res, err := Run(ctx, Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr})
			if err != nil {
				t.Fatal(err)
			}
			p := res.Parts[0]
			sum := p.Summary
			if p.Err != nil || sum == nil {
				t.Fatalf("run: %v\n%s", p.Err, stderr.String())
			}
			var b strings.Builder
			render.Terminal(&b, sum)
			planned := sum.Requests.PlannedCount
			if res.Interrupted || sum.Run.Interrupted || planned != 12000 || sum.Requests.Messages*10 > planned {
				t.Fatalf("interrupted %v, sent %d of %d planned: want stopped by the threshold long before its plan\n%s\n%s", res.Interrupted, sum.Requests.Messages, planned, b.String(), stderr.String())
			}
			ab := sum.Run.Aborted
			if ab == nil || !strings.Contains(tt.threshold, ab.Threshold) || ab.Final != tt.final || ab.Value <= 0 {
				t.Fatalf("run.aborted %+v, want the threshold (final %v)\n%s", ab, tt.final, b.String())
			}
			x := reasonOf(sum, "by the abortOnFail threshold "+ab.Threshold)
			if x == nil || x.Whose != reports.WhoseService || x.Verdict != "fail" {
				t.Fatalf("reasons %+v: want the service's, fail, naming the threshold", sum.Reasons)
			}
			for _, r := range sum.Reasons {
				if r.Verdict != "fail" && !(r.Whose == reports.WhoseEnvironment && reports.GeneratorLimit(r.Limit)) {
					t.Errorf("reason %+v: an aborted run fails; only a machine that could not keep up may add incomplete", r)
				}
			}
			if res.Verdict() == reports.VerdictPass || res.Verdict() == reports.VerdictIncomplete && !planNotHeldBesides(sum) {
				t.Errorf("verdict %s (exit %d): want fail\n%s", res.Verdict(), reports.ExitCode(res.Verdict()), b.String())
			}
			// The report is complete: run.json has its end, every file is written.
			var meta rundir.Meta
			mb, err := os.ReadFile(filepath.Join(p.Dir, rundir.MetaFile))
			if err == nil {
				err = json.Unmarshal(mb, &meta)
			}
			if err != nil || meta.End.IsZero() || meta.Aborted == nil {
				t.Errorf("run.json: %v, end %v, aborted %+v", err, meta.End, meta.Aborted)
			}
			for _, f := range []string{rundir.SummaryFile, rundir.HTMLFile, rundir.MarkdownFile, rundir.JUnitFile} {
				if _, err := os.Stat(filepath.Join(p.Dir, f)); err != nil {
					t.Errorf("%s: %v", f, err)
				}
			}
			if !strings.Contains(stderr.String(), "abortOnFail threshold "+ab.Threshold+" fails") {
				t.Errorf("stderr does not say the run was stopped:\n%s", stderr.String())
			}
			// The progress line's last state shows the live verdict.
			if !strings.Contains(stderr.String(), "  "+ab.Threshold+" FAILING\n") {
				t.Errorf("the progress line does not show the threshold failing:\n%s", stderr.String())
			}
		})
	}
}

// planNotHeldBesides says whether s is incomplete only because the machine
// could not hold the rate while the run went (besides the abort).
func planNotHeldBesides(s *reports.Summary) bool {
	for _, r := range s.Reasons {
		if r.Verdict == reports.VerdictIncomplete && !(r.Whose == reports.WhoseEnvironment && reports.GeneratorLimit(r.Limit)) {
			return false
		}
	}
	return true
}

// reasonOf is s's reason whose text holds sub, or nil.
func reasonOf(s *reports.Summary, sub string) *reports.Reason {
	for i := range s.Reasons {
		if strings.Contains(s.Reasons[i].Text, sub) {
			return &s.Reasons[i]
		}
	}
	return nil
}

// The progress line carries the parts' live verdicts.
func TestProgressLineLiveVerdict(t *testing.T) {
	c := counters{Phase: "attack", Sent: 3, Live: []string{"requests.error_rate < 0.01 FAILING"}}
	if got := c.String(); !strings.HasSuffix(got, "  requests.error_rate < 0.01 FAILING") {
		t.Errorf("progress line %q", got)
	}
	c.Live = nil
	if got := c.String(); strings.Contains(got, "thresholds") {
		t.Errorf("progress line %q: no abortOnFail threshold, no live verdict", got)
	}
}

// A live threshold that holds stops nothing: the run sends its plan and
// passes. Checkpoints taken every 100 ms while it goes never overwrite the
// final summary.json (the live loop ends before the reports are built).
func TestLiveThresholdThatHoldsStopsNothing(t *testing.T) {
	src := `
name: holds
api: notify
target: embedded
load: { profile: constant, rate: 20/s, requests: 60 }
limit: { rate: 100000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
idempotency: { probes: 10% }
delivery: { via: none }
sim: { rateLimit: { rate: 100000/1m } }
thresholds:
  - { expr: idempotency.mismatches == 0, abortOnFail: true }
  - { expr: requests.error_rate < 1%, abortOnFail: true }
`
	s, err := scenarios.Parse("holds.yaml", "", []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr, Checkpoint: 100 * time.Millisecond, LiveEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Parts[0]
	requireGreen(t, p, stderr.String())
	if p.Summary.Run.Aborted != nil || p.Summary.Requests.Messages != 60 || len(p.Summary.Thresholds) != 2 {
		t.Fatalf("aborted %+v, sent %d of 60, thresholds %+v", p.Summary.Run.Aborted, p.Summary.Requests.Messages, p.Summary.Thresholds)
	}
	b, err := os.ReadFile(filepath.Join(p.Dir, rundir.SummaryFile))
	if err != nil || strings.Contains(string(b), `"partial"`) || !strings.Contains(string(b), `"verdict": "pass"`) {
		t.Errorf("summary.json after the run (%v): want the final one, not a checkpoint:\n%.400s", err, b)
	}
	if !strings.Contains(stderr.String(), "  thresholds ok\n") {
		t.Errorf("the progress line does not say the live thresholds hold:\n%s", stderr.String())
	}
}
