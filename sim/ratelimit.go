package sim

import (
	"math"
	"sync"
	"time"
)

// limiter decides per client whether a request is within the limit. An
// accepted request counts against it unless the caller says it will fail
// (rateLimit.countFailures off); a refused one only with count429.
type limiter struct {
	mu       sync.Mutex
	limit    int
	window   time.Duration
	alg      string
	epoch    time.Time
	count429 bool
	clients  map[string]*clientLimit
}

type clientLimit struct {
	// sliding: ring of the times of the last `limit` accepted requests.
	ring []time.Time
	head int
	n    int
	// fixed: count in window idx.
	idx   int64
	count int
	// token bucket.
	tokens float64
	last   time.Time
}

// verdict is a limiter decision with what the headers need.
type verdict struct {
	ok         bool
	retryAfter time.Duration // until a request would be accepted again (refusals)
	remaining  int           // requests left in the current window
	reset      time.Duration // until the window frees quota
}

func newLimiter(limit int, window time.Duration, alg string, epoch time.Time, count429 bool) *limiter {
	return &limiter{limit: limit, window: window, alg: alg, epoch: epoch, count429: count429, clients: map[string]*clientLimit{}}
}

// allow decides the request of client at now. An accepted request uses quota
// only when count is true: a service that skips failed requests (the answer
// will be a 5xx or a reset) decides them like any other, but does not count
// them (express-rate-limit's skipFailedRequests).
func (l *limiter) allow(client string, now time.Time, count bool) verdict {
	if l == nil || l.limit <= 0 {
		return verdict{ok: true, remaining: math.MaxInt32}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.clients[client]
	if c == nil {
		c = &clientLimit{tokens: float64(l.limit), last: now}
		if l.alg == AlgSliding {
			c.ring = make([]time.Time, l.limit)
		}
		l.clients[client] = c
	}
	switch l.alg {
	case AlgFixed:
		idx := int64(now.Sub(l.epoch) / l.window)
		if idx != c.idx {
			c.idx, c.count = idx, 0
		}
		end := l.epoch.Add(time.Duration(idx+1) * l.window)
		if c.count >= l.limit {
			if l.count429 {
				c.count++ // no effect on the decisions: the window is full until it ends
			}
			return verdict{retryAfter: end.Sub(now), reset: end.Sub(now)}
		}
		if count {
			c.count++
		}
		return verdict{ok: true, remaining: l.limit - c.count, reset: end.Sub(now)}
	case AlgTokenBucket:
		rate := float64(l.limit) / l.window.Seconds() // tokens per second
		c.tokens = math.Min(float64(l.limit), c.tokens+now.Sub(c.last).Seconds()*rate)
		c.last = now
		if c.tokens < 1 {
			wait := time.Duration((1 - c.tokens) / rate * float64(time.Second))
			if l.count429 {
				c.tokens-- // into debt, as a reservation of golang.org/x/time/rate
			}
			return verdict{retryAfter: wait, reset: wait}
		}
		if count {
			c.tokens--
		}
		full := time.Duration((float64(l.limit) - c.tokens) / rate * float64(time.Second))
		return verdict{ok: true, remaining: int(c.tokens), reset: full}
	default: // sliding log: at most limit accepted in any (now-window, now].
		// Drop what left the window.
		for c.n > 0 {
			oldest := c.ring[(c.head-c.n+l.limit)%l.limit]
			if now.Sub(oldest) < l.window {
				break
			}
			c.n--
		}
		if c.n >= l.limit {
			oldest := c.ring[(c.head-c.n+l.limit)%l.limit]
			wait := oldest.Add(l.window).Sub(now)
			if l.count429 {
				// Logged too: the ring keeps the last limit counted, and a request is
				// refused while all of them are within the window.
				c.ring[c.head] = now
				c.head = (c.head + 1) % l.limit
			}
			return verdict{retryAfter: wait, reset: wait}
		}
		if count {
			c.ring[c.head] = now
			c.head = (c.head + 1) % l.limit
			c.n++
		}
		if c.n == 0 {
			return verdict{ok: true, remaining: l.limit}
		}
		oldest := c.ring[(c.head-c.n+l.limit)%l.limit]
		return verdict{ok: true, remaining: l.limit - c.n, reset: oldest.Add(l.window).Sub(now)}
	}
}

// ceilSeconds rounds d up to whole seconds, at least 1 when d > 0.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
