package limitfit_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/msgload/msgload/reports/limitfit"
	"github.com/msgload/msgload/reports/limitfit/limitfittest"
)

// t0 is where the generated decisions start.
var t0 = time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)

// SurelyInWindow counts a group as sharing a service window only when its
// answer times cannot stretch it to a full window.
func TestSurelyInWindow(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, tc := range []struct {
		name   string
		t, lat []int64 // ms
		maxN   int
		excess int64
	}{
		// Limit 2 per second kept exactly by the service (arrivals 0, 0.5, 1.0 s),
		// but the third was sent at 0.96 s and took 50 ms to arrive: by send
		// times three fall in one second; by what the service could have seen, not.
		{"slowed request at the edge", []int64{0, 500, 960}, []int64{1, 1, 50}, 2, 0},
		// Three sent within 0.6 s, each answered in 10 ms: surely one window.
		{"real excess", []int64{0, 300, 600}, []int64{10, 10, 10}, 3, 1},
		// A slow request early in the group no longer counts once it left it.
		{"slow one leaves", []int64{0, 100, 1200, 1300, 1400}, []int64{900, 1, 1, 1, 1}, 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, lat := make([]int64, len(tc.t)), make([]int64, len(tc.t))
			for i := range tc.t {
				ts[i], lat[i] = tc.t[i]*ms, tc.lat[i]*ms
			}
			n, ex := limitfit.SurelyInWindow(ts, lat, 1000*ms, 2)
			if n != tc.maxN || ex != tc.excess {
				t.Errorf("max %d excess %d, want %d and %d", n, ex, tc.maxN, tc.excess)
			}
			if m, _ := limitfit.SlidingMax(ts, 1000*ms, 2); m < n {
				t.Errorf("sure count %d above the send-time count %d", n, m)
			}
		})
	}
}

// TestLimiterInference feeds classify decision streams made by limiters
// written here (not the report's models, not the simulator's) under steady,
// bursty and random arrivals, with latencies up to a quarter of the window,
// and requires the algorithm, the limit and the window.
func TestLimiterInference(t *testing.T) {
	type mk func() limitfittest.Limiter
	sliding := func(l int, w float64) mk {
		return func() limitfittest.Limiter { return &limitfittest.Sliding{Limit: l, W: w} }
	}
	fixed := func(l int, w, ph float64) mk {
		return func() limitfittest.Limiter {
			return limitfittest.Phased{Limiter: &limitfittest.Fixed{Limit: l, W: w, Cur: math.Inf(-1)}, Phase: ph}
		}
	}
	bucket := func(c int, w float64) mk {
		return func() limitfittest.Limiter { return &limitfittest.Bucket{Rate: float64(c) / w, Capacity: float64(c)} }
	}
	for _, tc := range []struct {
		algo     string
		lim      mk
		limit    int
		w        float64 // s
		capacity float64
	}{
		{limitfit.Sliding, sliding(7, 5), 7, 5, 0},
		{limitfit.Fixed, fixed(10, 2, 0.37), 10, 2, 0},
		{limitfit.TokenBucket, bucket(10, 10), 10, 10, 10},
		{limitfit.Sliding, sliding(100, 60), 100, 60, 0},
		{limitfit.Fixed, fixed(100, 60, 17.3), 100, 60, 0},
		{limitfit.Fixed, fixed(3, 1, 0.61), 3, 1, 0},
		{limitfit.TokenBucket, bucket(3, 1), 3, 1, 3},
	} {
		rate := float64(tc.limit) / tc.w
		span := 30 * tc.w
		for _, arr := range []struct {
			name   string
			times  []float64
			maxLat float64
		}{
			// A steady 1.37 times the limit (not a multiple of the window, so a
			// sliding log drifts against a fixed window), answered within 30 ms.
			{"steady", limitfittest.Steady(1.37*rate, 0, span), 0.03},
			{"bursty", limitfittest.BurstyFor(1, rate, tc.w, span), 0.03},
			// Random arrivals at 1.5 times the limit, answers up to a quarter of the window.
			{"random latency", limitfittest.Poisson(2, 1.5*rate, span), 0.25 * tc.w},
		} {
			name := fmt.Sprintf("%s %d per %gs %s", tc.algo, tc.limit, tc.w, arr.name)
			t.Run(name, func(t *testing.T) {
				recs := limitfittest.Decisions(tc.lim(), t0, arr.times, arr.maxLat, 9)
				alg := limitfit.Classify(map[string][]limitfit.Request{"c1": recs}, []string{"c1"}, time.Duration(tc.w*1e9), tc.limit)
				if alg.Verdict != tc.algo || alg.Limit != float64(tc.limit) || alg.Window != tc.w || alg.Capacity != tc.capacity {
					t.Errorf("%s, limit %g, window %gs, capacity %g; want %s, %d, %gs, %g\n%q",
						alg.Verdict, alg.Limit, alg.Window, alg.Capacity, tc.algo, tc.limit, tc.w, tc.capacity, alg.Evidence)
				}
				if alg.DiffersFromScenario {
					t.Errorf("differs from the scenario: %q", alg.Evidence)
				}
			})
		}
	}
}

