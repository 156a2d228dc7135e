package render

import (
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// A run with no threshold that sent 6 % of its plan is incomplete, never a
// pass: the generator's CPU held it back (its sends left late, no cap was
// hit), an environment reason. The headline says sent of planned everywhere.
func TestLoadNotHeldIsIncomplete(t *testing.T) {
	r := plannedRun(100, 10, 6, 2, 0.01)
	r.meta.Thresholds = nil
	s, f := build(t, r)
	requireVerdict(t, s, reports.VerdictIncomplete, "sent 6 of 100 planned messages (6.0 %)")
	x := loadReason(s)
	if x == nil || x.Whose != reports.WhoseEnvironment || x.Limit != limitCPU || x.Verdict != reports.VerdictIncomplete || x.Next == "" {
		t.Fatalf("reasons %+v: want the load generator's CPU (environment), with what to do", s.Reasons)
	}
	const headline = "Sent 6 of 100 planned messages (6.0 %)"
	for _, name := range []string{"terminal", rundir.MarkdownFile, rundir.HTMLFile} {
		if !strings.Contains(f[name], headline) {
			t.Errorf("%s does not say %q:\n%s", name, headline, f[name])
		}
	}
	if reports.ExitCode(s.Verdict) == 0 {
		t.Errorf("exit code 0 for a run at 6 %% of its plan")
	}
	// Neither late nor capped: the generator stopped early, for no reason
	// the raw files show — not put down to a busy machine.
	s, _ = build(t, plannedRun(100, 10, 6, 0, 0.01))
	if x := loadReason(s); s.Verdict != reports.VerdictIncomplete || x == nil || x.Limit != limitStopped || reports.GeneratorLimit(x.Limit) {
		t.Errorf("verdict %s, reasons %+v: want incomplete, the generator stopped early", s.Verdict, s.Reasons)
	}
}

// In exceed mode the 429s the scenario sends for are not errors in the
// headline: they are said apart, and errors exclude them.
func TestExceedModeHeadline(t *testing.T) {
	r := passingRun()
	r.meta.Thresholds = nil
	r.meta.Limit = rundir.Limit{Requests: 1, Window: rundir.Duration(time.Minute), Mode: "exceed"}
	for i := int64(2); i <= 10; i++ {
		code := 429
		if i == 10 {
			code = 500
		}
		r.send(i, "c1", float64(i), code, 0.01)
	}
	_, f := build(t, r)
	for _, name := range []string{"terminal", rundir.MarkdownFile, rundir.HTMLFile} {
		if !strings.Contains(f[name], "10 messages, 80.00% answered 429, as exceed mode expects; 10.00% other errors") || strings.Contains(f[name], "90.00% errors") {
			t.Errorf("%s counts the expected 429s as errors:\n%s", name, f[name])
		}
	}
	r.meta.Limit.Mode = "respect" // in respect mode a 429 is a finding: an error
	_, f = build(t, r)
	if !strings.Contains(f["terminal"], "90.00% errors") {
		t.Errorf("respect mode: 429s are errors:\n%s", f["terminal"])
	}
}

// A figure that stands on a missing raw file has no data: the threshold line
// of the error run says so, never the value of nothing (without events.jsonl
// every accepted message would read as lost).
func TestMissingRawFileThresholdNoData(t *testing.T) {
	r := passingRun()
	r.meta.Thresholds = []string{"delivery.lost == 0", "requests.error_rate < 1%"}
	dir := r.write(t)
	mustRemove(t, dir, rundir.EventsFile)
	s, f := buildDir(t, dir)
	requireVerdict(t, s, reports.VerdictError, "events.jsonl is missing")
	if !strings.Contains(f["terminal"], "delivery.lost == 0 — no data: delivery.lost: events.jsonl is missing") || strings.Contains(f["terminal"], "(value 1)") {
		t.Errorf("terminal:\n%s", f["terminal"])
	}
	if len(s.Thresholds) != 2 || !s.Thresholds[1].OK {
		t.Errorf("the error rate stands on attempts.jsonl, which is there: %+v", s.Thresholds)
	}
	if !strings.Contains(f[rundir.SummaryFile], `"whose": "environment"`) {
		t.Errorf("summary.json: the missing file is no environment reason:\n%s", f[rundir.SummaryFile])
	}
}
