package attack

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestDeadlines: every attempt gets at least the timeout and at most a tick
// more; attempts of one tick share a context, a later tick has its own; a
// tick's context is cancelled when its last attempt is over and a later tick
// began, never while an attempt uses it; the abort cancels what is in use.
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
		var held []*tickCtx // attempts still running: one in every 10 steps
		for step := range 300 {
			now := time.Now()
			c := d.get(now)
			dl, ok := c.Deadline()
			if !ok || dl.Before(now.Add(timeout)) || dl.After(now.Add(timeout+tick)) {
				t.Fatalf("step %d: deadline %v for an attempt at %v, want within [%v, %v]", step, dl, now, now.Add(timeout), now.Add(timeout+tick))
			}
			if c.Err() != nil {
				t.Fatalf("step %d: context ended at once: %v", step, c.Err())
			}
			again := d.get(now)
			if again != c {
				t.Fatalf("step %d: two attempts of one tick got different contexts", step)
			}
			d.put(again)
			if step%10 == 0 {
				held = append(held, c)
			} else {
				d.put(c)
			}
			time.Sleep(3 * time.Millisecond)
		}
		// The ticks with an attempt still running, and the latest.
		if d.live > len(held)+1 {
			t.Fatalf("%d tick contexts live with %d attempts running", d.live, len(held))
		}
		for _, c := range held {
			if c.Err() != nil {
				t.Fatalf("a context in use was cancelled: %v", c.Err())
			}
		}
		first := held[0]
		time.Sleep(timeout)
		synctest.Wait() // the contexts' own timers
		if first.Err() != context.DeadlineExceeded {
			t.Fatalf("an attempt's context past its deadline: %v", first.Err())
		}
		for _, c := range held {
			d.put(c)
		}
		if d.live != 1 {
			t.Fatalf("%d tick contexts live after every attempt ended (want the latest only)", d.live)
		}
		c := d.get(time.Now())
		cancelAbort()
		synctest.Wait()
		if c.Err() != context.Canceled {
			t.Fatalf("abort did not cancel an attempt's context: %v", c.Err())
		}
		d.put(c)
		d.release()
		if d.live != 0 {
			t.Fatalf("%d tick contexts live after release", d.live)
		}
	})
	// A short timeout has a finer tick.
	if d := newDeadlines(context.Background(), 50*time.Millisecond); time.Duration(d.tick) != 500*time.Microsecond {
		t.Fatalf("tick %v for a 50 ms timeout", time.Duration(d.tick))
	}
}
