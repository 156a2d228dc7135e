package reports

import (
	"math"
	"slices"

	"github.com/msgload/msgload/reports/summary"
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
	cens    []float64 // censored values (censor): each known only to exceed its own value
	us      []uint32  // compact: the values in µs, rounded (from countBelow only, once counted)
	counted *usCounts
	bk      *bounded // a bounded hist (bounded.go): counts in two passes, no value kept
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
	if h.bk != nil {
		h.bk.observe(sec)
		return
	}
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
		h.toFloat() // out of uint32's range
	}
	h.v = append(h.v, sec)
}

// toFloat turns a compact hist into a float hist of its rounded values, as
// seconds (round6 of one is itself: it reports the same to the bit), for a
// value out of uint32's range or a censored one (censor).
func (h *hist) toFloat() {
	v := make([]float64, 0, h.n()+1)
	if c := h.counted; c != nil {
		for i, p := range c.pages {
			for j := 0; p != nil && j < countPage; j++ {
				for range p[j] {
					v = append(v, float64(i*countPage+j)/1e6)
				}
			}
		}
	}
	for _, u := range h.us {
		v = append(v, float64(u)/1e6)
	}
	h.compact, h.v, h.us, h.counted = false, v, nil, nil
	h.sorted = false
}

// n is how many values were recorded.
func (h *hist) n() int {
	n := len(h.v) + len(h.us)
	if h.counted != nil {
		n += h.counted.n
	}
	if h.bk != nil {
		n += int(h.bk.obs.n)
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

// quantile returns the nearest-rank value at q (0..100) in seconds over the
// observed values (the censored ones aside), 0 when nothing was observed
// (percentiles() reports that as no data).
func (h *hist) quantile(q float64) float64 {
	n := h.n()
	if n == 0 {
		return 0
	}
	return h.nth(rank(q, n))
}

// nth returns the r-th smallest observed value (1-based, r ≤ n), rounded to
// the microsecond.
func (h *hist) nth(r int) float64 {
	if h.bk != nil {
		return h.bk.nth(int64(r), false)
	}
	h.sort()
	if c := h.counted; c != nil {
		// The counted values come before the listed ones.
		if r <= c.n {
			return float64(c.nth(r)) / 1e6
		}
		return float64(h.us[r-c.n-1]) / 1e6
	}
	if h.us != nil {
		return float64(h.us[r-1]) / 1e6 // round6 of it, exactly
	}
	return round6(h.v[r-1])
}

func (h *hist) sort() {
	if !h.sorted {
		slices.Sort(h.v)
		slices.Sort(h.us)
		slices.Sort(h.cens)
		h.sorted = true
	}
}

// censor records a value known only to be more than sec: a message with no
// final status by the end of the wait, sec being how long it was waited for
// (from its first send to the deadline). A negative or NaN sec records as 0
// (nothing is known of it). Censored values rank after every observed value
// (percentiles); a compact hist turns into a float hist for them (toFloat).
func (h *hist) censor(sec float64) {
	if h.compact {
		h.toFloat()
	}
	if math.IsNaN(sec) || sec < 0 {
		sec = 0
	}
	if h.bk != nil {
		h.bk.censor(sec)
		return
	}
	h.cens = append(h.cens, sec)
	h.sorted = false
}

// add records sec, censored (censor) or observed (observe).
func (h *hist) add(sec float64, censored bool) {
	if censored {
		h.censor(sec)
		return
	}
	h.observe(sec)
}

// total is how many values were recorded, observed and censored.
func (h *hist) total() int { return h.n() + h.censored() }

// censored is how many values were censored.
func (h *hist) censored() int {
	if h.bk != nil {
		return int(h.bk.cens.n)
	}
	return len(h.cens)
}

// censoredQuantile is the nearest-rank percentile q over every value, the
// censored ones ranked after the observed ones (DESIGN.md: delivery latency
// counts every accepted message). The rank r = rank(q, total): when r falls
// among the observed values, the figure is the r-th of them (exact); when it
// falls among the censored ones, the percentile is unknown and atLeast is its
// lower bound: the r-th smallest of the observed values and the censoring
// times merged — each censored value exceeds its censoring time, so the true
// r-th smallest is at least that (order statistics grow with every value),
// and no larger bound holds for all values the censored ones could take.
func (h *hist) censoredQuantile(q float64) (v float64, atLeast *float64) {
	r := rank(q, h.total())
	if r <= h.n() {
		return h.nth(r), nil
	}
	b := h.mergedNth(r)
	return 0, &b
}

// bounded is percentile q by the censored rule, both ways: the value when
// the rank falls among the observed values (exact), and always the lower
// bound (the rank-th of the observed values and censoring times merged).
// q = 100 is the max.
func (h *hist) bounded(q float64) (v float64, exact bool, atLeast float64) {
	if h.total() == 0 {
		return 0, false, 0
	}
	r := rank(q, h.total())
	if r <= h.n() {
		v, exact = h.nth(r), true
	}
	return v, exact, h.mergedNth(r)
}

// mergedNth is the r-th smallest of the observed values and the censoring
// times together (1-based, r ≤ total), rounded to the microsecond.
func (h *hist) mergedNth(r int) float64 {
	if h.bk != nil {
		return h.bk.nth(int64(r), true)
	}
	h.sort()
	i, j := 0, 0
	for k := 1; ; k++ {
		var x float64
		if j >= len(h.cens) || i < len(h.v) && h.v[i] <= h.cens[j] {
			x, i = h.v[i], i+1
		} else {
			x, j = h.cens[j], j+1
		}
		if k == r {
			return round6(x)
		}
	}
}

func (h *hist) percentiles() percentiles {
	if h == nil || h.total() == 0 {
		return percentiles{}
	}
	if h.censored() > 0 {
		return h.censoredPercentiles()
	}
	p := percentiles{
		Count: int64(h.n()),
		P50:   h.quantile(50),
		P90:   h.quantile(90),
		P95:   h.quantile(95),
		P99:   h.quantile(99),
		Max:   round6(h.max),
		Mean:  round6(h.sum / float64(h.n())),
	}
	h.spans(&p)
	return p
}

// spans gives p, of a bounded hist's counting pass (no plan: its ranks are
// known only to their bucket), where each percentile lies (Spans) when it
// falls among the observed values, and, when it falls among the censored,
// its lower bound as the least its bucket holds: a lower bound still, as
// the merged rank-th value is at least that.
func (h *hist) spans(p *percentiles) {
	b := h.bk
	if b == nil || b.plan != nil {
		return
	}
	sp := new(summary.Spans)
	bounds := [4]**float64{&p.P50AtLeast, &p.P90AtLeast, &p.P95AtLeast, &p.P99AtLeast}
	for i, q := range []float64{50, 90, 95, 99} {
		r := int64(rank(q, h.total()))
		if r > int64(h.n()) {
			lo, _ := b.span(r, true)
			*bounds[i] = &lo
			continue
		}
		sp[i][0], sp[i][1] = b.span(r, false)
	}
	p.Spans = sp
}

// censoredPercentiles are the percentiles of a hist with censored values:
// each percentile exact or a lower bound (censoredQuantile); max and mean
// are lower bounds (every censored value exceeds its censoring time).
func (h *hist) censoredPercentiles() percentiles {
	p := percentiles{Count: int64(h.total()), Censored: int64(h.censored())}
	p.P50, p.P50AtLeast = h.censoredQuantile(50)
	p.P90, p.P90AtLeast = h.censoredQuantile(90)
	p.P95, p.P95AtLeast = h.censoredQuantile(95)
	p.P99, p.P99AtLeast = h.censoredQuantile(99)
	mx, sum := h.max, h.sum
	if h.n() == 0 {
		mx = 0
	}
	for _, c := range h.cens {
		mx, sum = max(mx, c), sum+c
	}
	if b := h.bk; b != nil {
		mx, sum = max(mx, b.cmax), sum+b.csum
	}
	mean := sum / float64(h.total())
	mx, mean = round6(mx), round6(mean)
	p.MaxAtLeast, p.MeanAtLeast = &mx, &mean
	h.spans(&p)
	return p
}

// round6 keeps microsecond precision so that summary.json stays readable and
// stable across platforms.
func round6(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*1e6) / 1e6
}

// cdf is the cumulative distribution: for each distinct observed value
// (seconds, ascending), the share of all values, censored ones included, at
// or below it (with censored values the curve ends below 1: the share that
// had no value by the end of the wait).
func (h *hist) cdf() [][2]float64 {
	if h.bk != nil {
		return nil // no value is kept: the curve is not drawn (a run analysed in two passes)
	}
	if h.us != nil || h.counted != nil {
		panic("reports: cdf of a compact hist") // its values are rounded: the points would differ
	}
	n := len(h.v)
	if n == 0 {
		return nil
	}
	h.sort()
	all := float64(h.total())
	var pts [][2]float64
	for i, v := range h.v {
		if i+1 < n && h.v[i+1] == v {
			continue
		}
		pts = append(pts, [2]float64{round6(v), float64(i+1) / all})
	}
	return pts
}
