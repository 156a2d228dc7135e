package characterise

import (
	"strconv"
	"testing"

	"github.com/msgload/msgload/reports"
)

// inside fails unless the finding's interval holds x and its point value
// lies within the interval.
func inside(t *testing.T, f reports.Finding, x float64) {
	t.Helper()
	if f.Low == nil || f.High == nil {
		t.Fatalf("%s: no interval (%s %s)", f.Rule, f.Value, f.Because)
	}
	if x < *f.Low || x > *f.High {
		t.Errorf("%s: %g outside [%g, %g]", f.Rule, x, *f.Low, *f.High)
	}
	v, err := strconv.ParseFloat(f.Value, 64)
	if err != nil {
		t.Fatalf("%s: value %q is not a number", f.Rule, f.Value)
	}
	if v < *f.Low || v > *f.High {
		t.Errorf("%s: point value %g outside [%g, %g]", f.Rule, v, *f.Low, *f.High)
	}
}

// TestIntervalEndsRoundOutward: an interval written to a thousandth keeps
// the truth it was measured to hold — the lower end rounds down, the upper
// up — and the point value stays inside it (issue 27 d: a failover 0.0015 s
// after the ttl fell outside [0.002, 0.033]).
func TestIntervalEndsRoundOutward(t *testing.T) {
	t.Parallel()
	third := 1.0 / 3
	inside(t, rateFinding(RuleHookDuplicates, 1, 3, 0, ""), third)
	inside(t, waitFinding(RuleHookFirstDelay, 0.0351, ""), 0.0351)
	inside(t, failoverInterval([]failedOver{{lo: 0.0015, hi: 0.0351, at: 0.0351}}, ""), 0.0015)
	inside(t, failoverInterval([]failedOver{{lo: -0.0004, hi: 0.0104, at: 0.0104}}, ""), -0.0004)
	f := interval(RuleWindow, probeWindow, 1.4996, 2.0004)
	if *f.Low != 1.499 || *f.High != 2.001 {
		t.Errorf("interval(1.4996, 2.0004) = [%g, %g], want [1.499, 2.001]", *f.Low, *f.High)
	}
}
