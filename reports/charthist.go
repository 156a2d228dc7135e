package reports

import (
	"math"
	"math/bits"
)

// A chart's time bucket draws its request latency's p50, p95 and p99: a
// point of a line, not a figure of summary.json (those stay exact, hist.go
// and bounded.go). A chartHist counts the bucket's values, in µs, in a fixed
// array: exact below chartExact µs, above it chartSub buckets a power of two,
// so that a point is the nearest-rank value within 1/(2·chartSub) of it
// (chartResolution). Its size is the same whatever the values' spread or
// count (issue 23: the exact hists a bucket kept grew with the spread, pages
// of counts made as values landed in them — most of the report's live heap).
//
// A request with no answer is censored (unanswered, analyze.go): counted in
// cens, ranked after every answered value, as requests.latency ranks it. A
// point whose rank falls among them is not known: NaN, a gap in the line.
type chartHist struct {
	counts   [chartLen]uint32
	n        int64
	cens     int64  // requests with no answer: latency only more than their wait
	min, max uint64 // µs: a point never lies outside the values
}

const (
	chartSub   = 32           // buckets a power of two of µs
	chartExact = 2 * chartSub // µs below which each µs is its own bucket
	// chartLen buckets cover every value below 2^32 µs (71 minutes: powers
	// of two 2^6 to 2^31 after the exact ones); a longer one counts in the
	// last bucket.
	chartLen = 28 * chartSub
)

// chartResolution is the relative resolution of a chart's latency point:
// within 1/64 (1.6 %) of the exact nearest-rank value, exact below 64 µs.
const chartResolution = 1.0 / (2 * chartSub)

// chartBucket is the bucket of a value in µs; buckets ascend with the values.
func chartBucket(us uint64) int {
	us = min(us, math.MaxUint32)
	if us < chartExact {
		return int(us)
	}
	s := bits.Len64(us) - 6 // us>>s in [chartSub, chartExact)
	return s*chartSub + int(us>>s)
}

// chartMid is the middle of bucket b's values, in µs: at most half its width
// (2^s, the bucket's values being at least chartSub·2^s) from any of them.
func chartMid(b int) uint64 {
	if b < chartExact {
		return uint64(b)
	}
	s := b/chartSub - 1
	lo := uint64(b-s*chartSub) << s
	return lo + (uint64(1)<<s-1)/2
}

func (h *chartHist) observe(sec float64) {
	if math.IsNaN(sec) {
		return
	}
	us := toMicros(sec)
	if h.n == 0 || us < h.min {
		h.min = us
	}
	h.max = max(h.max, us)
	h.counts[chartBucket(us)]++
	h.n++
}

// censor counts a request with no answer.
func (h *chartHist) censor() { h.cens++ }

// quantile is the nearest-rank value at q (0..100) in seconds, within
// chartResolution, over the answered and the censored values, the censored
// ranked last; NaN with no value or when the rank falls among the censored
// (a gap in the line, never 0 nor the wait).
func (h *chartHist) quantile(q float64) float64 {
	if h.n == 0 {
		return math.NaN()
	}
	r := int64(rank(q, int(h.n+h.cens)))
	if r > h.n {
		return math.NaN()
	}
	for b, k := range h.counts {
		if r -= int64(k); r <= 0 {
			return float64(min(max(chartMid(b), h.min), h.max)) / 1e6
		}
	}
	return float64(h.max) / 1e6
}
