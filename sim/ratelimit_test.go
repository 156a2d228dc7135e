package sim

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// With rateLimit.countFailures off, a request answered with an injected 500
// is decided by the limiter but uses no quota: every request of a client at
// many times the limit is answered 500, none 429. On (the default) the 500s
// use quota, and past the limit come 429s.
func TestRateLimitCountFailures(t *testing.T) {
	for _, alg := range []string{AlgSliding, AlgFixed, AlgTokenBucket} {
		for _, count := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/count=%v", alg, count), func(t *testing.T) {
				cfg := engineConfig()
				cfg.RateLimit = RateLimit{Requests: 5, Window: time.Hour, Algorithm: alg, CountFailures: count}
				cfg.Faults.Error500 = 1
				s, _ := newFakeSim(t, cfg)
				tok := token(t, s, "demo-1")
				codes := map[int]int{}
				for range 12 {
					w := do(s, http.MethodPost, "/api/v1/notifications", `{}`, "Authorization", "Bearer "+tok)
					codes[w.Code]++
				}
				want := map[int]int{500: 12}
				if count {
					want = map[int]int{500: 5, 429: 7}
				}
				if fmt.Sprint(codes) != fmt.Sprint(want) {
					t.Errorf("codes %v, want %v", codes, want)
				}
			})
		}
	}
}

// A request that uses no quota leaves the limiter as it was: the sliding log
// keeps its window, the fixed window its count, the bucket its tokens.
func TestLimiterUncounted(t *testing.T) {
	epoch := time.Unix(1000, 0)
	for _, alg := range []string{AlgSliding, AlgFixed, AlgTokenBucket} {
		l := newLimiter(3, time.Hour, alg, epoch, false)
		for i := range 10 {
			if v := l.allow("c", epoch.Add(time.Duration(i)), false); !v.ok {
				t.Fatalf("%s: uncounted request %d refused", alg, i)
			}
		}
		for i := range 4 {
			if v := l.allow("c", epoch.Add(time.Duration(10+i)), true); v.ok != (i < 3) {
				t.Errorf("%s: counted request %d: ok %v", alg, i, v.ok)
			}
		}
	}
}

// With count429 a refusal uses quota: the sliding log logs it, the bucket
// goes into debt; without, the same requests pass.
func TestLimiterCount429(t *testing.T) {
	epoch := time.Unix(1000, 0)
	at := func(s float64) time.Time { return epoch.Add(time.Duration(s * float64(time.Second))) }
	for _, tc := range []struct {
		alg      string
		refused  []float64 // refused after the limit was used at 0
		then     float64   // passes only without count429
		requests int
	}{
		// 3 per 10s: refusals at 5, 6, 7 fill (2, 12] when they count.
		{AlgSliding, []float64{5, 6, 7}, 12, 3},
		// 2 per 10s (0.2 a second): the refusal at 1 leaves a debt of 0.8.
		{AlgTokenBucket, []float64{1}, 5, 2},
	} {
		for _, count := range []bool{false, true} {
			l := newLimiter(tc.requests, 10*time.Second, tc.alg, epoch, count)
			for i := range tc.requests {
				if !l.allow("c", at(0), true).ok {
					t.Fatalf("%s: request %d at 0 refused", tc.alg, i)
				}
			}
			for _, s := range tc.refused {
				if l.allow("c", at(s), true).ok {
					t.Fatalf("%s count429=%v: request at %gs accepted", tc.alg, count, s)
				}
			}
			if ok := l.allow("c", at(tc.then), true).ok; ok == count {
				t.Errorf("%s count429=%v: request at %gs ok=%v", tc.alg, count, tc.then, ok)
			}
		}
	}
}
