package reports

import (
	"math"
	"slices"
)

// hist keeps every recorded duration (seconds, 8 bytes each) so that the
// percentiles it gives are exact: the nearest-rank value of the sorted values,
// never an estimate. The values are sorted once, when percentiles are asked.
type hist struct {
	v      []float64
	sum    float64
	max    float64
	sorted bool
}

func newHist() *hist { return &hist{sorted: true} }

// observe records a duration in seconds; a negative value (clocks) records as 0.
func (h *hist) observe(sec float64) {
	if math.IsNaN(sec) {
		return
	}
	if sec < 0 {
		sec = 0
	}
	if len(h.v) == 0 || sec > h.max {
		h.max = sec
	}
	h.sum += sec
	h.v = append(h.v, sec)
	h.sorted = false
}

func (h *hist) count() int64 {
	if h == nil {
		return 0
	}
	return int64(len(h.v))
}

// rank is the 1-based nearest rank of percentile q (0..100) among n values:
// ceil(q/100·n), at least 1 and at most n.
func rank(q float64, n int) int {
	// q·n first, then /100: for a whole q the product is exact and the quotient
	// correctly rounded, so the ceiling is never a rank off (q/100·n is:
	// 0.29·100 = 29.000000000000004).
	r := int(math.Ceil(q * float64(n) / 100))
	return min(max(r, 1), n)
}

// quantile returns the nearest-rank value at q (0..100) in seconds, 0 when
// nothing was recorded (percentiles() reports that as no data).
func (h *hist) quantile(q float64) float64 {
	if len(h.v) == 0 {
		return 0
	}
	if !h.sorted {
		slices.Sort(h.v)
		h.sorted = true
	}
	return round6(h.v[rank(q, len(h.v))-1])
}

func (h *hist) percentiles() Percentiles {
	if h == nil || len(h.v) == 0 {
		return Percentiles{}
	}
	return Percentiles{
		Count: int64(len(h.v)),
		P50:   h.quantile(50),
		P90:   h.quantile(90),
		P95:   h.quantile(95),
		P99:   h.quantile(99),
		Max:   round6(h.max),
		Mean:  round6(h.sum / float64(len(h.v))),
	}
}

// round6 keeps microsecond precision so that summary.json stays readable and
// stable across platforms.
func round6(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*1e6) / 1e6
}

// cdf is the cumulative distribution: for each distinct value (seconds,
// ascending), the share of values at or below it.
func (h *hist) cdf() [][2]float64 {
	n := len(h.v)
	if n == 0 {
		return nil
	}
	if !h.sorted {
		slices.Sort(h.v)
		h.sorted = true
	}
	var pts [][2]float64
	for i, v := range h.v {
		if i+1 < n && h.v[i+1] == v {
			continue
		}
		pts = append(pts, [2]float64{round6(v), float64(i+1) / float64(n)})
	}
	return pts
}
