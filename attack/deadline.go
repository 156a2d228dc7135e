package attack

import (
	"context"
	"sync"
	"time"
)

// deadlines hands out the contexts that bound each attempt to the run's
// request timeout. A context per attempt costs a timer, a cancel context,
// its done channel and a child map for net/http's own per-request context —
// about 1 KiB and several wake-ups per request at thousands a second — so the
// attempts that begin within one tick share a context whose deadline is the
// timeout after the tick's end: an attempt gets at least the timeout and at
// most one tick more (tick: a hundredth of the timeout, from 1 µs up to
// 10 ms). Cancelling parent (the run's abort) cancels them all.
type deadlines struct {
	parent  context.Context
	timeout time.Duration
	tick    int64 // ns

	mu      sync.Mutex
	at      int64 // the tick of cur
	cur     context.Context
	pending []expiring // contexts not yet past their deadline, oldest first
}

type expiring struct {
	deadline time.Time
	cancel   context.CancelFunc
}

func newDeadlines(parent context.Context, timeout time.Duration) *deadlines {
	tick := min(max(timeout/100, time.Microsecond), 10*time.Millisecond)
	return &deadlines{parent: parent, timeout: timeout, tick: int64(tick)}
}

// get returns the context for an attempt that begins at now.
func (d *deadlines) get(now time.Time) context.Context {
	k := now.UnixNano() / d.tick
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur != nil && k == d.at {
		return d.cur
	}
	// Release the contexts whose deadline has passed (their timers already
	// cancelled them; cancel frees them from the parent at once).
	i := 0
	for ; i < len(d.pending) && !d.pending[i].deadline.After(now); i++ {
		d.pending[i].cancel()
	}
	d.pending = append(d.pending[:0], d.pending[i:]...)
	end := time.Unix(0, (k+1)*d.tick).Add(d.timeout)
	ctx, cancel := context.WithDeadline(d.parent, end)
	d.pending = append(d.pending, expiring{end, cancel})
	d.at, d.cur = k, ctx
	return ctx
}

// release cancels every context handed out: the run is over.
func (d *deadlines) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.pending {
		p.cancel()
	}
	d.pending, d.cur = nil, nil
}
