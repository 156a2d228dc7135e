package harness

import (
	"os"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func TestWaitGrace(t *testing.T) {
	tests := []struct {
		name    string
		doneAt  time.Duration // when done starts to report true; <0 never
		abortAt time.Duration // when abort is closed; <0 never
		grace   time.Duration
		want    string
		took    time.Duration
	}{
		// All callbacks already in: no wait at all.
		{"already complete", 0, -1, time.Minute, graceComplete, 0},
		// The last callback comes 7s in: the wait ends at the first poll after it.
		{"completes during grace", 7 * time.Second, -1, time.Minute, graceComplete, 8 * time.Second},
		// Nothing more comes: the whole grace period is waited.
		{"grace runs out", -1, -1, 30 * time.Second, graceElapsed, 30 * time.Second},
		// A second Ctrl-C cuts the wait short.
		{"aborted", -1, 3 * time.Second, time.Minute, graceAborted, 3 * time.Second},
		// No grace period configured: returns at once.
		{"zero grace", -1, -1, 0, graceElapsed, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				done := func() bool { return tt.doneAt >= 0 && time.Since(start) >= tt.doneAt }
				abort := make(chan struct{})
				if tt.abortAt >= 0 {
					time.AfterFunc(tt.abortAt, func() { close(abort) })
				}
				got := waitGrace(tt.grace, 2*time.Second, done, abort)
				if got != tt.want {
					t.Errorf("waitGrace = %q, want %q", got, tt.want)
				}
				if took := time.Since(start); took != tt.took {
					t.Errorf("waited %v, want %v", took, tt.took)
				}
			})
		})
	}
}

func TestInterrupts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sig := make(chan os.Signal, 3)
		quit := make(chan struct{})
		defer close(quit)
		stop, abort := interrupts(sig, quit)
		closed := func(c <-chan struct{}) bool {
			select {
			case <-c:
				return true
			default:
				return false
			}
		}
		synctest.Wait()
		if closed(stop) || closed(abort) {
			t.Fatal("stop or abort closed before any signal")
		}
		sig <- os.Interrupt
		synctest.Wait()
		if !closed(stop) || closed(abort) {
			t.Fatal("first signal: want stop closed and abort open")
		}
		sig <- syscall.SIGTERM
		synctest.Wait()
		if !closed(abort) {
			t.Fatal("second signal: want abort closed")
		}
		sig <- os.Interrupt // a third signal is ignored, never a close of a closed channel
		synctest.Wait()
	})
}
