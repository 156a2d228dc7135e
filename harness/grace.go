package harness

import (
	"os"
	"time"
)

// Why the grace wait ended.
const (
	graceComplete = "complete" // every accepted message reached a terminal state
	graceElapsed  = "elapsed"  // the grace period ran out
	graceAborted  = "aborted"  // a second interrupt
)

// waitGrace waits for late callbacks after the attack: until done reports true,
// the grace period runs out, or abort is closed. done is polled every poll; it
// is asked once at the start so a run whose callbacks all arrived ends at once.
func waitGrace(grace, poll time.Duration, done func() bool, abort <-chan struct{}) string {
	if done() {
		return graceComplete
	}
	if grace <= 0 {
		return graceElapsed
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-abort:
			return graceAborted
		case <-deadline.C:
			if done() {
				return graceComplete
			}
			return graceElapsed
		case <-tick.C:
			if done() {
				return graceComplete
			}
		}
	}
}

// interrupts turns a stream of signals into two steps: the first closes stop
// (no new sends; the grace period is still waited), the second closes abort
// (stop waiting, flush what was collected, exit). Further signals are ignored.
// The goroutine ends when quit is closed.
func interrupts(sig <-chan os.Signal, quit <-chan struct{}) (stop, abort <-chan struct{}) {
	s, a := make(chan struct{}), make(chan struct{})
	go func() {
		for n := 0; n < 2; n++ {
			select {
			case <-sig:
			case <-quit:
				return
			}
			if n == 0 {
				close(s)
			} else {
				close(a)
			}
		}
	}()
	return s, a
}
