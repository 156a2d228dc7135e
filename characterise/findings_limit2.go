package characterise

import (
	"fmt"
	"slices"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// straddleFinding: whether more than the limit was accepted within one
// window's length — a fixed window admits its limit before a boundary and
// again after it, up to twice; a bucket its capacity and what refilled; a
// sliding log never (its fit says so, over every decision of the burst
// probe). The interval is the most accepted within one window: at least
// those that surely were (send to last answer under a window), at most
// those that could have been (answers and sends a window apart).
func (st *state) straddleFinding() reports.Finding {
	v, limit, w, ok := st.fittedWindow()
	switch bd := st.data[probeBurst]; {
	case bd != nil && bd.verdict == reports.VerdictError:
		return cannot(RuleStraddle, probeBurst, distrusted)
	case !ok:
		return cannot(RuleStraddle, probeStraddle, "the limiter fit named no limit and window to straddle")
	}
	if why := st.fitDoubt(); why != "" { // judged by the fit's algorithm (a sliding log: no) and limit (more than it: yes)
		return cannot(RuleStraddle, probeBurst, why)
	}
	switch v {
	case "sliding window":
		s, p := windowMax(st.data[probeBurst].attempts, w)
		f := found(RuleStraddle, probeBurst, no, fmt.Sprintf("a sliding log admits at most its limit (%g) in any %s: the limiter fit", limit, shortDur(w)),
			fmt.Sprintf("the burst probe's most accepted within %s: %d surely, %d at most", shortDur(w), s, p))
		return withCount(f, s, p)
	case "fixed window", "token bucket":
	default:
		return cannot(RuleStraddle, probeStraddle, "the limiter fit named no window limiter ("+v+")")
	}
	pd := st.data[probeStraddle]
	switch {
	case !st.plan.has(probeStraddle):
		return cannot(RuleStraddle, probeStraddle, fmt.Sprintf("the plan had no time for the straddle probe within --max-time %s", st.plan.MaxTime))
	case pd == nil || pd.sum == nil:
		return cannot(RuleStraddle, probeStraddle, "the straddle probe did not run (the budget was spent, or it was interrupted) or wrote no report")
	case pd.verdict == reports.VerdictError:
		return cannot(RuleStraddle, probeStraddle, distrusted)
	}
	s, p := windowMax(pd.attempts, w)
	ev := fmt.Sprintf("most accepted within one window (%s) of the %s fitted at %g: %d surely, %d at most, of %d sent", shortDur(w), v, limit, s, p, len(pd.attempts))
	if float64(s) > limit {
		return withCount(found(RuleStraddle, probeStraddle, yes, ev), s, p)
	}
	return withCount(cannot(RuleStraddle, probeStraddle, "the stream crossed no boundary with quota left on both sides of it", ev), s, p)
}

// withCount bounds f by the most accepted within one window.
func withCount(f reports.Finding, surely, possibly int) reports.Finding {
	lo, hi := float64(surely), float64(possibly)
	f.Low, f.High = &lo, &hi
	return f
}

// windowMax is the most accepted sends within one window w: surely — a run
// in send order whose first left and whose last answer came within w —
// and possibly — those whose decision (between send and answer) could fall
// in one window [d, d+w) for some d, tried at every answer time.
func windowMax(as []rundir.Attempt, w time.Duration) (surely, possibly int) {
	type span struct{ sent, end time.Time }
	var acc []span
	for _, a := range as {
		if a.Code >= 200 && a.Code < 300 {
			acc = append(acc, span{a.Sent, a.Sent.Add(time.Duration(a.Latency * float64(time.Second)))})
		}
	}
	slices.SortFunc(acc, func(x, y span) int { return x.sent.Compare(y.sent) })
	for i := range acc {
		last := acc[i].end
		for j := i; j < len(acc); j++ {
			if acc[j].end.After(last) {
				last = acc[j].end
			}
			if last.Sub(acc[i].sent) >= w {
				break
			}
			surely = max(surely, j-i+1)
		}
		n := 0
		for _, k := range acc { // decided within [acc[i].end, +w): sent before its end, answered after its start
			if k.sent.Before(acc[i].end.Add(w)) && !k.end.Before(acc[i].end) {
				n++
			}
		}
		possibly = max(possibly, n)
	}
	return surely, possibly
}

// failuresFinding: whether answers that failed (5xx, or none) used quota,
// as the reports' limiter fit told it over the burst probe (see
// reports/README, "What used quota"). Only a service that failed some of
// the probe's requests can tell: characterise does not make it fail.
func (st *state) failuresFinding() reports.Finding {
	pd := st.data[probeBurst]
	switch {
	case pd == nil || pd.sum == nil:
		return cannot(RuleFailuresUseQuota, probeBurst, "the burst probe wrote no report")
	case pd.verdict == reports.VerdictError:
		return cannot(RuleFailuresUseQuota, probeBurst, distrusted)
	}
	alg := pd.sum.RateLimit.Algorithm
	failed := int64(0)
	for _, a := range pd.attempts {
		if a.Code >= 500 || a.Code == 0 {
			failed++
		}
	}
	ev := append([]string{fmt.Sprintf("%d of the burst probe's %d requests failed (5xx, or no answer)", failed, len(pd.attempts))}, alg.Evidence...)
	switch q := alg.FailuresUseQuota; {
	case q == yes || q == no:
		return found(RuleFailuresUseQuota, probeBurst, q, ev...)
	case failed == 0 || q == "":
		return cannot(RuleFailuresUseQuota, probeBurst, "no request failed: the service answered every one 2xx or 429", ev...)
	default:
		return cannot(RuleFailuresUseQuota, probeBurst, "the limiter fit could not tell whether failed answers used quota ("+q+")", ev...)
	}
}
