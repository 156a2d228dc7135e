package reports

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// chartAlloc is how many bytes charting n requests of one second allocates,
// their latencies drawn by lat.
func chartAlloc(n int, lat func(i int) float64) uint64 {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	c := newCharts(start, rundir.Meta{Start: start, End: start.Add(2 * time.Minute)})
	at := &rundir.Attempt{Sent: start.Add(time.Second), Code: 202}
	at.Latency = lat(0)
	c.attempt(at) // the bucket's maps made
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 1; i < n; i++ {
		at.Latency = lat(i)
		c.attempt(at)
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(c)
	return after.TotalAlloc - before.TotalAlloc
}

// TestChartHistHeldFixed: a chart bucket's latency summary allocates
// nothing once made, however many requests land in it and however their
// latencies spread (issue 23: the exact hists a bucket kept grew with both —
// 4 bytes a request, then pages of counts as the values spread: most of
// `msgload report`'s live heap on a soak with callbacks).
func TestChartHistHeldFixed(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	spread := func(int) float64 { return math.Exp(rng.Float64()*math.Log(30e6)) / 1e6 } // 1 µs .. 30 s
	same := func(int) float64 { return 0.004 }
	for _, tc := range []struct {
		name string
		n    int
		lat  func(int) float64
	}{{"same 1k", 1_000, same}, {"spread 1k", 1_000, spread}, {"spread 50k", 50_000, spread}} {
		if got := chartAlloc(tc.n, tc.lat); got > 1024 {
			t.Errorf("%s: charting the requests allocated %d bytes: want none past the bucket's summary", tc.name, got)
		}
	}
}
