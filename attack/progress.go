package attack

import (
	"sync/atomic"
	"time"
)

// Progress holds live counters of a running attack, safe to read at any time
// (for a progress bar) while Run updates them.
type Progress struct {
	Sent        atomic.Int64 // messages sent (first attempts)
	Accepted    atomic.Int64 // messages whose last send attempt got a 2xx
	RateLimited atomic.Int64 // 429 answers
	Errors      atomic.Int64 // attempts that failed (non-2xx or no answer), any operation
	Retries     atomic.Int64 // retry attempts
	InFlight    atomic.Int64 // HTTP requests waiting for an answer
	Late        atomic.Int64 // first attempts that left later than planned
	Requests    atomic.Int64 // HTTP requests of every operation
	Probes      atomic.Int64 // idempotency probes sent
	Mismatches  atomic.Int64 // probes answered with another notificationId
	GaveUp      atomic.Int64 // sends given up: past the run's end or interrupted (Attempt.GaveUp)
	Capped      atomic.Int64 // first attempts delayed by the cap on messages in flight (Attempt.Capped)
}

// Snapshot is a copy of Progress at one moment.
type Snapshot struct {
	Sent, Accepted, RateLimited, Errors, Retries, InFlight, Late, Requests, Probes, Mismatches, GaveUp, Capped int64
}

// Snapshot copies the counters.
func (p *Progress) Snapshot() Snapshot {
	return Snapshot{Sent: p.Sent.Load(), Accepted: p.Accepted.Load(), RateLimited: p.RateLimited.Load(),
		Errors: p.Errors.Load(), Retries: p.Retries.Load(), InFlight: p.InFlight.Load(), Late: p.Late.Load(),
		Requests: p.Requests.Load(), Probes: p.Probes.Load(), Mismatches: p.Mismatches.Load(),
		GaveUp: p.GaveUp.Load(), Capped: p.Capped.Load()}
}

// RunResult is what Run reports at its end.
type RunResult struct {
	Start, End time.Time // first planned send, end of the last in-flight work
	Stopped    bool      // ended early: context cancelled or MaxMessages reached
	Snapshot
}
