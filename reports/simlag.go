package reports

import (
	"fmt"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// simLag is truth.sim_lag (the contract's summary.SimLag).
type simLag = summary.SimLag

// The embedded simulator shares the machine with msgload: on a busy machine
// its scheduler and its callers fall behind the delays it drew, and its
// calls start late. The truth records when each call was due by the drawn
// delays (TruthCallback.Due): a message whose ending call was due by the
// deadline but started after it is late (or lost) only because of that lag
// — the machine's, not the service's (DESIGN.md: whose a reason is).

// lateBySimLag is the rule, one for the one-pass and the bounded truth
// comparison: a message whose earliest ending call started at end and was
// due at due (0: not known) is late only because of the simulator's lag when
// it started after the deadline dl and was due by it; one with no ending
// call (end 0) when the simulator closed with it in flight and its next
// step or call was due by the deadline (pending; 0: none) — the simulator
// had fallen so far behind that the message never got its turn.
func lateBySimLag(end, due, pending, dl int64) bool {
	if end == 0 {
		return pending != 0 && pending <= dl
	}
	return end > dl && due != 0 && due <= dl
}

// noteSimLag counts a lost message (by the truth) in simLagged when it is
// lost only because of the simulator's lag.
func (fg *truthFigures) noteSimLag(end, due, pending, dl int64) {
	if lateBySimLag(end, due, pending, dl) {
		fg.simLagged++
	}
}

// pendingOf is TruthMessage.Pending, unix ns; 0 when not set.
func pendingOf(m *rundir.TruthMessage) int64 {
	if m.Pending.IsZero() {
		return 0
	}
	return m.Pending.UnixNano()
}

// earliest is the earlier of two times, 0 being none.
func earliest(x, y int64) int64 {
	if x == 0 || y != 0 && y < x {
		return y
	}
	return x
}

// notePending makes sim_lag known (not null) for a truth whose messages
// say what was pending at the close, even with no call made.
func notePending(r *truthReport, m *rundir.TruthMessage) {
	if !m.Pending.IsZero() && r.SimLag == nil {
		r.SimLag = &simLag{}
	}
}

// dueOf is when call c was due, unix ns; 0 when the truth does not say.
func dueOf(c *rundir.TruthCallback) int64 {
	if c.Due.IsZero() {
		return 0
	}
	return c.Due.UnixNano()
}

// noteLag takes the lag of call c into sim_lag: a truth whose calls carry
// their due time has one (null otherwise: the lag cannot be told).
func noteLag(r *truthReport, c *rundir.TruthCallback) {
	if c.Due.IsZero() {
		return
	}
	if r.SimLag == nil {
		r.SimLag = &simLag{}
	}
	r.SimLag.Max = max(r.SimLag.Max, round6(c.At.Sub(c.Due).Seconds()))
}

// simLagReason is the environment's reason when messages were late only
// because the simulator fell behind (none otherwise).
func (s *Summary) simLagReason() []Reason {
	t := s.Truth
	if t == nil || t.SimLag == nil || t.SimLag.Messages == 0 {
		return nil
	}
	return []Reason{simLagged(reason(WhoseEnvironment, VerdictIncomplete,
		fmt.Sprintf("the embedded simulator fell behind its own schedule by up to %s: %s late or lost only because of it (each was due by the deadline: it started after it, or had not started when the simulator closed) — the machine was too busy, not the service (truth.sim_lag)",
			dur(t.SimLag.Max), Plural(t.SimLag.Messages, "message")),
		"run again on a less busy machine, or at a lower rate"))}
}

// simLagged marks reasons as the simulator's lag (Reason.Limit LimitSimLag):
// a test, or a script, tells them from the service's and the generator's.
func simLagged(r Reason) Reason {
	r.Limit = LimitSimLag
	return r
}

// withoutSimLag is s with the messages late only because of the
// simulator's lag taken out of delivery.lost and delivery.late: the
// service's share, which a failing threshold is judged on again to tell
// whose it is (Threshold.SimLagOnly).
func (s *Summary) withoutSimLag() (Summary, bool) {
	t := s.Truth
	if t == nil || t.SimLag == nil || t.SimLag.Messages == 0 {
		return Summary{}, false
	}
	c := *s
	n := t.SimLag.Messages
	c.Delivery.Lost, c.Delivery.Late = max(c.Delivery.Lost-n, 0), max(c.Delivery.Late-n, 0)
	return c, true
}

// holdsWithoutSimLag reports whether threshold c holds on the service's
// share of s (withoutSimLag): then its failure is the machine's.
func holdsWithoutSimLag(c *compiled, s *Summary) bool {
	share, ok := s.withoutSimLag()
	if !ok {
		return false
	}
	// judged as any threshold is, no-data rule included: a figure null
	// in the share does not hold
	return judgeThreshold(c, &share).OK
}

// simLagTouches reports whether threshold c, failing on s, is the
// environment's: the embedded simulator made messages late or lost only by
// falling behind its schedule, and c either holds without them
// (holdsWithoutSimLag) or reads a delivery figure — their latencies
// (censored at the deadline), outcomes and counts are then the machine's as
// much as the service's, and cannot be told apart (a lower bound from the
// censored messages, a share of outcomes). The verdict is incomplete either
// way, never pass; the reason says to run again on a quieter machine.
func simLagTouches(c *compiled, s *Summary) bool {
	if t := s.Truth; t == nil || t.SimLag == nil || t.SimLag.Messages == 0 {
		return false
	}
	return readsDelivery(c) || holdsWithoutSimLag(c, s)
}
