package attack

import (
	"context"
	"sync"
	"time"
)

// windowLimiter keeps one client at or under n requests in any sliding window
// of length w as the service counts them, and away from the service while a
// Retry-After holds. Waiters are served one at a time, in arrival order, so a
// send is delayed but never dropped.
//
// A window is counted from when a request's answer came back, not from when it
// was let go: the service saw the request at some moment between the two, so a
// request let go a window after the n-th last answer reaches the service more
// than a window after that one did, however long either spent on the way. A
// limiter that counted from the grant would put two requests in one of the
// service's windows whenever the first was slowed (a busy machine, a queue in
// the service) and the second was not, and answer 429 to a client that meant
// to respect the limit. The price is a rate at most n per (w + answer time).
type windowLimiter struct {
	n    int
	w    time.Duration
	turn chan struct{} // a one-slot lock that a waiting caller can give up on
	done chan struct{} // one slot: a request was answered (wakes the waiter)

	mu    sync.Mutex
	ring  []time.Time // the last n grants: when each was answered (the grant time while in flight)
	busy  []bool      // a grant not yet answered
	next  int         // the oldest of the last n grants
	fill  int
	until time.Time // Retry-After: no request before this
}

func newWindowLimiter(n int, w time.Duration) *windowLimiter {
	return &windowLimiter{n: n, w: w, turn: make(chan struct{}, 1), done: make(chan struct{}, 1),
		ring: make([]time.Time, n), busy: make([]bool, n)}
}

// wait blocks until a request may leave, records it as in flight and returns
// its slot, to hand to answered when the request is over (answered, failed or
// never sent). It fails when ctx ends first, and at once with an errPastEnd
// when the request could leave only after end (nil: no end): a Retry-After
// block past it (gaveUpRetryAfter) or a full window (gaveUpLimit).
func (l *windowLimiter) wait(ctx context.Context, end *runEnd) (int, error) {
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return -1, ctx.Err()
	}
	defer func() { <-l.turn }()
	for {
		now := time.Now()
		l.mu.Lock()
		until := l.until
		at, inFlight := until, false
		if l.fill == l.n {
			// The oldest of the last n must be answered, and a full window ago.
			if l.busy[l.next] {
				inFlight = true
			} else if t := l.ring[l.next].Add(l.w); t.After(at) {
				at = t
			}
		}
		if !inFlight && !at.After(now) {
			slot := l.next
			l.ring[slot], l.busy[slot] = now, true
			l.next = (l.next + 1) % l.n
			if l.fill < l.n {
				l.fill++
			}
			l.mu.Unlock()
			return slot, nil
		}
		l.mu.Unlock()
		dl, moved := end.get()
		if !dl.IsZero() {
			switch {
			case until.After(dl):
				return -1, errPastEnd{gaveUpRetryAfter}
			case at.After(dl) || (inFlight && !now.Before(dl)):
				return -1, errPastEnd{gaveUpLimit}
			}
		}
		wake := at
		if inFlight {
			// Woken by the answer; at the latest at the run's end, to give up.
			wake = dl
		}
		var t *time.Timer
		var timer <-chan time.Time
		if !wake.IsZero() && wake.After(now) {
			t = time.NewTimer(wake.Sub(now))
			timer = t.C
		}
		var err error
		select {
		case <-timer:
		case <-l.done:
		case <-moved:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if t != nil {
			t.Stop()
		}
		if err != nil {
			return -1, err
		}
	}
}

// answered marks the request of slot (from wait) as over now: its window
// starts here. A negative slot is ignored.
func (l *windowLimiter) answered(slot int) {
	if slot < 0 {
		return
	}
	l.mu.Lock()
	l.ring[slot], l.busy[slot] = time.Now(), false
	l.mu.Unlock()
	select {
	case l.done <- struct{}{}:
	default:
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
