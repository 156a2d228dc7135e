package characterise

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sink"
)

// The callback probes: the sink refuses every arrival of a chosen share of
// the probe's messages on purpose (sink.Fault.PerMessage), so the sender's
// whole retry schedule, up to its giving up, is in the probe's events.jsonl.
const (
	// probeHookRetry: every other message's callbacks refused 503; the
	// others are the controls (duplicates, order).
	probeHookRetry = "callback-retry"
	// probeHookRetryAfter: every callback refused 429 with a Retry-After
	// longer than the schedule the first probe found.
	probeHookRetryAfter = "callback-retry-after"
)

// Shares and bounds of the callback probes.
const (
	hookShare        = 0.04 // of the budget, at most hookMaxMsgs
	hookMaxMsgs      = 20
	hookMinMsgs      = 6 // fewer: not planned
	hookRetryAfterN  = 2 // messages of the Retry-After probe
	hookRate         = 2 // messages a second
	DefaultHookWait  = 20 * time.Second
	minHookWait      = 5 * time.Second
	hookRetryCode    = 503
	hookRefusal429   = 429
	minHookRetryWait = 3 * time.Second // the shortest Retry-After the second probe sends
)

// hookRequests is what the callback probes take of the budget, of left
// (0 when they are not planned), and why not.
func hookRequests(s *scenarios.Scenario, o Options, left int64) (int64, string) {
	switch {
	case s.Delivery.Via == "none" || s.Delivery.Via == "poll":
		return 0, "delivery via " + s.Delivery.Via + ": no callbacks come to the sink"
	case s.Sink != "" && s.Sink != "embedded":
		return 0, "a standalone sink: characterise sets the fault of the embedded sink only (run the standalone one with --fault-per-message to see the schedule)"
	}
	n := min(int64(float64(o.Budget)*hookShare), hookMaxMsgs, left)
	if n < hookMinMsgs {
		return 0, fmt.Sprintf("--budget %d leaves too little for them (they need %d requests)", o.Budget, hookMinMsgs)
	}
	return n, ""
}

// hookProbes are the callback probes of n requests, each waiting wait for
// the retries after its sends.
func hookProbes(n int64, wait time.Duration) []Probe {
	retry := n - hookRetryAfterN
	take := func(k int64) time.Duration { return burstFor(k, hookRate) + wait }
	return []Probe{
		{Name: probeHookRetry, Requests: retry, Takes: take(retry),
			What: fmt.Sprintf("%d messages at %d/s; the sink refuses every callback of every other one %d (each retry too) and waits %s for the retries", retry, hookRate, hookRetryCode, wait)},
		{Name: probeHookRetryAfter, Requests: hookRetryAfterN, Takes: take(hookRetryAfterN),
			What: fmt.Sprintf("%d messages; the sink refuses every callback %d with a Retry-After longer than the schedule found, and waits %s", hookRetryAfterN, hookRefusal429, wait)},
	}
}

// withHooks puts the callback probes of n requests after the idempotency
// probe when they fit in --max-time (their wait shortened to fit, not under
// minHookWait), else gives their requests back to the isolation probe and
// says why they were left out.
func (p *Plan) withHooks(n int64) {
	if n <= 0 {
		return
	}
	spare := p.MaxTime - p.Takes() - burstFor(n, hookRate)
	// whole seconds, rounded down: rounding up could take the plan past --max-time
	wait := min(p.HookWait, spare/2).Truncate(time.Second)
	if wait < minHookWait {
		p.hookWhy = fmt.Sprintf("--max-time %s leaves too little time to wait for retries (at least %s for each of two probes)", p.MaxTime, minHookWait)
		p.giveToIsolation(n)
		return
	}
	at := 0
	if len(p.Probes) > 0 && p.Probes[0].Name == probeIdempotency {
		at = 1
	}
	p.hookWait = wait
	p.Probes = append(p.Probes[:at], append(hookProbes(n, p.hookWait), p.Probes[at:]...)...)
}

// hookScenario is a callback probe's load: its messages at hookRate, the
// file's delivery, and a grace wait of the plan's hook wait (the harness
// waits it whole: the sink has a fault).
func (st *state) hookScenario(s *scenarios.Scenario, pr Probe) {
	s.Load.Rate, s.Load.Requests = rateOf(hookRate, time.Second), pr.Requests
	s.Delivery = st.base.Delivery
	s.Delivery.Grace = dur(st.plan.hookWait)
	s.MaxMessages = pr.Requests
}

// sinkFault is the embedded sink's fault for a callback probe (nil for the
// other probes): every other message refused 503, or every one refused 429
// with a Retry-After of st.retryAfter.
func (st *state) sinkFault(pr Probe) *sink.Fault {
	switch pr.Name {
	case probeHookRetry:
		var n atomic.Int64
		// every other message, in the order their first callbacks come
		return &sink.Fault{Share: 0.5, Code: hookRetryCode, PerMessage: true, Pick: func() bool { return n.Add(1)%2 == 1 }}
	case probeHookRetryAfter:
		return &sink.Fault{Share: 1, Code: hookRefusal429, RetryAfter: st.retryAfterFor(), PerMessage: true}
	}
	return st.goneFault(pr)
}

// retryAfterFor is the Retry-After the second probe sends: whole seconds,
// at least minHookRetryWait and three times the first wait the schedule
// probe saw, so that a sender that honours it waits visibly longer than its
// own schedule would.
func (st *state) retryAfterFor() time.Duration {
	d := minHookRetryWait
	if s := st.hook; s != nil && s.firstDelay > 0 {
		d = max(d, time.Duration(math.Ceil(3*s.firstDelay))*time.Second)
	}
	return d
}

// hookWaitEnd is when a probe's grace wait ended: the end of its sends and
// its grace (run.json), the zero time when it cannot be read.
func hookWaitEnd(dir string) time.Time {
	var m rundir.Meta
	b, err := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
	if err != nil || json.Unmarshal(b, &m) != nil || m.AttackEnd.IsZero() {
		return time.Time{}
	}
	return m.AttackEnd.Add(m.Delivery.Grace.D())
}
