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

// TestChartPointsCensorTheUnanswered: a chart bucket's latency points rank
// its requests with no answer (code 0) after its answers, as
// requests.latency does: a percentile whose rank falls among them is not
// drawn (NaN, a gap, counted in LatCensored), never the timeout's wait nor a
// reset's fast failure; one whose rank falls among the answers is their
// value. The oracle ranks the raw values written here.
func TestChartPointsCensorTheUnanswered(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	c := newCharts(start, rundir.Meta{Start: start, End: start.Add(time.Minute)})
	type bucket struct {
		answered       int
		timeouts, rsts int
	}
	buckets := map[int]bucket{
		0: {answered: 94, timeouts: 6},  // 6 % timeouts: p95 and p99 unknown, p50 a value
		2: {answered: 199, timeouts: 1}, // 0.5 %: every point a value
		4: {rsts: 5},                    // only resets: no point, not a fast one
		6: {answered: 50, rsts: 1},      // 2 %: p99 unknown
	}
	answered := map[int][]uint64{}
	for b, k := range buckets {
		for i := range k.answered + k.timeouts + k.rsts {
			at := &rundir.Attempt{Sent: start.Add(time.Duration(b)*time.Second + time.Duration(i)*time.Millisecond), Code: 202, Latency: 0.01 + 0.001*float64(i%40)}
			switch {
			case i < k.timeouts:
				at.Code, at.Class, at.Latency = 0, rundir.ClassTimeout, 30
			case i < k.timeouts+k.rsts:
				at.Code, at.Class, at.Latency = 0, rundir.ClassReset, 0.0005
			default:
				answered[b] = append(answered[b], toMicros(at.Latency))
			}
			c.attempt(at)
		}
	}
	c.finish(&analyzer{s: &Summary{}})
	gaps := 0
	for b, k := range buckets {
		vs := answered[b]
		slices.Sort(vs)
		for _, p := range []struct {
			q   float64
			got []float64
		}{{50, c.LatP50}, {95, c.LatP95}, {99, c.LatP99}} {
			r := rank(p.q, k.answered+k.timeouts+k.rsts)
			got := p.got[b]
			if r > len(vs) {
				gaps++
				if !math.IsNaN(got) {
					t.Errorf("bucket %d (%d answered, %d timeouts, %d resets): p%v %v s, want a gap (rank %d among the unanswered)", b, k.answered, k.timeouts, k.rsts, p.q, got, r)
				}
				continue
			}
			want := float64(vs[r-1]) / 1e6
			if math.IsNaN(got) || math.Abs(got-want) > want*chartResolution+1e-6 {
				t.Errorf("bucket %d: p%v %v s, want %v (rank %d of %d answered)", b, p.q, got, want, r, len(vs))
			}
		}
	}
	if gaps != 6 || c.LatCensored != gaps {
		t.Errorf("LatCensored %d, %d points among the unanswered (want 6)", c.LatCensored, gaps)
	}
	if !math.IsNaN(c.LatP95[0]) {
		t.Errorf("bucket with 6 %% timeouts charted p95 %v s", c.LatP95[0])
	}
}
