package characterise

import (
	"fmt"
	"net/http"
	"time"

	"github.com/msgload/msgload/sink"
)

// The callback probes of what the sender does with a receiver that refuses
// a call for good (410 Gone) and with one that does not answer in time: the
// sink answers every arrival of every message of the probe so (each retry
// too), and the probe waits the callback probes' wait for what follows.
const (
	// probeHookGone: every callback answered 410 Gone.
	probeHookGone = "callback-gone"
	// probeHookTimeout: every callback held hookHold before its answer
	// (longer than most senders wait: they hang up and retry).
	probeHookTimeout = "callback-timeout"
)

// Sizes of the two probes.
const (
	hookGoneN    = 2 // messages of each probe
	hookGoneCode = http.StatusGone
	minHookHold  = 2 * time.Second
)

// goneRequests is what the two probes take of what the budget left (0
// when the other callback probes were not planned, or too little is left:
// goneWhy says why).
func (p *Plan) goneRequests(hooks, left int64) int64 {
	switch {
	case hooks <= 0:
		p.goneWhy = "not planned: " + p.hookWhy
		return 0
	case left < 2*hookGoneN:
		p.goneWhy = fmt.Sprintf("not planned: --budget %d leaves too little for them (they need %d requests)", p.Budget, 2*hookGoneN)
		return 0
	}
	return 2 * hookGoneN
}

// goneProbes are the two probes, each waiting wait; the timeout probe's
// sink holds each call hold.
func goneProbes(wait, hold time.Duration) []Probe {
	take := burstFor(hookGoneN, hookRate) + wait
	return []Probe{
		{Name: probeHookGone, Requests: hookGoneN, Takes: take,
			What: fmt.Sprintf("%d messages; the sink answers every callback %d Gone (each retry too) and waits %s for retries", hookGoneN, hookGoneCode, wait)},
		{Name: probeHookTimeout, Requests: hookGoneN, Takes: take,
			What: fmt.Sprintf("%d messages; the sink holds every callback %s before answering (each retry too) and waits %s: a sender that times out hangs up and retries", hookGoneN, hold, wait)},
	}
}

// withGone puts the two probes of n requests after the other callback
// probes when they fit in what --max-time leaves once every other probe is
// planned (they are the least needed), else gives their requests back to
// the isolation probe and says why they were left out.
func (p *Plan) withGone(n int64) {
	if n <= 0 {
		return
	}
	if p.hookWait <= 0 {
		p.goneWhy = "not planned: " + p.hookWhy
		p.giveToIsolation(n)
		return
	}
	hold := max(p.hookWait/2, minHookHold).Truncate(time.Second)
	prs := goneProbes(p.hookWait, hold)
	need := prs[0].Takes + prs[1].Takes
	if left := p.MaxTime - p.Takes(); need > left {
		p.goneWhy = fmt.Sprintf("does not fit: the plan leaves %s of --max-time %s, they take %s (raise --max-time, or lower --hook-wait)", max(left, 0).Round(time.Second), p.MaxTime, need.Round(time.Second))
		p.giveToIsolation(n)
		return
	}
	p.hookHold = hold
	at := len(p.Probes)
	for i, pr := range p.Probes {
		if pr.Name == probeHookRetryAfter {
			at = i + 1
		}
	}
	p.Probes = append(p.Probes[:at], append(prs, p.Probes[at:]...)...)
}

// giveToIsolation gives n requests of a probe left out to the isolation
// probe (sized when it runs; none when the file has one client).
func (p *Plan) giveToIsolation(n int64) {
	for i := range p.Probes {
		if p.Probes[i].Name == probeIsolation {
			p.Probes[i].Requests += n
		}
	}
}

// goneFault is the sink's fault of the two probes (nil for the others):
// every call of every message answered 410, or held p.hookHold and then
// answered 200 — when the sender is still there.
func (st *state) goneFault(pr Probe) *sink.Fault {
	switch pr.Name {
	case probeHookGone:
		return &sink.Fault{Share: 1, Code: hookGoneCode, PerMessage: true}
	case probeHookTimeout:
		return &sink.Fault{Share: 1, Delay: st.plan.hookHold, PerMessage: true}
	}
	return nil
}
