package limitfit_test

import (
	"math"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports/limitfit"
	"github.com/msgload/msgload/reports/limitfit/limitfittest"
)

// TestNoRivalNamedByChance: characterise's burst probe (2 sends, a second's
// pause, 64 at 100/s, a recovery trace at 5/s, a second burst of 52 at
// 100/s), each answered in 0.5 ms, against a fixed window of 20 per 2 s
// turning over 1.665 s into every other second. A fixed window of 18 per
// 1 s turning over at 0.665 s makes every decision alike, at the answer
// times and at the send times: the trace cannot tell the two apart (the
// fit named 18 per 1 s, the smaller window). The fit must say cannot tell,
// naming both, never the wrong one alone.
func TestNoRivalNamedByChance(t *testing.T) {
	lim := limitfittest.Phased{Limiter: &limitfittest.Fixed{Limit: 20, W: 2, Cur: math.Inf(-1)}, Phase: 1.665}
	var rs []seen
	for _, seg := range [][3]float64{{100, 0, 0.02}, {100, 1.02, 1.66}, {5, 1.66, 9.7}, {100, 10.67, 11.19}} {
		for _, x := range limitfittest.Steady(seg[0], seg[1], seg[2]) {
			rs = append(rs, seen{x, x + 0.0004, x + 0.0005})
		}
	}
	alg := limitfit.Classify(map[string][]limitfit.Request{"c": decideInOrder(lim, rs)}, []string{"c"}, 0, 0)
	ev := strings.Join(alg.Evidence, "\n")
	if alg.Verdict != limitfit.CannotTell || !strings.Contains(ev, "20 per 2s") || !strings.Contains(ev, "18 per 1s") {
		t.Errorf("%s %g per %gs, want cannot tell naming 20 per 2s and 18 per 1s\n%s", alg.Verdict, alg.Limit, alg.Window, ev)
	}
}
