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

// nginxLimiter is nginx's limit_req (ngx_http_limit_req_module) with nodelay:
// excess in milli-requests on a millisecond clock, drained at rate
// milli-requests a second; a request passes when excess − rate·ms/1000 + 1000
// (at least 0) is at most burst·1000, and only a passed request updates
// excess and last. A new key starts with excess 0.
type nginxLimiter struct {
	rate, burst  int64 // rate: milli-requests per second (30r/m: 500)
	excess, last int64
	seen         bool
}

func (l *nginxLimiter) allowMs(now int64) bool {
	if !l.seen {
		l.seen, l.excess, l.last = true, 0, now
		return true
	}
	ms := max(now-l.last, 0)
	excess := max(l.excess-l.rate*ms/1000+1000, 0)
	if excess > l.burst*1000 {
		return false
	}
	l.excess = excess
	if ms != 0 {
		l.last = now
	}
	return true
}

// nginxDecisions sends at times (s), each up to 0.5 ms late (a pacer's
// jitter), through an nginx limiter: each request reaches it at a random
// moment of its latency (1–3 ms), dated by its millisecond clock, decided in
// arrival order.
func nginxDecisions(l *nginxLimiter, times []float64, seed uint64) []limitfit.Request {
	rng := rand.New(rand.NewPCG(seed, 13))
	type req struct{ t, s, lat float64 }
	reqs := make([]req, len(times))
	for i, t := range times {
		t += 0.0005 * rng.Float64()
		lat := 0.001 + 0.002*rng.Float64()
		reqs[i] = req{t, t + rng.Float64()*lat, lat}
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].s < reqs[j].s })
	base := t0.UnixNano()
	out := make([]limitfit.Request, len(reqs))
	for i, r := range reqs {
		code := int16(200)
		if !l.allowMs(int64(math.Floor(r.s * 1000))) {
			code = 429
		}
		out[i] = limitfit.Request{Sent: base + int64(r.t*1e9), Code: code, RetryAfter: -1, Latency: int64(r.lat * 1e9)}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sent < out[j].Sent })
	return out
}

// TestLimiterAtRefillEdges: nginx's limit_req at 30r/m with bursts 0, 5 and
// 20, a client at exactly 60/min for 60 s (every other request on a refill
// edge, a millisecond either way), from many phases: the fit names "token
// bucket, 30 per 1m" with capacity burst + 1, every time. It used to say
// "cannot tell" (2 of 61 decisions a hair past the edge, more than 1 %) or
// name "1 per 1s", which fits only with every decision on its edge.
func TestLimiterAtRefillEdges(t *testing.T) {
	for _, burst := range []int64{0, 5, 20} {
		for seed := range uint64(20) {
			phase := float64(seed) * 0.0537
			recs := nginxDecisions(&nginxLimiter{rate: 500, burst: burst}, limitfittest.Steady(1, phase, phase+60), seed)
			alg := limitfit.Classify(map[string][]limitfit.Request{"c1": recs}, []string{"c1"}, time.Duration(60e9), 30)
			if alg.Verdict != limitfit.TokenBucket || alg.Limit != 30 || alg.Window != 60 || alg.Capacity != float64(burst+1) {
				t.Errorf("burst %d seed %d: %s, %g per %gs, capacity %g; want token bucket, 30 per 60s, capacity %d\n%q",
					burst, seed, alg.Verdict, alg.Limit, alg.Window, alg.Capacity, burst+1, alg.Evidence)
			}
		}
	}
}

