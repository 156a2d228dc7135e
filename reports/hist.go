package reports

import (
	"math"
	"slices"
)

// hist keeps every recorded duration so that the percentiles it gives are
// exact: the nearest-rank value of the sorted values, never an estimate. The
// values are sorted once, when percentiles are asked.
//
// A compact hist (the per-request ones: a value for every request of the run)
// keeps each value rounded to the microsecond as a uint32 (4 bytes instead of
// 8): what it reports is the same to the bit, since a percentile is reported
// rounded to the microsecond (round6) and rounding keeps the order, and the
// sum and maximum are kept from the values themselves. It cannot give the raw
// values (ReadSamples, cdf) and turns into a float hist of rounded values for
// a value of 4295 s or more.
//
// A compact hist that grows past countFrom values keeps, from then on, a
// count for each microsecond below countBelow (1.05 s) in pages allocated as
// values land in them, and only the values from countBelow up one by one: its
// memory no longer grows with the requests of a run whose latencies stay
// under a second, and its percentiles are the same nearest-rank values (all
// counted values are below all listed ones).
type hist struct {
	v       []float64
	us      []uint32 // compact: the values in µs, rounded (from countBelow only, once counted)
	counted *usCounts
	compact bool
	sum     float64
	max     float64
	sorted  bool
}

const (
	countFrom  = 1 << 14 // values before a compact hist counts
	countPage  = 1 << 12 // µs a page of counts covers (16 KiB)
	countBelow = 1 << 20 // µs counted; values from it are listed
)

// usCounts counts values by the microsecond below countBelow.
type usCounts struct {
	pages [countBelow / countPage]*[countPage]uint32
	n     int
}

func (c *usCounts) add(us uint32) {
	p := &c.pages[us/countPage]
	if *p == nil {
		*p = new([countPage]uint32)
	}
	(*p)[us%countPage]++
	c.n++
}

// nth returns the r-th smallest counted value (1-based, r ≤ n).
func (c *usCounts) nth(r int) uint32 {
	for i, p := range c.pages {
		if p == nil {
			continue
		}
		for j, k := range p {
			if r -= int(k); r <= 0 {
				return uint32(i*countPage + j)
			}
		}
	}
	panic("reports: rank past the counted values")
}

// toCounts turns a compact hist's list into counts and the values from
// countBelow up.
func (h *hist) toCounts() {
	c := new(usCounts)
	big := h.us[:0]
	for _, u := range h.us {
		if u < countBelow {
			c.add(u)
		} else {
			big = append(big, u)
		}
	}
	h.us, h.counted = slices.Clip(big), c
}

func newHist() *hist { return &hist{sorted: true} }

// newCompactHist is a hist for the per-request values (see hist).
func newCompactHist() *hist { return &hist{sorted: true, compact: true} }

// observe records a duration in seconds; a negative value (clocks) records as 0.
func (h *hist) observe(sec float64) {
	if math.IsNaN(sec) {
		return
	}
	if sec < 0 {
		sec = 0
	}
	if h.n() == 0 || sec > h.max {
		h.max = sec
	}
	h.sum += sec
	h.sorted = false
	if h.compact {
		if us := math.Round(sec * 1e6); us < 1<<32 {
			switch {
			case h.counted != nil && us < countBelow:
				h.counted.add(uint32(us))
			default:
				h.us = append(h.us, uint32(us))
				if h.counted == nil && len(h.us) >= countFrom {
					h.toCounts()
				}
			}
			return
		}
		// Out of uint32's range: the rounded values as seconds from now on
		// (round6 of one is itself).
		h.compact = false
		h.v = make([]float64, 0, h.n()+1)
		if c := h.counted; c != nil {
			for i, p := range c.pages {
				for j := 0; p != nil && j < countPage; j++ {
					for range p[j] {
						h.v = append(h.v, float64(i*countPage+j)/1e6)
					}
				}
			}
		}
		for _, u := range h.us {
			h.v = append(h.v, float64(u)/1e6)
		}
		h.us, h.counted = nil, nil
	}
	h.v = append(h.v, sec)
}

// n is how many values were recorded.
func (h *hist) n() int {
	n := len(h.v) + len(h.us)
	if h.counted != nil {
		n += h.counted.n
	}
	return n
}

func (h *hist) count() int64 {
	if h == nil {
		return 0
	}
	return int64(h.n())
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
	n := h.n()
	if n == 0 {
		return 0
	}
	if !h.sorted {
		slices.Sort(h.v)
		slices.Sort(h.us)
		h.sorted = true
	}
	if c := h.counted; c != nil {
		// The counted values come before the listed ones.
		if r := rank(q, n); r <= c.n {
			return float64(c.nth(r)) / 1e6
		} else {
			return float64(h.us[r-c.n-1]) / 1e6
		}
	}
	if h.us != nil {
		return float64(h.us[rank(q, n)-1]) / 1e6 // round6 of it, exactly
	}
	return round6(h.v[rank(q, n)-1])
}

func (h *hist) percentiles() percentiles {
	if h == nil || h.n() == 0 {
		return percentiles{}
	}
	return percentiles{
		Count: int64(h.n()),
		P50:   h.quantile(50),
		P90:   h.quantile(90),
		P95:   h.quantile(95),
		P99:   h.quantile(99),
		Max:   round6(h.max),
		Mean:  round6(h.sum / float64(h.n())),
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
	if h.us != nil || h.counted != nil {
		panic("reports: cdf of a compact hist") // its values are rounded: the points would differ
	}
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
