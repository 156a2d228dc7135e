package reports

import (
	"math"
	"math/bits"
	"slices"
)

// A bounded hist (the analysis of a run in two passes, stream.go) keeps no
// value one by one. Its first pass counts the values, rounded to the
// microsecond (the resolution of every figure: round6), in buckets of
// relative width 1/1024 (exact below 2048 µs); from the counts it knows in
// which bucket each wanted rank lies (p50, p90, p95, p99, censored values
// ranked last). The second pass reads the same values again and keeps, per
// microsecond, only those that fall in a wanted bucket: the nearest-rank
// figures are the same to the microsecond as those of a hist that kept every
// value, in memory bounded by the buckets (a few KiB a power of two) and the
// width of the wanted ones.
type bounded struct {
	obs, cens  bucketCounts
	cmax, csum float64             // the censored values' maximum and sum (the observed ones: hist.max, hist.sum)
	plan       *boundedPlan        // second pass: what the first pass found
	vals       map[uint64][2]int64 // second pass: count by µs of the values in a wanted bucket, observed and censored
}

// boundedPlan is what a bounded hist's first pass hands to its second: the
// buckets holding a wanted rank, and the counts, which the second pass must
// find again.
type boundedPlan struct {
	want   map[int]bool
	n, nc  int64
	broken bool // the second pass did not count what the first did
}

// latencyResolution is the resolution of every latency figure (seconds):
// summary.json's latency_resolution_s.
const latencyResolution = 1e-6

// bucketSub is how many buckets split each power of two of microseconds.
const bucketSub = 1024

// bucketCounts counts values (µs) by bucket; a page per power of two,
// itself in chunks of chunkLen buckets allocated when a value lands in one:
// a hist of few values (a chart's second of requests) holds the few chunks
// its values touch, not 16 KB per power of two (issue 23: the report's
// memory grew with the chart buckets' hists). Counts are int32: a bucket
// is 1 µs to 2^s µs wide, and no run sends 2^31 messages.
type bucketCounts struct {
	pages [65]*[2 * bucketSub / chunkLen]*[chunkLen]int32
	n     int64
}

// chunkLen is how many buckets a chunk of a page counts.
const chunkLen = 128

// bucketOf is the bucket of a value in µs: below 2·bucketSub the value
// itself (page 0), above it page s holds [2^(s+10), 2^(s+11)) in bucketSub
// buckets 2^s wide. Buckets ascend with the values.
func bucketOf(us uint64) int {
	s := max(bits.Len64(us)-11, 0)
	return s*2*bucketSub + int(us>>s)
}

func (c *bucketCounts) add(us uint64) {
	k := bucketOf(us)
	p := &c.pages[k/(2*bucketSub)]
	if *p == nil {
		*p = new([2 * bucketSub / chunkLen]*[chunkLen]int32)
	}
	j := k % (2 * bucketSub)
	ch := &(*p)[j/chunkLen]
	if *ch == nil {
		*ch = new([chunkLen]int32)
	}
	(*ch)[j%chunkLen]++
	c.n++
}

// chunkAt is the count of bucket j of page p (nil: none).
func chunkAt(p *[2 * bucketSub / chunkLen]*[chunkLen]int32, j int) int64 {
	if p == nil {
		return 0
	}
	if ch := p[j/chunkLen]; ch != nil {
		return int64(ch[j%chunkLen])
	}
	return 0
}

// find returns the bucket holding the r-th smallest of the values counted in
// c and d together (1-based) and the rank r has among that bucket's values.
func findBucket(c, d *bucketCounts, r int64) (bucket int, within int64) {
	for i := range c.pages {
		p, q := c.pages[i], d.pages[i]
		if p == nil && q == nil {
			continue
		}
		for j := 0; j < 2*bucketSub; j++ {
			if j%chunkLen == 0 && (p == nil || p[j/chunkLen] == nil) && (q == nil || q[j/chunkLen] == nil) {
				j += chunkLen - 1 // a chunk neither counted in
				continue
			}
			k := chunkAt(p, j) + chunkAt(q, j)
			if r <= k {
				return i*2*bucketSub + j, r
			}
			r -= k
		}
	}
	return -1, 0
}

// span is the least and the most the r-th smallest value (1-based) can be,
// in seconds, from the counts alone (the first pass: its bucket's ends).
func (b *bounded) span(r int64, merged bool) (lo, hi float64) {
	d := &noCounts
	if merged {
		d = &b.cens
	}
	k, _ := findBucket(&b.obs, d, r)
	if k < 0 {
		return math.NaN(), math.NaN()
	}
	s, j := uint(k/(2*bucketSub)), uint64(k%(2*bucketSub))
	return float64(j<<s) / 1e6, float64((j+1)<<s-1) / 1e6
}

// toMicros is a value in seconds as the µs it is reported in (round6), a
// negative or NaN value as 0.
func toMicros(sec float64) uint64 {
	if math.IsNaN(sec) || sec <= 0 {
		return 0
	}
	return uint64(math.Round(sec * 1e6))
}

var noCounts bucketCounts

func (b *bounded) observe(sec float64) {
	us := toMicros(sec)
	b.obs.add(us)
	b.keep(us, 0)
}

func (b *bounded) censor(sec float64) {
	if b.cens.n == 0 || sec > b.cmax {
		b.cmax = sec
	}
	b.csum += sec
	us := toMicros(sec)
	b.cens.add(us)
	b.keep(us, 1)
}

// keep remembers a value of the second pass when its bucket holds a wanted rank.
func (b *bounded) keep(us uint64, i int) {
	if b.plan == nil || !b.plan.want[bucketOf(us)] {
		return
	}
	if b.vals == nil {
		b.vals = map[uint64][2]int64{}
	}
	v := b.vals[us]
	v[i]++
	b.vals[us] = v
}

// planFor is the first pass's plan for the second: the buckets of the ranks
// percentiles asks for, and of the max (the truth's judgeLatency asks it).
func (b *bounded) planFor() *boundedPlan {
	p := &boundedPlan{want: map[int]bool{}, n: b.obs.n, nc: b.cens.n}
	for _, q := range []float64{50, 90, 95, 99, 100} {
		if p.nc == 0 {
			if p.n > 0 {
				k, _ := findBucket(&b.obs, &noCounts, int64(rank(q, int(p.n))))
				p.want[k] = true
			}
			continue
		}
		r := int64(rank(q, int(p.n+p.nc)))
		if r <= p.n {
			k, _ := findBucket(&b.obs, &noCounts, r)
			p.want[k] = true
		}
		k, _ := findBucket(&b.obs, &b.cens, r)
		p.want[k] = true
	}
	return p
}

// nth is the r-th smallest value (1-based) of the observed ones (merged:
// false) or of the observed ones and the censoring times together, in
// seconds rounded to the microsecond. Only the second pass knows it; NaN
// when the passes disagreed.
func (b *bounded) nth(r int64, merged bool) float64 {
	d := &noCounts
	if merged {
		d = &b.cens
	}
	k, within := findBucket(&b.obs, d, r)
	if b.plan == nil || b.plan.broken || !b.plan.want[k] {
		return math.NaN()
	}
	var us []uint64
	for u := range b.vals {
		if bucketOf(u) == k {
			us = append(us, u)
		}
	}
	slices.Sort(us)
	for _, u := range us {
		c := b.vals[u][0]
		if merged {
			c += b.vals[u][1]
		}
		if within -= c; within <= 0 {
			return float64(u) / 1e6
		}
	}
	return math.NaN()
}
