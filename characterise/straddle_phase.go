package characterise

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/msgload/msgload/rundir"
)

// straddleLead is the least time between planning the straddle's start and
// the start: the harness's setup (a token, a connection) comes before it.
const straddleLead = 2 * time.Second

// clockGrain is how much before its send a service may date a request
// (nginx keeps time in milliseconds): the reports' limiter fit allows the
// same.
const clockGrain = time.Millisecond

// windowPhase reads where a fixed window of w turns over off the burst
// probe's sends: every recovery arc (recoveryArcs) holds the phase, modulo
// w, and their intersection is it, given as an instant b (its middle;
// boundaries at b + k·w) and the half of its width. ok is false when no arc
// bounds it or the arcs do not meet (the window is not a fixed one of w).
func windowPhase(as []rundir.Attempt, w time.Duration) (b time.Time, half time.Duration, ok bool) {
	arcs := recoveryArcs(as, w)
	if len(arcs) == 0 {
		return time.Time{}, 0, false
	}
	// from the narrowest: each other arc is the same phase some windows away
	slices.SortFunc(arcs, func(x, y arc) int { return cmp.Compare(x.hi.Sub(x.lo), y.hi.Sub(y.lo)) })
	lo, hi := arcs[0].lo, arcs[0].hi
	for _, a := range arcs[1:] {
		k := time.Duration(math.Round(float64(midTime(lo, hi).Sub(midTime(a.lo, a.hi))) / float64(w)))
		lo, hi = laterOf(lo, a.lo.Add(k*w)), earlierOf(hi, a.hi.Add(k*w))
		if !lo.Before(hi) {
			return time.Time{}, 0, false
		}
	}
	return midTime(lo, hi), hi.Sub(lo) / 2, true
}

// arc is a stretch of time a window's boundary lies in.
type arc struct{ lo, hi time.Time }

// recoveryArcs are the arcs shorter than w the recoveries put a boundary
// in. An acceptance sent after a refusal was answered was decided after it
// (whatever the network did to either), and a fixed window refuses until
// its boundary: a boundary lies after the refusal's send (less the service
// clock's grain) and at or before the acceptance's answer — the latest such
// refusal's, for the narrowest arc.
func recoveryArcs(as []rundir.Attempt, w time.Duration) []arc {
	type span struct{ sent, end time.Time }
	var acc, ref []span
	for _, a := range as {
		s := span{a.Sent, a.Sent.Add(time.Duration(a.Latency * float64(time.Second)))}
		switch {
		case is2xx(a.Code):
			acc = append(acc, s)
		case a.Code == 429:
			ref = append(ref, s)
		}
	}
	var arcs []arc
	for _, a := range acc {
		var last *span
		for j, r := range ref {
			if r.end.Before(a.sent) && (last == nil || r.sent.After(last.sent)) {
				last = &ref[j]
			}
		}
		if last != nil && a.end.Sub(last.sent.Add(-clockGrain)) < w {
			arcs = append(arcs, arc{last.sent.Add(-clockGrain), a.end})
		}
	}
	return arcs
}

func midTime(a, b time.Time) time.Time { return a.Add(b.Sub(a) / 2) }

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earlierOf(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// straddleStart is when the straddle's stream starts against a real target
// whose limiter the fit named a fixed window: its middle on the first
// boundary (read off the burst probe: windowPhase) at least the cool-down
// and straddleLead after now. ok false against the embedded target (each
// probe has a new simulator, whose window starts with it) or when the
// burst probe phased no boundary.
func (st *state) straddleStart(now time.Time, cool time.Duration) (start time.Time, why string, ok bool) {
	v, _, w, fitted := st.fittedWindow()
	if !fitted || v != "fixed window" || st.base.Target.Embedded {
		return time.Time{}, "", false
	}
	b, half, ok := windowPhase(st.data[probeBurst].attempts, w)
	if !ok {
		return time.Time{}, "", false
	}
	toMid := streamOf(w) / 2
	earliest := now.Add(cool + straddleLead + toMid)
	k := int64(math.Ceil(float64(earliest.Sub(b)) / float64(w)))
	boundary := b.Add(time.Duration(k) * w)
	why = fmt.Sprintf("its middle on the window's boundary at %s (±%s: the burst probe's recoveries put one at %s)",
		boundary.UTC().Format("15:04:05.000"), half.Round(time.Millisecond), b.UTC().Format("15:04:05.000"))
	return boundary.Add(-toMid), why, true
}
