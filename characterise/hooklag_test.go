package characterise

import (
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/summary"
)

// A sender that seemed still to retry when the wait ended, while the
// embedded simulator's calls started over a second late (its own lag):
// callbacks.attempts cannot tell for the machine's sake and the callback
// probe's run is incomplete — never a pass (issue 27, hook drift:
// TestHookDriftNamesTheKnob/all/1). Without the lag, or against a real
// target, the reason stays the sender's and the run stands.
func TestHookSimLagIsTheMachines(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lag      float64
		embedded bool
	}{{1.2, true}, {0.01, true}, {1.2, false}} {
		f := simFile(t, "lag", 3, 0, "{ rate: 1000/1s }", "")
		f.Scenario.Target.Embedded = c.embedded
		sum := &reports.Summary{Summary: summary.Summary{Truth: &summary.TruthReport{SimLag: &summary.SimLag{Max: c.lag}}}}
		sc := &schedule{series: 1, kind: scheduleExponential, firstDelay: 0.3, factor: 2, stillWhy: "a refused call was still being retried when the wait ended"}
		st := &state{base: f.Scenario, plan: &Plan{}, hook: sc, data: map[string]*probeData{probeHookRetry: {sum: sum}}}
		fs := scheduleFindings(sc)
		st.doubtHook(fs)
		cp := reports.ContractProbe{Name: probeHookRetry, Verdict: reports.VerdictPass}
		st.judgeEnvironment(&cp)
		want := c.lag > 1 && c.embedded
		for _, fd := range fs {
			if fd.Rule == RuleHookAttempts && strings.HasPrefix(fd.Because, "the machine was too busy") != want {
				t.Errorf("lag %g s, embedded %v: %s (%s)", c.lag, c.embedded, fd.Value, fd.Because)
			}
		}
		if (cp.Verdict == reports.VerdictIncomplete) != want {
			t.Errorf("lag %g s, embedded %v: run %s %q", c.lag, c.embedded, cp.Verdict, cp.Reasons)
		}
	}
}
