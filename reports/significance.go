package reports

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/msgload/msgload/rundir"
)

// Samples are the raw latencies of a run, in seconds, sorted ascending: the
// values summary.json's latency percentiles are computed from, and what
// compare's significance tests read.
type Samples struct {
	Request  []float64 // every request: requests.latency; +Inf for each one with no answer (censored), ranked last
	Delivery []float64 // every accepted message: delivery.latency; +Inf for each censored one (no final status by the deadline), ranked last
}

// Run is a run's summary and, when the run's raw files are at hand, its raw
// latencies (nil when only summary.json could be read: compare then cannot
// test a latency change for significance).
type Run struct {
	*Summary
	Samples *Samples
}

// errNoRawFiles says a directory has no attempts.jsonl to take latencies from.
var errNoRawFiles = errors.New("no raw files")

// ReadSamples reads the raw latencies of the run in dir from its attempts.jsonl
// and events.jsonl, through the same analysis Analyze makes (the joins of
// attempts and callbacks are the report's, so the values are exactly those
// behind summary.json's percentiles).
func ReadSamples(dir string) (*Samples, error) {
	if _, err := os.Stat(filepath.Join(dir, rundir.AttemptsFile)); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errNoRawFiles, dir, err)
	}
	a, err := analyzeKeep(os.DirFS(dir), dir, true, nil) // the raw request latencies
	if err != nil {
		return nil, err
	}
	s := &Samples{Request: a.reqLat.v, Delivery: a.delivery.v}
	slices.Sort(s.Request) // already sorted by the percentiles; cheap when so
	slices.Sort(s.Delivery)
	for range a.delivery.cens {
		s.Delivery = append(s.Delivery, math.Inf(1))
	}
	for range a.reqLat.cens { // the requests with no answer, ranked last as in requests.latency
		s.Request = append(s.Request, math.Inf(1))
	}
	return s, nil
}

// compare's tests (reports/README.md, "compare"): Mann–Whitney U on the whole
// distribution, a distribution-free interval for the change of each
// percentile, Fisher's exact test for counts drawn at random. All are exact
// or conservative at any sample size; none resamples, so the same two runs
// give the same figures every time.

// exactMannWhitneyMax is the largest size of each run for which the
// Mann–Whitney p-value is computed from the exact permutation distribution
// (with the runs' ties); above it the normal approximation with the tie
// correction and a continuity correction (at 30 and 30 it is within a factor
// 1.5 of the exact p-value down to 1e-4, and above it: conservative).
const exactMannWhitneyMax = 30

// mannWhitney is the result of the Mann–Whitney U test of NEW against BASE.
type mannWhitney struct {
	U     float64 // pairs (base, new) with new > base, ties counting ½
	Pairs float64 // n_base · n_new
	P     float64 // two-sided p-value of "neither tends to be larger"
	Exact bool    // P from the exact permutation distribution
}

// slower is the share of pairs where NEW is the slower (ties ½): above ½
// NEW tends to be slower.
func (m mannWhitney) slower() float64 { return m.U / m.Pairs }

// method names how P was computed, for the notes.
func (m mannWhitney) method() string {
	if m.Exact {
		return "exact"
	}
	return "normal approximation"
}

// mannWhitneyTest tests two sorted, non-empty samples (+Inf allowed: a
// censored value, tied with the other censored ones and above every value).
func mannWhitneyTest(base, new []float64) mannWhitney {
	ranks, groups := midRanks2(base, new)
	n1, n2 := len(base), len(new)
	var r2 float64 // twice the rank sum of NEW
	for i, inNew := range groups {
		if inNew {
			r2 += ranks[i]
		}
	}
	m := mannWhitney{U: r2/2 - float64(n2*(n2+1))/2, Pairs: float64(n1) * float64(n2)}
	if n1 <= exactMannWhitneyMax && n2 <= exactMannWhitneyMax {
		m.P, m.Exact = exactRankSumP(ranks, n2, r2), true
	} else {
		m.P = normalRankSumP(m.U, n1, n2, ranks)
	}
	return m
}