// TestLimiterInferenceClients: two clients, each with its own limiter of the
// same kind, fed differently (one steady, one bursty), are read together.
func TestLimiterInferenceClients(t *testing.T) {
	for _, tc := range []struct {
		algo string
		lim  func() limitfittest.Limiter
	}{
		{limitfit.Sliding, func() limitfittest.Limiter { return &limitfittest.Sliding{Limit: 7, W: 5} }},
		{limitfit.TokenBucket, func() limitfittest.Limiter { return &limitfittest.Bucket{Rate: 7.0 / 5, Capacity: 7} }},
	} {
		t.Run(tc.algo, func(t *testing.T) {
			clients := map[string][]limitfit.Request{
				"a": limitfittest.Decisions(tc.lim(), t0, limitfittest.Steady(1.9, 0.2, 150), 0.05, 1),
				"b": limitfittest.Decisions(tc.lim(), t0, limitfittest.BurstyFor(3, 7.0/5, 5, 150), 0.05, 2),
			}
			alg := limitfit.Classify(clients, []string{"a", "b"}, time.Minute, 100)
			if alg.Verdict != tc.algo || alg.Limit != 7 || alg.Window != 5 || !alg.DiffersFromScenario {
				t.Errorf("%s, %g per %gs, differs %v: %q", alg.Verdict, alg.Limit, alg.Window, alg.DiffersFromScenario, alg.Evidence)
			}
		})
	}
}

// TestClassifyOddStreams: streams no limiter made (random answers, equal send
// times, answers longer than the run, one decision) get a verdict and a reason,
// never a panic.
func TestClassifyOddStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	base := t0.UnixNano()
	for i := range 200 {
		n := 1 + rng.IntN(60)
		var recs []limitfit.Request
		for k := range n {
			code := int16([]int{200, 429, 500}[rng.IntN(3)])
			sent := base + int64(rng.IntN(3))*int64(k)*int64(time.Duration(rng.IntN(2000))*time.Millisecond)
			recs = append(recs, limitfit.Request{Sent: sent, Code: code, RetryAfter: -1, Latency: int64(rng.IntN(3)) * int64(time.Duration(rng.IntN(90))*time.Second)})
		}
		sort.Slice(recs, func(a, b int) bool { return recs[a].Sent < recs[b].Sent })
		w := int64(rng.IntN(3)) * int64(time.Second) * 5
		alg := limitfit.Classify(map[string][]limitfit.Request{"c": recs}, []string{"c"}, time.Duration(w), rng.IntN(4))
		if alg.Verdict == "" || len(alg.Evidence) == 0 {
			t.Errorf("stream %d: verdict %q, evidence %q", i, alg.Verdict, alg.Evidence)
		}
	}
}