// TestLimiterFailedAnswers: a share of the requests is answered 500, either
// after the limiter accepted them (they use quota) or before it (they do
// not). The fit names the limiter, its limit and window, and which of the two
// the answers support; leaving the 500s out, as the fit did, made 429s come
// "too early" for every model.
func TestLimiterFailedAnswers(t *testing.T) {
	for _, tc := range []struct {
		algo  string
		lim   func() limitfittest.Limiter
		limit int
		w     float64
	}{
		{limitfit.Sliding, func() limitfittest.Limiter { return &limitfittest.Sliding{Limit: 7, W: 5} }, 7, 5},
		{limitfit.Fixed, func() limitfittest.Limiter {
			return limitfittest.Phased{Limiter: &limitfittest.Fixed{Limit: 10, W: 2, Cur: math.Inf(-1)}, Phase: 0.37}
		}, 10, 2},
		{limitfit.TokenBucket, func() limitfittest.Limiter { return &limitfittest.Bucket{Rate: 1, Capacity: 10} }, 10, 10},
	} {
		for _, share := range []float64{0.05, 0.20} {
			for _, counted := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%g/counted=%v", tc.algo, share, counted), func(t *testing.T) {
					rate := float64(tc.limit) / tc.w
					recs := failingDecisions(tc.lim(), limitfittest.BurstyFor(4, rate, tc.w, 30*tc.w), share, counted, 5)
					alg := limitfit.Classify(map[string][]limitfit.Request{"c1": recs}, []string{"c1"}, time.Duration(tc.w*1e9), tc.limit)
					if alg.Verdict != tc.algo || alg.Limit != float64(tc.limit) || alg.Window != tc.w {
						t.Errorf("%s, %g per %gs; want %s, %d per %gs\n%q", alg.Verdict, alg.Limit, alg.Window, tc.algo, tc.limit, tc.w, alg.Evidence)
					}
					if want := map[bool]string{true: limitfit.QuotaYes, false: limitfit.QuotaNo}[counted]; alg.FailuresUseQuota != want {
						t.Errorf("failures use quota %q, want %q\n%q", alg.FailuresUseQuota, want, alg.Evidence)
					}
				})
			}
		}
	}
}

// failingDecisions is synthDecisions (answers within 20 ms) with a share of
// the requests answered 500: decided by lim first when counted (a refusal
// stays a 429), else failed before it.
func failingDecisions(lim limitfittest.Limiter, times []float64, share float64, counted bool, seed uint64) []limitfit.Request {
	rng := rand.New(rand.NewPCG(seed, 17))
	base := t0.UnixNano()
	out := make([]limitfit.Request, len(times))
	for i, t := range times {
		lat := 0.001 + 0.019*rng.Float64()
		s := t + rng.Float64()*lat // times are sorted and latencies short: arrival order is send order but for a few
		fail := rng.Float64() < share
		code := int16(200)
		switch {
		case fail && !counted:
			code = 500
		case !lim.Allow(s):
			code = 429
		case fail:
			code = 500
		}
		out[i] = limitfit.Request{Sent: base + int64(t*1e9), Code: code, RetryAfter: -1, Latency: int64(lat * 1e9)}
	}
	return out
}

// countingSliding is a sliding log that logs refused requests too.
type countingSliding struct {
	limit int
	w     float64
	log   []float64
}

func (l *countingSliding) Allow(t float64) bool {
	for len(l.log) > 0 && l.log[0] <= t-l.w {
		l.log = l.log[1:]
	}
	ok := len(l.log) < l.limit
	l.log = append(l.log, t)
	return ok
}
func (l *countingSliding) RetryAfter(float64) float64 { return 1 }

// debtBucket is a token bucket whose refusals take a token too, into debt.
type debtBucket struct{ rate, capacity, tokens, last float64 }

func (l *debtBucket) Allow(t float64) bool {
	l.tokens = math.Min(l.capacity, l.tokens+l.rate*(t-l.last))
	l.last = t
	ok := l.tokens >= 1
	l.tokens--
	return ok
}
func (l *debtBucket) RetryAfter(float64) float64 { return 1 }

