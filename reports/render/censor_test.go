package render

import (
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// Issue 21, case 1: the p95 of the delivery latency counts every accepted
// message. 38 of 40 without a final status put the p95 among them: it is a
// lower bound (null in summary.json, p95_at_least beside it), and the
// threshold p95 < 10s fails on it — over the two survivors it was 4.58 s and
// the run passed.
func TestSurvivorLatencyIsCensored(t *testing.T) {
	r := survivorRun()
	s, f := build(t, r)
	if s.Verdict == reports.VerdictPass {
		t.Fatalf("verdict pass on 2 of 40 delivered: %q", s.VerdictReasons)
	}
	requireVerdict(t, s, verdictFail, "threshold delivery.latency.p95 < 10s has only a lower bound: delivery.latency.p95 is at least")
	var waited []float64
	for i := 2; i < 40; i++ {
		waited = append(waited, 9-0.1*float64(i)) // the deadline less the send
	}
	delivered := []float64{4.48, 4.58}
	want := round6(censoredBound(delivered, waited, 95))
	p := s.Delivery.Latency
	if p.Count != 40 || p.Censored != 38 || p.P95AtLeast == nil || *p.P95AtLeast != want {
		t.Errorf("delivery.latency %+v, want 40 of which 38 censored, p95 at least %v", p, want)
	}
	if wantMax := round6(censoredBound(delivered, waited, 100)); p.MaxAtLeast == nil || *p.MaxAtLeast != wantMax {
		t.Errorf("max %+v, want at least %v (message 3, sent at 0.2 s, waited that long)", p.MaxAtLeast, wantMax)
	}
	js := f[rundir.SummaryFile]
	if v := jsonAt(t, js, "delivery", "latency", "p95"); v != nil {
		t.Errorf("delivery.latency.p95 = %v, want null", v)
	}
	if v := jsonAt(t, js, "delivery", "latency", "p95_at_least"); v != want {
		t.Errorf("delivery.latency.p95_at_least = %v, want %v", v, want)
	}
	if v := jsonAt(t, js, "delivery", "latency", "censored"); v != 38.0 {
		t.Errorf("delivery.latency.censored = %v, want 38", v)
	}
	// The survivors alone, labelled: never what a threshold reads.
	if d := s.Delivery.LatencyDelivered; d.Count != 2 || d.Max != 4.58 {
		t.Errorf("latency_delivered %+v, want the two survivors", d)
	}
	th := threshold(t, s, "delivery.latency.p95 < 10s")
	if th.OK || !strings.Contains(th.Error, "(38 of 40 without a final status by the end of the wait)") {
		t.Errorf("threshold %+v, want it failed on the lower bound", th)
	}
	for name, gt := range map[string]string{"terminal": ">", rundir.MarkdownFile: "&gt;", rundir.HTMLFile: "&gt;"} {
		if !strings.Contains(f[name], "/ "+gt+" "+dur(want)+" /") || !strings.Contains(f[name], "(38 of 40 without a final status)") {
			t.Errorf("%s does not say p95 > %s (38 of 40 without a final status):\n%s", name, dur(want), f[name])
		}
	}
}
