package attack

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestDeadlines: every attempt gets at least the timeout and at most a tick
// more; attempts of one tick share a context, the next tick has its own;
// expired contexts are let go; the abort and release cancel what is left.
func TestDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		abort, cancelAbort := context.WithCancel(context.Background())
		defer cancelAbort()
		const timeout = time.Second
		d := newDeadlines(abort, timeout)
		tick := time.Duration(d.tick)
		if tick != 10*time.Millisecond {
			t.Fatalf("tick %v for a 1 s timeout, want 10ms", tick)
		}
		for step := range 300 {
			now := time.Now()
			ctx := d.get(now)
			dl, ok := ctx.Deadline()
			if !ok || dl.Before(now.Add(timeout)) || dl.After(now.Add(timeout+tick)) {
				t.Fatalf("step %d: deadline %v for an attempt at %v, want within [%v, %v]", step, dl, now, now.Add(timeout), now.Add(timeout+tick))
			}
			if ctx.Err() != nil {
				t.Fatalf("step %d: context ended at once: %v", step, ctx.Err())
			}
			if again := d.get(now); again != ctx {
				t.Fatalf("step %d: two attempts of one tick got different contexts", step)
			}
			time.Sleep(3 * time.Millisecond)
			if step%4 == 3 && d.get(time.Now()) == ctx && time.Now().UnixNano()/d.tick != now.UnixNano()/d.tick {
				t.Fatalf("step %d: a new tick kept the old context", step)
			}
		}
		// 300 × 3 ms = 0.9 s: the contexts of the first ticks are past their
		// deadline only after a second; at most timeout/tick + 1 are held.
		if n := len(d.pending); n > int(timeout/tick)+2 {
			t.Fatalf("%d contexts held for a %v timeout at a %v tick", n, timeout, tick)
		}
		old := d.get(time.Now())
		time.Sleep(timeout + tick)
		synctest.Wait() // the context's own timer, due at the same instant
		if old.Err() != context.DeadlineExceeded {
			t.Fatalf("a context past its deadline: %v", old.Err())
		}
		live := d.get(time.Now())
		if n := len(d.pending); n != 1 {
			t.Fatalf("%d contexts held after all but one expired", n)
		}
		cancelAbort()
		synctest.Wait()
		if live.Err() != context.Canceled {
			t.Fatalf("abort did not cancel an attempt's context: %v", live.Err())
		}
		d.release()
		if len(d.pending) != 0 {
			t.Fatal("release kept contexts")
		}
	})
	// A short timeout has a finer tick.
	if d := newDeadlines(context.Background(), 50*time.Millisecond); time.Duration(d.tick) != 500*time.Microsecond {
		t.Fatalf("tick %v for a 50 ms timeout", time.Duration(d.tick))
	}
}