// midRanks2 merges two sorted samples and returns each value's doubled
// mid-rank (an integer: tied values share the mean of their ranks) and
// whether it came from the second sample, in merged order.
func midRanks2(a, b []float64) (ranks []float64, inB []bool) {
	n := len(a) + len(b)
	vals := make([]float64, 0, n)
	inB = make([]bool, 0, n)
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		if j == len(b) || (i < len(a) && a[i] <= b[j]) {
			vals, inB = append(vals, a[i]), append(inB, false)
			i++
		} else {
			vals, inB = append(vals, b[j]), append(inB, true)
			j++
		}
	}
	ranks = make([]float64, n)
	for s := 0; s < n; {
		e := s + 1
		for e < n && vals[e] == vals[s] {
			e++
		}
		for k := s; k < e; k++ {
			ranks[k] = float64(s + 1 + e) // 2 × the mean of ranks s+1 … e
		}
		s = e
	}
	return ranks, inB
}

// exactRankSumP is the two-sided p-value of a doubled rank sum r2 of k values
// drawn without replacement from the doubled mid-ranks: the share of the
// C(N, k) ways to choose k of them whose sum is as far in the same tail,
// doubled (at most 1). Counted by dynamic programming over the values.
func exactRankSumP(ranks []float64, k int, r2 float64) float64 {
	maxSum := 0
	for _, r := range ranks {
		maxSum += int(r)
	}
	// ways[j][s]: ways to choose j of the values seen so far with sum s.
	ways := make([][]float64, k+1)
	for j := range ways {
		ways[j] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for i, r := range ranks {
		ri := int(r)
		for j := min(i+1, k); j >= 1; j-- {
			for s := maxSum; s >= ri; s-- {
				ways[j][s] += ways[j-1][s-ri]
			}
		}
	}
	var below, above, total float64
	obs := int(math.Round(r2))
	for s, w := range ways[k] {
		total += w
		if s <= obs {
			below += w
		}
		if s >= obs {
			above += w
		}
	}
	return math.Min(1, 2*math.Min(below, above)/total)
}

// normalRankSumP is the two-sided p-value of U by the normal approximation,
// with the variance corrected for ties and a continuity correction of ½.
func normalRankSumP(u float64, n1, n2 int, ranks []float64) float64 {
	n := float64(n1 + n2)
	var ties float64 // Σ (t³ − t) over groups of tied values
	for s := 0; s < len(ranks); {
		e := s + 1
		for e < len(ranks) && ranks[e] == ranks[s] {
			e++
		}
		t := float64(e - s)
		ties += t*t*t - t
		s = e
	}
	f1, f2 := float64(n1), float64(n2)
	variance := f1 * f2 / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return 1 // every value tied
	}
	z := (math.Abs(u-f1*f2/2) - 0.5) / math.Sqrt(variance)
	if z <= 0 {
		return 1
	}
	return math.Erfc(z / math.Sqrt2)
}

// quantileBounds are the ranks (1-based) of the order statistics that bound
// the population's q-quantile (q in (0, 1)) with confidence conf from n
// values, distribution-free: the number of values at or below the quantile is
// Binomial(n, q), so P(x₍l₎ ≤ ξ_q ≤ x₍u₎) ≥ P(l ≤ B ≤ u − 1), each side
// missing with at most (1 − conf)/2. lo is 0 when even the smallest value
// cannot bound it from below (−∞), hi n+1 when even the largest cannot bound
// it from above (+∞): too few values for that quantile.
func quantileBounds(n int, q, conf float64) (lo, hi int) {
	alpha := (1 - conf) / 2
	cdf := func(k int) float64 { return binomialCDF(k, n, q) }
	// lo: the largest l with P(B ≤ l−1) ≤ alpha (x₍l₎ above ξ_q that seldom).
	lo = searchInts(n+1, func(l int) bool { return l > 0 && cdf(l-1) > alpha }) - 1
	// hi: the smallest u with P(B ≤ u−1) ≥ 1 − alpha.
	hi = searchInts(n+1, func(u int) bool { return u > 0 && cdf(u-1) >= 1-alpha })
	return max(lo, 0), hi
}

