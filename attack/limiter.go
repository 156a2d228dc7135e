package attack

import (
	"context"
	"sync"
	"time"
)

// windowLimiter keeps one client at or under n requests in any sliding window
// of length w, and away from the service while a Retry-After holds. Waiters are
// served one at a time, in arrival order, so a send is delayed but never dropped.
type windowLimiter struct {
	n    int
	w    time.Duration
	turn chan struct{} // a one-slot lock that a waiting caller can give up on
	ring []time.Time   // the last n grants (under turn), oldest at next
	next int
	fill int

	mu    sync.Mutex
	until time.Time // Retry-After: no request before this
}

func newWindowLimiter(n int, w time.Duration) *windowLimiter {
	return &windowLimiter{n: n, w: w, turn: make(chan struct{}, 1), ring: make([]time.Time, n)}
}

// wait blocks until a request may leave, records it as leaving now and returns
// the time granted. It fails only when ctx ends first.
func (l *windowLimiter) wait(ctx context.Context) (time.Time, error) {
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
	defer func() { <-l.turn }()
	for {
		now := time.Now()
		l.mu.Lock()
		at := l.until
		l.mu.Unlock()
		if l.fill == l.n {
			// The oldest of the last n grants must be a full window ago.
			if t := l.ring[l.next].Add(l.w); t.After(at) {
				at = t
			}
		}
		if !at.After(now) {
			l.ring[l.next] = now
			l.next = (l.next + 1) % l.n
			if l.fill < l.n {
				l.fill++
			}
			return now, nil
		}
		t := time.NewTimer(at.Sub(now))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, ctx.Err()
		}
	}
}

// block keeps the client away until t (a Retry-After answer); a later block
// never shortens an earlier one.
func (l *windowLimiter) block(t time.Time) {
	l.mu.Lock()
	if t.After(l.until) {
		l.until = t
	}
	l.mu.Unlock()
}
