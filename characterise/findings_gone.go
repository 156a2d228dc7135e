package characterise

import (
	"fmt"
	"math"

	"github.com/msgload/msgload/reports"
)

// The rules of the callback-gone and callback-timeout probes.
const (
	RuleHookGoneStops     = "callbacks.gone_stops"     // yes: a 410 Gone ends the tries; no: retried as a 5xx
	RuleHookSenderTimeout = "callbacks.sender_timeout" // seconds the sender waits for an answer before it hangs up and retries
)

// goneRules are the two rules, in the order of the contract.
func goneRules() []string { return []string{RuleHookGoneStops, RuleHookSenderTimeout} }

// goneFindings are the two rules, from the two probes and the schedule the
// callback-retry probe found.
func (st *state) goneFindings() []reports.Finding {
	if st.plan.goneWhy != "" {
		return allCannot(goneRules(), probeHookGone, st.plan.goneWhy)
	}
	return []reports.Finding{st.goneStops(), st.senderTimeout()}
}

// hookProbeData is a callback probe's sink data, or why it cannot be read.
func (st *state) hookProbeData(name string) (*hookData, string) {
	pd := st.data[name]
	switch {
	case pd == nil || pd.sum == nil:
		return nil, "the " + name + " probe did not run or wrote no report"
	case pd.verdict == reports.VerdictError:
		return nil, distrusted
	}
	h, err := readHookData(pd)
	if err != nil {
		return nil, "its events.jsonl cannot be read: " + err.Error()
	}
	return h, ""
}

// refusedTries is the number of arrivals of each message the sink refused
// or held on purpose, in arrival order.
func refusedTries(h *hookData) []int {
	var n []int
	for _, s := range h.series {
		if s.chosen {
			n = append(n, len(s.at))
		}
	}
	return n
}

// goneStops: every call answered 410 and never tried again, by a sender
// the callback-retry probe saw retry a 503, each silent for twice the first
// wait of that schedule and a second before the probe's wait ended: yes;
// every one tried again: no; a mix cannot be told.
func (st *state) goneStops() reports.Finding {
	const rule = RuleHookGoneStops
	h, why := st.hookProbeData(probeHookGone)
	if h == nil {
		return cannot(rule, probeHookGone, why)
	}
	tries := refusedTries(h)
	again := 0
	for _, n := range tries {
		if n > 1 {
			again++
		}
	}
	ev := fmt.Sprintf("%d messages whose every callback was answered %d: tries of each %v", len(tries), hookGoneCode, tries)
	sc := st.hook
	switch {
	case len(tries) == 0:
		return cannot(rule, probeHookGone, "no callback of the probe's messages came", ev)
	case again == len(tries):
		return found(rule, probeHookGone, no, ev)
	case again > 0:
		return cannot(rule, probeHookGone, "some calls answered 410 were tried again and some not", ev)
	case sc == nil || len(sc.prof) == 0:
		return cannot(rule, probeHookGone, "the sender was not seen to retry a 503 either: one try after a 410 tells nothing apart", ev)
	}
	ev += fmt.Sprintf("; the first wait after a 503: %.3f s", sc.firstDelay)
	if h.waitEnd.IsZero() {
		return cannot(rule, probeHookGone, "the probe's run.json does not say when its wait ended", ev)
	}
	for _, s := range h.series {
		if silence := h.waitEnd.Sub(s.at[len(s.at)-1]).Seconds(); s.chosen && silence < 2*sc.firstDelay+1 {
			return cannot(rule, probeHookGone, fmt.Sprintf("a call answered 410 came %.1f s before the wait ended, under twice the first wait after a 503 and a second: a retry may still have come", silence), ev)
		}
	}
	return found(rule, probeHookGone, yes, ev)
}

// senderTimeout: the sink held every call past the sender's patience; the
// sender hung up and tried again one timeout and its first wait after the
// first arrival (the callback-retry probe's, taken out), plus overheads that
// only add: the interval runs from the shortest gap less the first wait and
// its slack down by the gap's own slack, to the gap less the least first
// wait, and at most the hold (a sender that waited longer got its answer).
func (st *state) senderTimeout() reports.Finding {
	const rule = RuleHookSenderTimeout
	h, why := st.hookProbeData(probeHookTimeout)
	if h == nil {
		return cannot(rule, probeHookTimeout, why)
	}
	hold := st.plan.hookHold.Seconds()
	gap := math.Inf(1)
	for _, s := range h.series {
		if s.chosen && len(s.at) > 1 {
			gap = min(gap, s.at[1].Sub(s.at[0]).Seconds())
		}
	}
	tries := refusedTries(h)
	ev := fmt.Sprintf("%d messages whose every callback the sink held %g s: tries of each %v", len(tries), hold, tries)
	sc := st.hook
	switch {
	case len(tries) == 0:
		return cannot(rule, probeHookTimeout, "no callback of the probe's messages came", ev)
	case math.IsInf(gap, 1):
		return cannot(rule, probeHookTimeout, fmt.Sprintf("each call came once: either the sender waits longer than the sink's hold of %g s, or it does not try again after a timeout", hold), ev)
	case sc == nil || len(sc.prof) == 0:
		return cannot(rule, probeHookTimeout, "the callback-retry probe found no first wait to take out of the gap between tries", ev)
	}
	b := sc.firstDelay
	ev += fmt.Sprintf("; the shortest gap from the first try to the second %.3f s, less the first wait after a 503 %.3f s", gap, b)
	lo := max(gap-b-slack(gap), 0)
	hi := min(gap-max(b-slack(b), 0), hold)
	f := interval(rule, probeHookTimeout, lo, max(hi, lo), ev)
	pointIn(&f, max(gap-b, 0))
	return f
}