// binomialCDF is P(B ≤ k) for B ~ Binomial(n, p): the regularized incomplete
// beta function I₁₋ₚ(n−k, k+1). Written here (as gonum's distuv computes it)
// so that the binary links no statistics library for one function;
// TestBinomialCDF holds it to distuv.
func binomialCDF(k, n int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	}
	return regIncBeta(float64(n-k), float64(k+1), 1-p)
}

// regIncBeta is I_x(a, b) by its continued fraction (modified Lentz), on the
// side of x where it converges fast (Numerical Recipes §6.4).
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction evaluates the continued fraction of I_x(a, b); it needs about
// √max(a, b) terms.
func betaFraction(a, b, x float64) float64 {
	const eps, tiny = 1e-15, 1e-300
	clamp := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/clamp(1-(a+b)*x/(a+1))
	h := d
	for m := 1.0; m < 1e7; m++ {
		num := m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m))
		d = 1 / clamp(1+num*d)
		c = clamp(1 + num/c)
		h *= d * c
		num = -(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1))
		d = 1 / clamp(1+num*d)
		c = clamp(1 + num/c)
		step := d * c
		h *= step
		if math.Abs(step-1) < eps {
			break
		}
	}
	return h
}

// searchInts is the smallest i in [0, n) with f(i) true (f monotone), or n.
func searchInts(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f(m) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// orderStat is the value at 1-based rank r of sorted: −∞ below rank 1, +∞
// past n.
func orderStat(sorted []float64, r int) float64 {
	switch {
	case r < 1:
		return math.Inf(-1)
	case r > len(sorted):
		return math.Inf(1)
	}
	return sorted[r-1]
}

// shiftInterval is the interval of the change NEW − BASE of the q-th
// percentile (0..100) with confidence at least conf: each run's own
// distribution-free interval (quantileBounds) at √conf, so both hold together
// with probability conf at least (the runs are independent), and the change
// lies between NEW's lowest minus BASE's highest and NEW's highest minus
// BASE's lowest. Unbounded (±Inf) where a run has too few values to bound its
// percentile; a censored value (+Inf) is above every value. base and new are
// sorted and not empty.
func shiftInterval(base, new []float64, q, conf float64) (lo, hi float64) {
	each := math.Sqrt(conf)
	bl, bh := quantileBounds(len(base), q/100, each)
	nl, nh := quantileBounds(len(new), q/100, each)
	return diffInf(orderStat(new, nl), orderStat(base, bh)), -diffInf(orderStat(base, bl), orderStat(new, nh))
}

// diffInf is a − b for a lower bound of a change: unbounded below (−∞)
// when b is +∞ or a is −∞, whatever the other (never NaN).
func diffInf(a, b float64) float64 {
	if math.IsInf(b, 1) || math.IsInf(a, -1) {
		return math.Inf(-1)
	}
	return a - b
}

// fisherExact is the two-sided p-value of Fisher's exact test that a of n1
// and b of n2 come from one rate: the probability, with the margins fixed,
// of a table no more likely than the one seen.
func fisherExact(a, n1, b, n2 int64) float64 {
	k, n := a+b, n1+n2
	lo, hi := max(0, k-n2), min(k, n1)
	logP := func(x int64) float64 { // hypergeometric: x of the k in the first group
		return lchoose(n1, x) + lchoose(n2, k-x) - lchoose(n, k)
	}
	obs := logP(a)
	var p float64
	for x := lo; x <= hi; x++ {
		if lp := logP(x); lp <= obs+1e-7 {
			p += math.Exp(lp)
		}
	}
	return math.Min(1, p)
}

// lchoose is log C(n, k).
func lchoose(n, k int64) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
