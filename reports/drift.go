package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/thresholds"
)

// Drift: in a run of driftMinRun or more (a soak), the report fits how the
// request latency's p95, the delivery latency's p95 and the error share move
// over the run, window by window (driftWindow, by send time), and writes the
// slopes (summary.json drift, and beside each figure: requests.latency.
// p95_slope, delivery.latency.p95_slope, requests.error_rate_slope). A slope is
// in units of its figure per second — seconds per second for a latency, a
// fraction per second for the error share — so a threshold writes it with the
// language's literals: `requests.latency.p95_slope < 1ms/10m` (1 ms per 10
// minutes, 0.001/600).
//
// The fit is Theil–Sen (the median of the slopes between every two windows),
// not least squares: one bad minute (a GC pause, a noisy neighbour) moves a
// least-squares slope as far as a real trend would, and a gate must neither
// fail nor pass on a single window; Theil–Sen tolerates up to 29 % of the
// windows being outliers. Over more than driftMaxWindows windows, adjacent
// windows are merged first (the pairs stay under 260,000).
//
// Memory: each window keeps its latencies in log buckets 1 % wide (a p95
// within 0.5 % of the exact one), a few hundred counts a window, never the
// values.
//
// The target's memory (memory_slope, bytes per second) is fitted the same
// way over the mean of each window's samples of target-memory.jsonl, which
// the run writes when the scenario names the target's metrics endpoint
// (target.metrics; harness/targetmem.go). A sample that failed is missing,
// never 0 bytes: a window without a sample is no point of the fit, and the
// notes say how many failed. Without the endpoint (the embedded simulator
// shares msgload's process: its memory is not the target's) memory_slope is
// null.
var (
	driftMinRun    = 10 * time.Minute // shorter runs have no drift (null)
	driftWindow    = time.Minute
	driftMaxWindow = 720
)

// driftBucketGrowth is the ratio between two log buckets' edges.
const driftBucketGrowth = 1.01

// logCounts counts values (seconds) in log buckets: the buckets that hold a
// value, as (bucket, count) pairs sorted by bucket — 8 bytes a bucket. A map
// of them took ~20 KB a window (two a minute of the run, for as long as it
// runs: 0.7 bytes a message at 1,000/s, growing with the run); a window's
// few hundred buckets fill in its first seconds, so inserting in place is rare.
type logCounts struct {
	n       int64
	buckets []logBucket
}

// logBucket is one bucket's key (math.MinInt32: values under 1 µs) and how
// many values it holds (a window's values are far fewer than 2³²).
type logBucket struct {
	k int32
	n uint32
}

// logKey is v's bucket.
func logKey(v float64) int32 {
	if v < 1e-6 {
		return math.MinInt32
	}
	return int32(math.Floor(math.Log(v/1e-6) / math.Log(driftBucketGrowth)))
}

func (c *logCounts) add(v float64) {
	c.addN(logKey(v), 1)
	c.n++
}

// addN adds n values to bucket k.
func (c *logCounts) addN(k int32, n uint32) {
	i, found := slices.BinarySearchFunc(c.buckets, k, func(b logBucket, k int32) int { return cmp.Compare(b.k, k) })
	if found {
		c.buckets[i].n += n
		return
	}
	c.buckets = slices.Insert(c.buckets, i, logBucket{k: k, n: n})
}

func (c *logCounts) merge(o *logCounts) {
	for _, b := range o.buckets {
		c.addN(b.k, b.n)
	}
	c.n += o.n
}

// quantile returns the nearest-rank q-quantile over n values (n ≥ c.n: the
// values not counted rank last, as censored ones do) as the geometric middle
// of its bucket; false when the rank falls beyond the counted values.
func (c *logCounts) quantile(q float64, n int64) (float64, bool) {
	if n == 0 {
		return 0, false
	}
	rank := int64(math.Ceil(q * float64(n)))
	var seen int64
	for _, b := range c.buckets {
		seen += int64(b.n)
		if seen >= rank {
			if b.k == math.MinInt32 {
				return 0, true
			}
			return 1e-6 * math.Pow(driftBucketGrowth, float64(b.k)+0.5), true
		}
	}
	return 0, false
}

