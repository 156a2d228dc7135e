package limitfit

import (
	"fmt"
	"math"
	"math/bits"
)

// rival is the best candidate tried that names another limiter than top
// (another model, limit, window or capacity), fits as well within the answer
// times (as many contradictions, a window as round, as much the scenario's),
// and is ranked below top only by the send times alone; ok false when none.
// Candidates of a model dropped from fits (oneLimiter) are not rivals.
func (f *fitter) rival(top candidate, fits []candidate) (r candidate, ok bool) {
	inFits := map[string]bool{}
	for _, c := range fits {
		inFits[c.algo] = true
	}
	for _, c := range f.tried {
		if !inFits[c.algo] || sameLimiter(c, top) || c.bad != top.bad || c.rank != top.rank || c.scenario != top.scenario {
			continue
		}
		if !ok || c.better(r) {
			r, ok = c, true
		}
	}
	return r, ok
}

// sameLimiter: c and o name one limiter (a window's phase, or a bucket's
// rate a hair apart written alike, is no other answer).
func sameLimiter(c, o candidate) bool {
	return c.algo == o.algo && c.limit == o.limit && c.window == o.window && c.capacity == o.capacity
}

// significant says whether top's lead at the send times alone (top.tight
// against rival.tight contradictions) is more than chance: a sign test over
// the decisions one of the two contradicts and the other not (discordant),
// the lead more than twice its standard deviation (one-sided p ≈ 0.03; 0
// against 5 is the least that counts). Within the answer times both fit; at
// the send times each contradicts the decisions the jitter put on its wrong
// side, so a lead of a decision or two is where the jitter fell, not which
// limiter decided; with no lead at all the smaller window won, and a real
// fixed window of 20 per 2 s was named 18 per 1 s (TestNoRivalNamedByChance).
func significant(top, rival candidate) bool {
	lead := float64(rival.tight - top.tight)
	return lead > 2*math.Sqrt(float64(discordant(top, rival)))
}

// discordant is how many decisions at the send times one of a and b
// contradicts and the other not: from their sets when both have one, else
// their sum, its upper bound (the test then asks more of the lead).
func discordant(a, b candidate) int64 {
	if len(a.tset) == 0 || len(a.tset) != len(b.tset) {
		return a.tight + b.tight
	}
	var n int
	for i := range a.tset {
		n += bits.OnesCount64(a.tset[i] ^ b.tset[i])
	}
	return int64(n)
}

// tightSet is, for a short trace, the set of decisions at the send times
// that contradict limit l, from the bounds tightBad just filled (f.tlow then
// f.tup: one entry per decision at the send times); nil for a longer trace
// (a set per candidate would cost a bit per decision each).
func (f *fitter) tightSet(l int) []uint64 {
	n := len(f.tlow) + len(f.tup)
	if n >= shortTrace {
		return nil
	}
	set := make([]uint64, (n+63)/64)
	for i, v := range f.tlow {
		if v > l {
			set[i/64] |= 1 << (i % 64)
		}
	}
	for j, v := range f.tup {
		if i := len(f.tlow) + j; v <= l {
			set[i/64] |= 1 << (i % 64)
		}
	}
	return set
}

// unseparated says cannot tell (the evidence names both) when a rival of top
// fits as well and top leads it at the send times by no more than chance.
func (f *fitter) unseparated(top candidate, fits []candidate, alg *Result) bool {
	r, ok := f.rival(top, fits)
	if !ok || significant(top, r) {
		return false
	}
	alg.Evidence = append(alg.Evidence, fmt.Sprintf("%s %s or %s %s fit equally well (%d contradictions each within the answer times); at the send times alone the first contradicts %d, the second %d, of %d the two judge differently: a lead within chance (it must exceed twice the square root of those), so the traffic did not tell them apart",
		top.algo, top.desc, r.algo, r.desc, top.bad, top.tight, r.tight, discordant(top, r)))
	return true
}
