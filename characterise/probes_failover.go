package characterise

import (
	"fmt"
	"slices"
	"time"

	"github.com/msgload/msgload/attack/message/msgspec"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// probeMsgStatus (messaging): messages whose callbacks come to the sink
// while check-status is polled for each (the two final states compared);
// with two channels in the file's message, the first fails over after
// failoverTTL awaiting SEEN (a status few channels give within seconds,
// none for sms), and the callbacks say when it did, against the ttl.
const probeMsgStatus = "messaging-status"

// Sizes of the messaging-status probe.
const (
	failoverN       = 4 // messages
	failoverTTL     = 2 // seconds: the shortest a service is likely to honour to the second
	statusPollEvery = time.Second
)

// oneChannel: why the failover cannot be probed with the file's message.
const oneChannel = "the file's message has one channel (message.scenario): a failover needs a next one"

// failoverRequests is what the probe takes of what the budget left: 0 for
// the notification API (neither check-status nor failover), or when it
// cannot be planned (failWhy says why).
func (p *Plan) failoverRequests(s *scenarios.Scenario, left int64) int64 {
	if s.API != rundir.APIMessaging {
		return 0
	}
	if v := s.Delivery.Via; v == "none" || v == "poll" {
		p.failWhy = "not planned: delivery via " + v + ": no callbacks come to the sink"
		return 0
	}
	if left < failoverN {
		p.failWhy = fmt.Sprintf("not planned: --budget %d leaves too little for it (it needs %d requests)", p.Budget, failoverN)
		return 0
	}
	return failoverN
}

// failoverTakes is the probe's time: its sends, the ttl, and the grace for
// the last channel's callbacks.
func failoverTakes(s *scenarios.Scenario) time.Duration {
	return burstFor(failoverN, hookRate) + failoverTTL*time.Second + grace(s)
}

// withFailover puts the messaging-status probe of n requests after the callback
// probes (before the limiter is exhausted) when it fits what every other
// probe left of --max-time, else gives its requests back to the isolation
// probe and says why it was left out.
func (p *Plan) withFailover(s *scenarios.Scenario, n int64) {
	if n <= 0 {
		return
	}
	need := failoverTakes(s)
	if left := p.MaxTime - p.Takes(); need > left {
		p.failWhy = fmt.Sprintf("does not fit: the plan leaves %s of --max-time %s, it takes %s (raise --max-time)", max(left, 0).Round(time.Second), p.MaxTime, need.Round(time.Second))
		p.giveToIsolation(n)
		return
	}
	at := 0
	for i, pr := range p.Probes {
		switch pr.Name {
		case probeHookRetry, probeHookRetryAfter, probeHookGone, probeHookTimeout:
			at = i + 1
		}
	}
	what := fmt.Sprintf("%d messages at %d/s, each polled by check-status every %s while its callbacks come", n, hookRate, statusPollEvery)
	if sc := s.Message.Scenario; len(sc) >= 2 {
		what += fmt.Sprintf("; sent to %s failing over to %s after a ttl of %d s awaiting SEEN", sc[0].Channel, sc[1].Channel, failoverTTL)
	}
	pr := Probe{Name: probeMsgStatus, Requests: n, Takes: need, What: what}
	p.Probes = slices.Insert(p.Probes, at, pr)
}

// failoverScenario is the messaging-status probe's load: its messages at
// hookRate, the file's delivery with a grace past the ttl and a poll
// interval; with two channels or more, the file's first two, the first
// failing over after failoverTTL.
func (st *state) failoverScenario(s *scenarios.Scenario, pr Probe) {
	s.Load.Rate, s.Load.Requests = rateOf(hookRate, time.Second), pr.Requests
	s.MaxMessages = pr.Requests
	s.Delivery = st.base.Delivery
	s.Delivery.Grace = dur(failoverTTL*time.Second + grace(st.base))
	s.Delivery.PollInterval = dur(statusPollEvery)
	if len(st.base.Message.Scenario) < 2 {
		return
	}
	items := slices.Clone(st.base.Message.Scenario[:2])
	items[0].Failover = &msgspec.Failover{TTL: failoverTTL, ConditionStatus: rundir.StateSeen}
	items[1].Failover = nil
	s.Message.Scenario = items
}
