package limitfit_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports/limitfit"
	"github.com/msgload/msgload/reports/limitfit/limitfittest"
)

// seen is one request as the service saw it: sent and answered (s after
// t0), and the moment it was decided in between.
type seen struct{ sent, at, answered float64 }

// decideInOrder has lim decide reqs in the order the service saw them and
// returns them as the fit reads them, by send time.
func decideInOrder(lim limitfittest.Limiter, reqs []seen) []limitfit.Request {
	order := slices.Clone(reqs)
	slices.SortStableFunc(order, func(a, b seen) int { return cmpFloat(a.at, b.at) })
	base := t0.UnixNano()
	var out []limitfit.Request
	for _, r := range order {
		code := int16(200)
		if !lim.Allow(r.at) {
			code = 429
		}
		out = append(out, limitfit.Request{Sent: base + int64(r.sent*1e9), Code: code, RetryAfter: -1, Latency: int64((r.answered - r.sent) * 1e9)})
	}
	slices.SortStableFunc(out, func(a, b limitfit.Request) int { return int(a.Sent - b.Sent) })
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// probeShape is characterise's burst probe against a limiter of 20 per 2 s:
// 2 sends, a pause of a second, 64 at 100/s, a recovery trace at 5/s, a
// pause, a second burst of 52 at 100/s — each answered in 0.5 ms except
// the second burst's, which come back in clumps: two of its sends wait
// 54 ms on the way, so the service decides the send after each before them
// (and answers it 30 ms late, with the clump).
func probeShape() []seen {
	var rs []seen
	add := func(ts []float64, late map[int]bool) {
		for i, t := range ts {
			switch {
			case late[i]: // held on the way: decided after the next sends
				rs = append(rs, seen{t, t + 0.054, t + 0.06})
			case late[i-1]: // decided at once, its answer held with the clump
				rs = append(rs, seen{t, t + 0.0005, t + 0.03})
			default:
				rs = append(rs, seen{t, t + 0.0004, t + 0.0005})
			}
		}
	}
	add(limitfittest.Steady(100, 0, 0.02), nil)
	add(limitfittest.Steady(100, 1.02, 1.66), nil)
	add(limitfittest.Steady(5, 1.66, 9.7), nil)
	add(limitfittest.Steady(100, 10.67, 11.19), map[int]bool{17: true, 19: true})
	return rs
}

// TestFixedPhaseOutOfOrder: a fixed window of 20 per 2 s turning over
// 0.3 s into every other second. Its one true recovery (the trace's first
// acceptance) puts the boundary in (2.26 s, 2.46 s]; the second burst's
// clumped answers make two false ones (a refusal sent before an acceptance
// the service decided first), which agree with each other. The fit must
// still find the window's phase and name it, not a sliding log of 20 per 1 s
// (which contradicts only the trace's two refusals at 2.06 s and 2.26 s).
func TestFixedPhaseOutOfOrder(t *testing.T) {
	lim := limitfittest.Phased{Limiter: &limitfittest.Fixed{Limit: 20, W: 2, Cur: math.Inf(-1)}, Phase: 0.3}
	recs := decideInOrder(lim, probeShape())
	alg := limitfit.Classify(map[string][]limitfit.Request{"c": recs}, []string{"c"}, 0, 0)
	if alg.Verdict != limitfit.Fixed || alg.Limit != 20 || alg.Window != 2 {
		t.Errorf("%s %g per %gs, want fixed window 20 per 2s\n%q", alg.Verdict, alg.Limit, alg.Window, alg.Evidence)
	}
}

// readTrace reads one client's decisions from testdata: sent (unix ns),
// status, latency (ns) a line.
func readTrace(t *testing.T, name string) []limitfit.Request {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []limitfit.Request
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		var sent, lat int64
		var code int16
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "%d,%d,%d", &sent, &code, &lat); err != nil {
			t.Fatalf("%s: %q: %v", name, line, err)
		}
		out = append(out, limitfit.Request{Sent: sent, Code: code, RetryAfter: -1, Latency: lat})
	}
	return out
}

// TestRealFixedWindowTraces: characterise's burst probe against the
// simulator's fixed window of 20 per 2 s served over HTTP, recorded on a
// busy machine. "clumped": the second burst's answers came back out of
// order (false recoveries outvoted the true one: named a sliding log of 20
// per 1 s); "loaded": the one clear recovery, from the 5/s trace, left an
// arc of 400 ms with the boundary at its end (the middle missed it, and a
// window of 10 s refined instead: named 51 per 10 s). Each must be the
// fixed window of 20 per 2 s, or cannot tell — never another limiter.
func TestRealFixedWindowTraces(t *testing.T) {
	for _, name := range []string{"fixed20per2s-clumped.csv", "fixed20per2s-loaded.csv"} {
		t.Run(name, func(t *testing.T) {
			alg := limitfit.Classify(map[string][]limitfit.Request{"c": readTrace(t, name)}, []string{"c"}, 0, 0)
			if alg.Verdict != limitfit.CannotTell && (alg.Verdict != limitfit.Fixed || alg.Limit != 20 || alg.Window != 2) {
				t.Errorf("%s %g per %gs, want fixed window 20 per 2s or cannot tell\n%q", alg.Verdict, alg.Limit, alg.Window, alg.Evidence)
			}
			if alg.Verdict == limitfit.CannotTell {
				t.Logf("cannot tell: %q", alg.Evidence)
			}
		})
	}
}
