// Package limitfittest holds, for tests, rate limiters written here (not
// the fit's models, not the simulator's) that decide like a service would,
// the traffic that tells them apart, and the decision streams they make:
// runs with known answers for the limiter fit (reports/limitfit) and for
// the reports that map it.
package limitfittest

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/msgload/msgload/reports/limitfit"
)

// Limiter decides requests at times t (seconds) in order.
type Limiter interface {
	Allow(t float64) bool
	RetryAfter(t float64) float64 // seconds until the next request would pass
}

// Fixed counts per window of W seconds aligned to the epoch (t=0 is
// aligned); Cur is the window it starts in (-1, or -Inf).
type Fixed struct {
	Limit int
	W     float64
	Cur   float64
	n     int
}

// Allow implements Limiter.
func (l *Fixed) Allow(t float64) bool {
	k := math.Floor(t / l.W)
	if k != l.Cur {
		l.Cur, l.n = k, 0
	}
	if l.n < l.Limit {
		l.n++
		return true
	}
	return false
}

// RetryAfter implements Limiter.
func (l *Fixed) RetryAfter(t float64) float64 { return math.Ceil((l.Cur+1)*l.W - t) }

// Sliding keeps a log of accepted times: at most Limit in any W seconds.
type Sliding struct {
	Limit int
	W     float64
	log   []float64
}

// Allow implements Limiter.
func (l *Sliding) Allow(t float64) bool {
	for len(l.log) > 0 && l.log[0] <= t-l.W {
		l.log = l.log[1:]
	}
	if len(l.log) < l.Limit {
		l.log = append(l.log, t)
		return true
	}
	return false
}

// RetryAfter implements Limiter.
func (l *Sliding) RetryAfter(t float64) float64 { return math.Ceil(l.log[0] + l.W - t) }

// Bucket is a token bucket of Capacity refilled at Rate a second, full at
// the start.
type Bucket struct {
	Rate, Capacity float64
	tokens, last   float64
	started        bool
}

// Allow implements Limiter.
func (l *Bucket) Allow(t float64) bool {
	if !l.started {
		l.started, l.tokens = true, l.Capacity
	}
	l.tokens = math.Min(l.Capacity, l.tokens+l.Rate*(t-l.last))
	l.last = t
	if l.tokens >= 1 {
		l.tokens--
		return true
	}
	return false
}

// RetryAfter implements Limiter.
func (l *Bucket) RetryAfter(float64) float64 { return math.Ceil((1 - l.tokens) / l.Rate) }

// Phased shifts a limiter's clock so that its windows start at Phase (s).
type Phased struct {
	Limiter
	Phase float64
}

// Allow implements Limiter.
func (p Phased) Allow(t float64) bool { return p.Limiter.Allow(t - p.Phase) }

// Steady returns send times every 1/rate seconds in [from, to).
func Steady(rate, from, to float64) []float64 {
	var out []float64
	for i := 0; ; i++ {
		t := from + float64(i)/rate
		if t >= to {
			return out
		}
		out = append(out, math.Round(t*1e6)/1e6)
	}
}

// Poisson returns send times at the given mean rate in [0, to).
func Poisson(seed uint64, rate, to float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	var out []float64
	for t := rng.ExpFloat64() / rate; t < to; t += rng.ExpFloat64() / rate {
		out = append(out, t)
	}
	return out
}

// BurstyFor returns times whose rate changes every 0.2–1.2 windows between
// 0.2 and 5 times the limit's rate: traffic that tells limiters apart.
func BurstyFor(seed uint64, limitRate, w, to float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 5))
	var out []float64
	rate, next := limitRate, 0.0
	for t := 0.0; t < to; {
		if t >= next {
			rate = limitRate * []float64{0.2, 0.7, 2, 5}[rng.IntN(4)]
			next = t + w*(0.2+rng.Float64())
		}
		t += rng.ExpFloat64() / rate
		out = append(out, t)
	}
	return out
}

// Decisions sends at times (s after t0) through lim and returns the
// client's requests in send order. Each reaches the service at a random
// moment between its send and its answer (latency up to maxLat s, at least
// 1 ms), and the limiter decides in the order the service saw them, as a
// real one would.
func Decisions(lim Limiter, t0 time.Time, times []float64, maxLat float64, seed uint64) []limitfit.Request {
	rng := rand.New(rand.NewPCG(seed, 11))
	type req struct{ t, s, lat float64 }
	reqs := make([]req, len(times))
	for i, t := range times {
		lat := 0.001 + rng.Float64()*maxLat
		reqs[i] = req{t, t + rng.Float64()*lat, lat}
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].s < reqs[j].s })
	base := t0.UnixNano()
	out := make([]limitfit.Request, len(reqs))
	for i, r := range reqs {
		code := int16(200)
		if !lim.Allow(r.s) {
			code = 429
		}
		out[i] = limitfit.Request{Sent: base + int64(r.t*1e9), Code: code, RetryAfter: -1, Latency: int64(r.lat * 1e9)}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sent < out[j].Sent })
	return out
}
