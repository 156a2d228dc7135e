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
		l := newLimiter(3, time.Hour, alg, epoch)
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
