package reports

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestChartPointsWithinResolution: a chart's latency points are the
// nearest-rank p50, p95 and p99 of each time bucket's requests within
// chartResolution (exact below 64 µs), computed here from the raw values.
func TestChartPointsWithinResolution(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	c := newCharts(start, rundir.Meta{Start: start, End: start.Add(time.Minute)})
	rng := rand.New(rand.NewPCG(23, 2))
	raw := map[int][]uint64{}
	draws := []func() float64{
		func() float64 { return float64(rng.IntN(80)) / 1e6 },                          // a few µs: exact
		func() float64 { return math.Exp(rng.Float64()*math.Log(30e6)) / 1e6 },         // 1 µs .. 30 s
		func() float64 { return 0.0005 + rng.ExpFloat64()*0.002 },                      // a fast service
		func() float64 { return []float64{0.001, 0.25, 30}[rng.IntN(3)] },              // three values
		func() float64 { return 5000 + rng.Float64() },                                 // past 2^32 µs
		func() float64 { return rng.NormFloat64() * 0.001 },                            // clocks: negative as 0
		func() float64 { return float64(rng.IntN(3)) * 1e-6 * float64(1+rng.IntN(2)) }, // ties
	}
	for b, draw := range draws {
		n := 1 + rng.IntN(3000)
		if b == 3 {
			n = 1
		}
		for range n {
			at := &rundir.Attempt{Sent: start.Add(time.Duration(2*b)*time.Second + time.Duration(rng.IntN(1e9))), Code: 202, Latency: draw()}
			c.attempt(at)
			raw[2*b] = append(raw[2*b], toMicros(at.Latency))
		}
	}
	c.finish(&analyzer{s: &Summary{}})
	for b, vs := range raw {
		slices.Sort(vs)
		for _, p := range []struct {
			q   float64
			got []float64
		}{{50, c.LatP50}, {95, c.LatP95}, {99, c.LatP99}} {
			want := float64(vs[rank(p.q, len(vs))-1])
			got := p.got[b] * 1e6
			tol := want * chartResolution
			if want < chartExact {
				tol = 0
			}
			if math.Abs(got-want) > tol+1e-6 {
				t.Errorf("bucket %d (%d values): p%v %v µs, exact %v µs: want within %v", b, len(vs), p.q, got, want, tol)
			}
		}
	}
	for b := 1; b < len(c.LatP50); b += 2 {
		if !math.IsNaN(c.LatP50[b]) {
			t.Errorf("bucket %d without requests charted %v: want a gap (NaN)", b, c.LatP50[b])
		}
	}
}