// driftWin is what one window holds.
type driftWin struct {
	req       logCounts
	reqCensor int64 // requests with no answer: ranked after the answered, as in requests.latency
	total     int64
	errs      int64
	del       logCounts
	delCensor int64
	memSum    float64 // the target's memory: the sum and count of the window's samples
	memN      int64
}

// driftRec gathers the windows while the run is read.
type driftRec struct {
	start time.Time
	wins  map[int64]*driftWin
}

func (d *driftRec) win(t time.Time) *driftWin {
	if d.start.IsZero() || t.Before(d.start) {
		return nil
	}
	i := int64(t.Sub(d.start) / driftWindow)
	if d.wins == nil {
		d.wins = map[int64]*driftWin{}
	}
	w := d.wins[i]
	if w == nil {
		w = &driftWin{}
		d.wins[i] = w
	}
	return w
}

// request takes one attempt: its latency and whether it is an error by the
// rule of requests.errors (a class other than ok).
func (d *driftRec) request(at *rundir.Attempt) {
	if at.GaveUp != "" || !sane(at.Sent) {
		return
	}
	w := d.win(at.Sent)
	if w == nil {
		return
	}
	w.total++
	if at.Class != "" && at.Class != rundir.ClassOK || at.Class == "" && !is2xx(at.Code) {
		w.errs++
	}
	if unanswered(at) {
		w.reqCensor++
		return
	}
	w.req.add(at.Latency)
}

// delivered takes one accepted message's delivery latency by its first
// send (ns); censored when it had no final status by the deadline.
func (d *driftRec) delivered(first int64, lat float64, censored bool) {
	w := d.win(time.Unix(0, first))
	if w == nil {
		return
	}
	if censored {
		w.delCensor++
		return
	}
	w.del.add(lat)
}

// finishDrift fits the drift of a run long enough and sets it beside the
// figures; a shorter run's drift is null.
func (a *analyzer) finishDrift() {
	end := a.meta.AttackEnd
	if end.IsZero() {
		end = a.meta.End
	}
	if a.start.IsZero() || end.Sub(a.start) < driftMinRun {
		return
	}
	n := int(end.Sub(a.start) / driftWindow) // whole windows only
	wins := make([]driftWin, n)
	for i, w := range a.drift.wins {
		if i < int64(n) {
			wins[i] = *w
		}
	}
	mem := a.targetMemory(wins, driftWindow)
	width := driftWindow
	for len(wins) > driftMaxWindow {
		wins, width = mergePairs(wins), 2*width
	}
	dr := fitDrift(wins, width.Seconds(), a.s.Delivery.Measured)
	dr.Notes = append(dr.Notes, mem...)
	a.s.Drift = dr
	a.s.Requests.Latency.P95Slope = dr.RequestsLatencyP95
	a.s.Delivery.Latency.P95Slope = dr.DeliveryLatencyP95
	a.s.Requests.ErrorRateSlope = dr.ErrorRate
}

// mergePairs merges adjacent windows two by two (a last odd one is dropped).
func mergePairs(wins []driftWin) []driftWin {
	out := make([]driftWin, len(wins)/2)
	for i := range out {
		x, y := &wins[2*i], &wins[2*i+1]
		o := &out[i]
		o.req.merge(&x.req)
		o.req.merge(&y.req)
		o.del.merge(&x.del)
		o.del.merge(&y.del)
		o.total, o.errs, o.delCensor, o.reqCensor = x.total+y.total, x.errs+y.errs, x.delCensor+y.delCensor, x.reqCensor+y.reqCensor
		o.memSum, o.memN = x.memSum+y.memSum, x.memN+y.memN
	}
	return out
}

