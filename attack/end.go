package attack

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Reasons a send was given up, as recorded in Attempt.GaveUp: the policy (or
// the plan) wanted it to leave, but it would have left after the run's end or
// the run was interrupted first.
const (
	gaveUpRetryAfter = "retry_after_past_end" // a Retry-After (the answer's, or the client's limiter block) ends after the run's end
	gaveUpBackoff    = "backoff_past_end"     // the backoff wait ends after the run's end
	gaveUpLimit      = "limit_past_end"       // respect mode: the client's window frees a slot only after the run's end
	gaveUpStopped    = "stopped"              // the run was interrupted (first signal) while the send waited
)

// errPastEnd is a wait that would end after the run's end; reason is one of
// the GaveUp values.
type errPastEnd struct{ reason string }

func (e errPastEnd) Error() string { return "would leave after the run's end: " + e.reason }

// gaveUpReason names why a wait failed: past the run's end, or stopped.
func gaveUpReason(err error) string {
	var pe errPastEnd
	if errors.As(err, &pe) {
		return pe.reason
	}
	return gaveUpStopped
}

// runEnd is the moment after which no send leaves: the load's end plus
// Options.Grace. With Duration it is known when the attack starts; when the
// pacer stops sooner (a request count, a replay) it moves to then plus Grace,
// and waiters are woken to look again. Zero: no end known (Grace 0).
type runEnd struct {
	at    atomic.Int64  // Unix ns; 0 = none
	final atomic.Bool   // moved is closed
	moved chan struct{} // closed when the pacer stops
	once  sync.Once
}

func newRunEnd() *runEnd { return &runEnd{moved: make(chan struct{})} }

// get returns the end (zero when none) and a channel closed when it may move
// nearer (nil once it cannot move any more). A nil *runEnd has no end.
func (r *runEnd) get() (time.Time, <-chan struct{}) {
	if r == nil {
		return time.Time{}, nil
	}
	var ch <-chan struct{}
	if !r.final.Load() {
		ch = r.moved
	}
	if ns := r.at.Load(); ns != 0 {
		return time.Unix(0, ns), ch
	}
	return time.Time{}, ch
}

// set fixes the end at t unless an earlier one is known.
func (r *runEnd) set(t time.Time) {
	for {
		old := r.at.Load()
		if old != 0 && old <= t.UnixNano() {
			return
		}
		if r.at.CompareAndSwap(old, t.UnixNano()) {
			return
		}
	}
}

// loadEnded moves the end to t (the pacer stopped at t - grace) and wakes
// the waiters.
func (r *runEnd) loadEnded(t time.Time) {
	r.once.Do(func() {
		r.set(t)
		r.final.Store(true)
		close(r.moved)
	})
}

// pause waits d unless ctx ends (gaveUpStopped) or the run's end comes before
// now+d (a past-end reason, at once or as soon as the end moves). ""
// means it waited fully.
func (e *engine) pause(ctx context.Context, d time.Duration, pastEnd string) string {
	leave := time.Now().Add(d)
	var t *time.Timer
	if d > 0 {
		t = time.NewTimer(d)
		defer t.Stop()
	}
	for {
		end, moved := e.end.get()
		if !end.IsZero() && leave.After(end) {
			return pastEnd
		}
		if ctx.Err() != nil {
			return gaveUpStopped
		}
		if t == nil {
			return ""
		}
		select {
		case <-t.C:
			return ""
		case <-ctx.Done():
			return gaveUpStopped
		case <-moved:
		}
	}
}
