package characterise

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/throttled/throttled/v2"
	"golang.org/x/time/rate"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/sim"
)

// Limiters nobody here wrote, in front of the simulator with its own limit
// off, keyed by the bearer token (one per client): golang.org/x/time/rate's
// token bucket (10 a second, burst 20) and throttled's GCRA (10 a second,
// MaxBurst 19: 20 at once). Each is a token bucket of 10 a second and
// capacity 20, and characterise, as against a real target, names it so —
// or says it cannot tell when a probe's run did not hold its plan, never a
// wrong value. The burst probe alone (every rule held here is its), about
// half a minute each after its cool-down: skipped with -short.
func TestLimiterLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("half a minute of traffic per limiter: not with -short")
	}
	t.Parallel()
	for name, allow := range map[string]func(key string) (bool, time.Duration){
		"x-time-rate":    xTimeRate(10, 20),
		"throttled-gcra": throttledGCRA(t, 10, 19),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := characteriseOnly(t, limitedSim(t, allow), Options{Budget: 300, MaxWindow: 4 * time.Second, MaxTime: 2 * time.Minute}, probeBurst)
			checkFindings(t, res.Contract, map[string]string{RuleAlgorithm: "token bucket", RuleLimit: "20/2s", RuleCapacity: "20", RuleRetryAfter: "present"},
				func(f reports.Finding) bool { return *f.Low >= 20 && *f.Low <= 30 }) // the burst also takes what refilled while it went
			var text strings.Builder
			_ = res.Contract.Text(&text)
			t.Log(text.String())
		})
	}
}

// xTimeRate is a golang.org/x/time/rate limiter per key, refusing (never
// waiting) past it.
func xTimeRate(perSecond float64, burst int) func(string) (bool, time.Duration) {
	var mu sync.Mutex
	ls := map[string]*rate.Limiter{}
	return func(key string) (bool, time.Duration) {
		mu.Lock()
		l := ls[key]
		if l == nil {
			l = rate.NewLimiter(rate.Limit(perSecond), burst)
			ls[key] = l
		}
		mu.Unlock()
		if l.Allow() {
			return true, 0
		}
		return false, time.Duration((1 - l.Tokens()) / perSecond * float64(time.Second)) // until a token is there
	}
}

// throttledGCRA is throttled's GCRA limiter of perSecond and maxBurst per
// key (maxBurst + 1 at once), refusing past it. One decision at a time:
// concurrent ones race on the store's compare-and-swap, and after ten lost
// races throttled gives up with an error, which must not pass for a 429
// that no limit made (the tests run many at once on a busy machine); an
// error is the test's.
func throttledGCRA(t *testing.T, perSecond, maxBurst int) func(string) (bool, time.Duration) {
	t.Helper()
	gcra, err := throttled.NewGCRARateLimiterCtx(newGCRAStore(), throttled.RateQuota{MaxRate: throttled.PerSec(perSecond), MaxBurst: maxBurst})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	return func(key string) (bool, time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		limited, res, err := gcra.RateLimitCtx(context.Background(), key, 1)
		if err != nil {
			t.Errorf("throttled's GCRA: %v", err)
		}
		return err == nil && !limited, res.RetryAfter
	}
}

// limitedSim is a characterisation file against limitedServer.
func limitedSim(t *testing.T, allow func(string) (bool, time.Duration)) *File {
	t.Helper()
	u := limitedServer(t, allow)
	return targetFile(t, "lib", u, u)
}

// limitedServer serves the simulator (its limit off) behind allow, keyed
// by the Authorization header, answering 429 with Retry-After (whole
// seconds, rounded up) when allow refuses; it returns its URL.
func limitedServer(t *testing.T, allow func(string) (bool, time.Duration)) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.RateLimit.Requests = 0
	sv, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sv.Close() })
	inner := sv.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := r.Header.Get("Authorization"); key != "" {
			if ok, wait := allow(key); !ok {
				w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(max(wait.Seconds(), 1))), 10))
				http.Error(w, `{"status":429,"error":"too_many_requests","message":"slow down"}`, http.StatusTooManyRequests)
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// gcraStore is throttled's GCRA store in memory (its memstore would bring
// an LRU cache module for nothing).
type gcraStore struct {
	mu sync.Mutex
	m  map[string]int64
}

func newGCRAStore() *gcraStore { return &gcraStore{m: map[string]int64{}} }

func (s *gcraStore) GetWithTime(_ context.Context, key string) (int64, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	if !ok {
		v = -1
	}
	return v, time.Now(), nil
}

func (s *gcraStore) SetIfNotExistsWithTTL(_ context.Context, key string, v int64, _ time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; ok {
		return false, nil
	}
	s.m[key] = v
	return true, nil
}

func (s *gcraStore) CompareAndSwapWithTTL(_ context.Context, key string, old, v int64, _ time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.m[key]; !ok || cur != old {
		return false, nil
	}
	s.m[key] = v
	return true, nil
}