// TestLimiterRefusalsUseQuota: limiters whose refusals use quota (a sliding
// log that logs them, a bucket that goes into debt), under traffic that
// pauses long enough to recover: the fit names them, their limit and window,
// and says the 429s used quota; the usual ones are said not to (an
// acceptance soon after a refusal would have been impossible had it counted:
// the fit used to say only "yes" or "cannot tell").
func TestLimiterRefusalsUseQuota(t *testing.T) {
	for _, tc := range []struct {
		algo    string
		lim     func() limitfittest.Limiter
		counted bool
	}{
		{limitfit.Sliding, func() limitfittest.Limiter { return &countingSliding{limit: 7, w: 5} }, true},
		{limitfit.TokenBucket, func() limitfittest.Limiter { return &debtBucket{rate: 7.0 / 5, capacity: 7, tokens: 7} }, true},
		{limitfit.Sliding, func() limitfittest.Limiter { return &limitfittest.Sliding{Limit: 7, W: 5} }, false},
		{limitfit.TokenBucket, func() limitfittest.Limiter { return &limitfittest.Bucket{Rate: 7.0 / 5, Capacity: 7} }, false},
	} {
		t.Run(fmt.Sprintf("%s/counted=%v", tc.algo, tc.counted), func(t *testing.T) {
			recs := limitfittest.Decisions(tc.lim(), t0, burstsAndPauses(6, 300), 0.02, 3)
			alg := limitfit.Classify(map[string][]limitfit.Request{"c1": recs}, []string{"c1"}, time.Duration(5e9), 7)
			if alg.Verdict != tc.algo || alg.Limit != 7 || alg.Window != 5 {
				t.Errorf("%s, %g per %gs; want %s, 7 per 5s\n%q", alg.Verdict, alg.Limit, alg.Window, tc.algo, alg.Evidence)
			}
			if want := map[bool]string{true: limitfit.QuotaYes, false: limitfit.QuotaNo}[tc.counted]; alg.RefusalsUseQuota != want {
				t.Errorf("refusals use quota %q, want %q\n%q", alg.RefusalsUseQuota, want, alg.Evidence)
			}
		})
	}
}

// burstsAndPauses returns bursts of 5–20 requests at 3–8 a second, each
// followed by 2–10 s of quiet, up to to (s): a limiter whose refusals use
// quota recovers only in the quiet.
func burstsAndPauses(seed uint64, to float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 19))
	var out []float64
	for t := 0.0; t < to; t += 2 + 8*rng.Float64() {
		n, rate := 5+rng.IntN(16), 3+5*rng.Float64()
		for range n {
			t += rng.ExpFloat64() / rate
			out = append(out, t)
		}
	}
	return out
}

// TestLimiterShortTrace: two clients each send a short burst past a token
// bucket (10/s, capacity 20) and stop, like characterise's isolation probe:
// a few 429s, a recovery or two. The trace cannot tell a window read off its
// own 429s from the bucket; the fit used to name a sliding window (9 per
// 90 ms, "429s used quota: yes") for most phases. It may name the bucket or
// say cannot tell, never a window limiter.
func TestLimiterShortTrace(t *testing.T) {
	for _, per := range []float64{50, 100} {
		for _, n := range []float64{35, 50} {
			for seed := range uint64(40) {
				ph := float64(seed) * 0.0131
				clients := map[string][]limitfit.Request{
					"c1": limitfittest.Decisions(&limitfittest.Bucket{Rate: 10, Capacity: 20}, t0, limitfittest.Steady(per, ph, ph+n/per), 0.02, seed),
					"c2": limitfittest.Decisions(&limitfittest.Bucket{Rate: 10, Capacity: 20}, t0, limitfittest.Steady(per, ph+0.01, ph+0.01+n/per), 0.02, seed+100),
				}
				alg := limitfit.Classify(clients, []string{"c1", "c2"}, time.Duration(0), 0)
				if alg.Verdict == limitfit.Sliding || alg.Verdict == limitfit.Fixed {
					t.Errorf("%g/s, %g each, seed %d: %s, %g per %gs (429s used quota: %s)\n%q",
						per, n, seed, alg.Verdict, alg.Limit, alg.Window, alg.RefusalsUseQuota, alg.Evidence)
				}
			}
		}
	}
}
