package reports

import (
	"math"
	"time"

	"github.com/msgload/msgload/rundir"
)

// maxBuckets bounds the points of every time chart, whatever the run's length.
const maxBuckets = 120

// charts holds the series report.html and report.md draw, gathered while reading the run.
type charts struct {
	base   time.Time
	width  time.Duration
	n      int                      // buckets used
	codes  map[string]map[int]int64 // code class → bucket → requests
	lat    map[int]*chartHist       // request latency per time bucket (charthist.go)
	events map[string]map[int]int64 // event kind → bucket → events

	ChartSeries // filled by finish
}

// ChartSeries are the series of a run's charts, for the writers
// (reports/render) to draw: x is seconds since the start, a bucket without
// requests a NaN latency (a gap, never 0).
type ChartSeries struct {
	Buckets     []float64            // bucket start, seconds since base
	Codes       map[string][]float64 // requests per second by code class
	LatP50      []float64
	LatP95      []float64
	LatP99      []float64
	Events      map[string][]float64 // events per second by kind
	Window      map[string][][2]float64
	Limit       float64
	DeliveryCDF map[string][][2]float64 // channel → (latency s, share 0..1)
	Funnel      []funnelStage
	Chain       int // items in run.json's chain: a funnel needs more than one
	// LatCensored counts the points of LatP50, LatP95 and LatP99 that are
	// NaN (a gap) though their bucket had requests: the percentile's rank
	// fell among the requests with no answer (chartHist), its value unknown.
	LatCensored int
}

// Charts are the run's chart series; nil for a summary read from
// summary.json (it keeps no series).
func (s *Summary) Charts() *ChartSeries {
	if s.charts == nil {
		return nil
	}
	return &s.charts.ChartSeries
}

func newCharts(start time.Time, m rundir.Meta) *charts {
	c := &charts{base: start, width: time.Second,
		codes: map[string]map[int]int64{}, lat: map[int]*chartHist{},
		events: map[string]map[int]int64{}}
	c.Window = map[string][][2]float64{}
	end := m.End
	if end.IsZero() {
		end = m.AttackEnd.Add(m.Delivery.Grace.D())
	}
	if m.End.IsZero() && m.AttackEnd.IsZero() && m.Planned.Duration > 0 {
		// A run still going (its checkpoints) or killed: as wide as its plan
		// makes them, not a second each (a hist each, up to 4·maxBuckets).
		end = start.Add(m.Planned.Duration.D() + m.Delivery.Grace.D())
	}
	if !start.IsZero() && end.After(start) {
		w := (end.Sub(start) + maxBuckets*time.Second - 1) / (maxBuckets * time.Second)
		c.width = max(w*time.Second, time.Second)
	}
	return c
}

// bucket returns the index of t, or -1 when it falls outside the charted span.
func (c *charts) bucket(t time.Time) int {
	if c.base.IsZero() {
		c.base = t.Truncate(time.Second)
	}
	if t.Before(c.base) {
		return -1
	}
	i := int(t.Sub(c.base) / c.width)
	if i >= 4*maxBuckets {
		return -1
	}
	c.n = max(c.n, i+1)
	return i
}

// codeClass is the chart's label of an attempt's class (rundir.Classify).
func codeClass(code int) string {
	if code == 0 {
		return "no answer"
	}
	switch _, class := rundir.Classify(code, nil); class {
	case rundir.ClassOK:
		return "2xx"
	case rundir.ClassHTTP429:
		return "429"
	case rundir.ClassHTTP5xx:
		return "5xx"
	}
	return "4xx"
}

func (c *charts) attempt(at *rundir.Attempt) {
	if !sane(at.Sent) {
		return
	}
	i := c.bucket(at.Sent)
	if i < 0 {
		return
	}
	k := codeClass(at.Code)
	if c.codes[k] == nil {
		c.codes[k] = map[int]int64{}
	}
	c.codes[k][i]++
	h := c.lat[i]
	if h == nil {
		h = new(chartHist)
		c.lat[i] = h
	}
	if unanswered(at) {
		h.censor() // ranked after the answers, as in requests.latency
		return
	}
	h.observe(at.Latency)
}

func (c *charts) event(e *rundir.Event) {
	if !sane(e.ReceivedAt) {
		return
	}
	i := c.bucket(e.ReceivedAt)
	if i < 0 {
		return
	}
	if c.events[e.Kind] == nil {
		c.events[e.Kind] = map[int]int64{}
	}
	c.events[e.Kind][i]++
}

// limit keeps, per client, the count of accepted requests in the sliding window
// ending at each acceptance, thinned to at most 300 points (the largest of each run).
func (c *charts) limit(client string, acc []int64, w int64) {
	if w <= 0 || len(acc) == 0 || len(c.Window) >= 8 {
		return
	}
	step := (len(acc) + 299) / 300
	var pts [][2]float64
	j := 0
	var best [2]float64
	for i, t := range acc {
		for j < i && acc[j] <= t-w {
			j++
		}
		n := float64(i - j + 1)
		if n >= best[1] {
			best = [2]float64{float64(t-c.base.UnixNano()) / 1e9, n}
		}
		if (i+1)%step == 0 || i == len(acc)-1 {
			pts = append(pts, best)
			best = [2]float64{}
		}
	}
	c.Window[client] = pts
}

func (c *charts) finish(a *analyzer) {
	per := c.width.Seconds()
	c.Buckets = make([]float64, c.n)
	for i := range c.Buckets {
		c.Buckets[i] = float64(i) * per
	}
	series := func(m map[int]int64) []float64 {
		out := make([]float64, c.n)
		for i, v := range m {
			if i < c.n {
				out[i] = round6(float64(v) / per)
			}
		}
		return out
	}
	c.Codes = map[string][]float64{}
	for k, m := range c.codes {
		c.Codes[k] = series(m)
	}
	c.Events = map[string][]float64{}
	for k, m := range c.events {
		c.Events[k] = series(m)
	}
	// A bucket without requests has no latency: NaN, a gap in the line (never
	// 0); nor has a percentile whose rank falls among the requests with no
	// answer (chartHist.quantile), counted in LatCensored.
	c.LatP50, c.LatP95, c.LatP99 = nanSeries(c.n), nanSeries(c.n), nanSeries(c.n)
	for i, h := range c.lat {
		if i >= c.n {
			continue
		}
		for _, p := range []struct {
			q  float64
			to []float64
		}{{50, c.LatP50}, {95, c.LatP95}, {99, c.LatP99}} {
			p.to[i] = h.quantile(p.q)
			if math.IsNaN(p.to[i]) && h.cens > 0 {
				c.LatCensored++
			}
		}
	}
	c.Limit = float64(a.meta.Limit.Requests)
	c.DeliveryCDF = map[string][][2]float64{}
	for ch, h := range a.byChannel {
		pts := h.cdf()
		if len(pts) > 200 { // thin, keeping the last point
			step := (len(pts) + 199) / 200
			var thin [][2]float64
			for i := range pts {
				if i%step == 0 || i == len(pts)-1 {
					thin = append(thin, pts[i])
				}
			}
			pts = thin
		}
		c.DeliveryCDF[ch] = pts
	}
	c.Funnel = a.s.Delivery.Failover.Funnel
	c.Chain = len(a.chain) // run.json's, or learnt from trackData
}

func nanSeries(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}