// fitDrift fits the slopes over the windows (x: each window's middle).
func fitDrift(wins []driftWin, width float64, delivery bool) *drift {
	dr := &drift{Window: width, Windows: len(wins), Method: "theil-sen", RequestsLatencyP95Wins: make([]*float64, 0, len(wins))}
	var req, errs, del, mem [][2]float64
	censoredP95, censoredReq := 0, 0
	for i := range wins {
		w := &wins[i]
		x := (float64(i) + 0.5) * width
		if v, ok := w.req.quantile(0.95, w.req.n+w.reqCensor); ok {
			req = append(req, [2]float64{x, v})
			r := round6(v)
			dr.RequestsLatencyP95Wins = append(dr.RequestsLatencyP95Wins, &r)
		} else {
			if w.reqCensor > 0 {
				censoredReq++
			}
			dr.RequestsLatencyP95Wins = append(dr.RequestsLatencyP95Wins, nil)
		}
		if w.total > 0 {
			errs = append(errs, [2]float64{x, float64(w.errs) / float64(w.total)})
		}
		if w.memN > 0 {
			mem = append(mem, [2]float64{x, w.memSum / float64(w.memN)})
		}
		if all := w.del.n + w.delCensor; all > 0 {
			if v, ok := w.del.quantile(0.95, all); ok {
				del = append(del, [2]float64{x, v})
			} else {
				censoredP95++
			}
		}
	}
	if censoredReq == 0 {
		dr.RequestsLatencyP95 = theilSen(req)
	} else {
		dr.Notes = append(dr.Notes, fmt.Sprintf("request latency: in %d of %d windows the p95 falls among requests with no answer (only a lower bound): no slope", censoredReq, len(wins)))
	}
	dr.ErrorRate = theilSen(errs)
	dr.Memory = theilSen(mem)
	if delivery && censoredP95 == 0 {
		dr.DeliveryLatencyP95 = theilSen(del)
	} else if delivery {
		dr.Notes = append(dr.Notes, fmt.Sprintf("delivery latency: in %d of %d windows the p95 falls among messages with no final status by the deadline (only a lower bound): no slope", censoredP95, len(wins)))
	}
	return dr
}

// theilSen is the median of the slopes between every two points of
// different x; nil with fewer than three points.
func theilSen(pts [][2]float64) *float64 {
	if len(pts) < 3 {
		return nil
	}
	slopes := make([]float64, 0, len(pts)*(len(pts)-1)/2)
	for i := range pts {
		for j := i + 1; j < len(pts); j++ {
			if dx := pts[j][0] - pts[i][0]; dx != 0 {
				slopes = append(slopes, (pts[j][1]-pts[i][1])/dx)
			}
		}
	}
	slices.Sort(slopes)
	m := len(slopes) / 2
	v := slopes[m]
	if len(slopes)%2 == 0 {
		v = (slopes[m-1] + slopes[m]) / 2
	}
	v = roundSig(v)
	return &v
}

// roundSig rounds a slope to 6 significant digits (slopes are tiny numbers:
// round6 would make most of them 0).
func roundSig(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	e := math.Pow(10, 5-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*e) / e
}

// driftNoData says why a slope the path p reads (…_slope) has no data.
func (s *Summary) driftNoData(p []any) string {
	if len(p) == 0 {
		return ""
	}
	last, _ := p[len(p)-1].(string)
	if len(last) < 6 || last[len(last)-6:] != "_slope" {
		return ""
	}
	if s.Drift == nil {
		return fmt.Sprintf("the drift is fitted only over a run of at least %s", driftMinRun)
	}
	if thresholds.PathString(p) == "drift.memory_slope" && s.Drift.Memory == nil {
		return cmp.Or(s.memoryNoData, "no slope of the target's memory (no target.metrics in the scenario, or fewer than three windows with a sample)")
	}
	if v := s.slopeAt(p); v == nil {
		return "no slope (fewer than three windows with data, or a p95 that is only a lower bound)"
	}
	return ""
}

// slopeAt is the slope a path reads, nil when it has none.
func (s *Summary) slopeAt(p []any) *float64 {
	switch thresholds.PathString(p) {
	case "requests.latency.p95_slope", "drift.requests_latency_p95_slope":
		return s.Requests.Latency.P95Slope
	case "delivery.latency.p95_slope", "drift.delivery_latency_p95_slope":
		return s.Delivery.Latency.P95Slope
	case "requests.error_rate_slope", "drift.error_rate_slope":
		return s.Requests.ErrorRateSlope
	case "drift.memory_slope":
		return s.Drift.Memory
	}
	return nil // a slope of a figure with none
}
