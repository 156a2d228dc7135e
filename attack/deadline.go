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
// 10 ms). A tick's context is cancelled (its timer and child map freed) as
// soon as its last attempt is over and a later tick has begun; cancelling
// parent (the run's abort) cancels them all.
type deadlines struct {
	parent  context.Context
	timeout time.Duration
	tick    int64 // ns

	mu   sync.Mutex
	cur  *tickCtx // the latest tick's
	live int      // ticks not yet cancelled (a test's view)
}

// tickCtx is the context shared by the attempts of one tick.
type tickCtx struct {
	context.Context
	cancel context.CancelFunc
	tick   int64
	users  int // attempts not yet over
}

func newDeadlines(parent context.Context, timeout time.Duration) *deadlines {
	tick := min(max(timeout/100, time.Microsecond), 10*time.Millisecond)
	return &deadlines{parent: parent, timeout: timeout, tick: int64(tick)}
}

// get returns the context for an attempt that begins at now; the attempt
// calls put with it when it is over (its answer read or failed).
func (d *deadlines) get(now time.Time) *tickCtx {
	k := now.UnixNano() / d.tick
	d.mu.Lock()
	if c := d.cur; c != nil && c.tick == k {
		c.users++
		d.mu.Unlock()
		return c
	}
	c := d.next(k)
	d.mu.Unlock()
	return c
}

// next begins tick k's context, d.mu held.
func (d *deadlines) next(k int64) *tickCtx {
	if c := d.cur; c != nil && c.users == 0 {
		d.done(c)
	}
	ctx, cancel := context.WithDeadline(d.parent, time.Unix(0, (k+1)*d.tick).Add(d.timeout))
	d.cur = &tickCtx{Context: ctx, cancel: cancel, tick: k, users: 1}
	d.live++
	return d.cur
}

// put ends an attempt that get's context bound.
func (d *deadlines) put(c *tickCtx) {
	d.mu.Lock()
	if c.users--; c.users == 0 && c != d.cur {
		d.done(c)
	}
	d.mu.Unlock()
}

func (d *deadlines) done(c *tickCtx) {
	c.cancel()
	d.live--
}

// release cancels the latest tick's context: the run is over.
func (d *deadlines) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.cur; c != nil {
		d.cur = nil
		if c.users == 0 {
			d.done(c)
		} else {
			c.cancel() // an attempt still running is cut off: the run is over
		}
	}
}
