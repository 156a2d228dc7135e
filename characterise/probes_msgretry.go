package characterise

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// probeMsgRetry sends messaging messages and resends each with the same
// body after its answer — once, then once more at once with another copy —
// as an application that retries does: the seed has no idempotency key, so
// what the resend costs (a second txId, a second delivery) is the service's.
const probeMsgRetry = "messaging-retry"

// The messaging retry rules.
const (
	RuleMsgSecondTx       = "messaging.retry_second_tx"       // yes: a resend was answered another txId
	RuleMsgSecondDelivery = "messaging.retry_second_delivery" // yes: callbacks came for two txIds of one message
)

var msgRetryRules = []string{RuleMsgSecondTx, RuleMsgSecondDelivery}

// Shares of the messaging retry probe.
const (
	msgRetryShare   = 0.05 // of the budget, at most msgRetryMaxMsgs messages
	msgRetryMaxMsgs = 10
	msgRetryCopies  = 1                  // copies at once after the sequential resend
	msgRetryPerMsg  = 2 + msgRetryCopies // the first, its resend, its copies
)

// msgRetryPlanned is the probe for the messaging API within its share of
// the budget (ok false: not the messaging API, or no message affordable).
func msgRetryPlanned(o Options, s *scenarios.Scenario) (Probe, bool) {
	n := min(int64(float64(o.Budget)*msgRetryShare)/msgRetryPerMsg, msgRetryMaxMsgs)
	if s.API != rundir.APIMessaging || n < 1 {
		return Probe{}, false
	}
	return Probe{Name: probeMsgRetry, Requests: n * msgRetryPerMsg, Takes: time.Duration(n)*time.Second + grace(s),
		What: fmt.Sprintf("%d messages at 1/s, each resent with the same body after its answer, then %d more at once", n, msgRetryCopies)}, true
}

// msgRetryScenario makes s the probe's: every message resent (the
// harness's idempotency probes, which for messaging only resend), the
// file's delivery to see the callbacks of each txId.
func (st *state) msgRetryScenario(s *scenarios.Scenario, pr Probe) {
	n := pr.Requests / msgRetryPerMsg
	s.Load.Rate, s.Load.Requests = rateOf(1, time.Second), n
	s.Idempotency = scenarios.Idempotency{Probes: scenarios.Percent{Raw: "100%", F: 1}, Concurrent: msgRetryCopies}
	s.Delivery = st.base.Delivery
	s.Delivery.Grace = dur(grace(st.base))
	s.MaxMessages = n
}

// msgRetryFindings: whether a resend was answered another txId, and
// whether callbacks came for more than one txId of a message.
func (st *state) msgRetryFindings() []reports.Finding {
	pd := st.data[probeMsgRetry]
	switch {
	case pd == nil || pd.sum == nil:
		return allCannot(msgRetryRules, probeMsgRetry, "the messaging retry probe did not run or wrote no report")
	case pd.verdict == reports.VerdictError:
		return allCannot(msgRetryRules, probeMsgRetry, distrusted)
	}
	firsts := map[int64]string{} // seq → the txId its first send was answered
	for _, a := range pd.attempts {
		if a.Probe == "" && is2xx(a.Code) && a.TxID != "" {
			firsts[a.Seq] = a.TxID
		}
	}
	fs := []reports.Finding{secondTxFinding(pd.attempts, firsts)}
	events, err := pd.events()
	if err != nil {
		return append(fs, cannot(RuleMsgSecondDelivery, probeMsgRetry, "its events could not be read: "+err.Error()))
	}
	return append(fs, secondDeliveryFinding(events, firsts, st.base.Delivery.Via))
}

// secondTxFinding: the resends of the messages answered at first, each
// answered another txId (a second message), the same, or refused.
func secondTxFinding(as []rundir.Attempt, firsts map[int64]string) reports.Finding {
	var other, same, n int
	var refused []string
	for _, a := range as {
		first, ok := firsts[a.Seq]
		if a.Probe == "" || !ok {
			continue
		}
		n++
		switch {
		case is2xx(a.Code) && a.TxID != "" && a.TxID != first:
			other++
		case is2xx(a.Code) && a.TxID == first:
			same++
		case a.Code > 0:
			refused = append(refused, strconv.Itoa(a.Code))
		}
	}
	ev := fmt.Sprintf("%d messages answered at first, resent %d times: %d answered another txId, %d the same txId, %d refused (%s)",
		len(firsts), n, other, same, len(refused), cmpOr(codeSet(strings.Join(refused, ",")), "none"))
	switch {
	case other > 0:
		return found(RuleMsgSecondTx, probeMsgRetry, yes, ev)
	case same+len(refused) > 0:
		return found(RuleMsgSecondTx, probeMsgRetry, no, ev)
	}
	return cannot(RuleMsgSecondTx, probeMsgRetry, "no resend of a message answered at first was answered", ev)
}

// secondDeliveryFinding: the txIds whose callbacks came, per message (its
// tag in trackData): two or more is a second message delivered.
func secondDeliveryFinding(events []rundir.Event, firsts map[int64]string, via string) reports.Finding {
	ids := map[int64]map[string]bool{}
	for _, e := range events {
		if e.Kind != rundir.KindCallback || e.Corr == nil || firsts[e.Corr.Seq] == "" || e.Corr.Key == "" {
			continue
		}
		if ids[e.Corr.Seq] == nil {
			ids[e.Corr.Seq] = map[string]bool{}
		}
		ids[e.Corr.Seq][e.Corr.Key] = true
	}
	twice := 0
	for _, txs := range ids {
		if len(txs) > 1 {
			twice++
		}
	}
	ev := fmt.Sprintf("%d messages resent: callbacks came for %d of them, for two txIds or more for %d", len(firsts), len(ids), twice)
	switch {
	case twice > 0:
		return found(RuleMsgSecondDelivery, probeMsgRetry, yes, ev)
	case via == "poll" || via == "none":
		return cannot(RuleMsgSecondDelivery, probeMsgRetry, "delivery via "+via+": no callbacks come to show a second delivery", ev)
	case len(firsts) == 0:
		return cannot(RuleMsgSecondDelivery, probeMsgRetry, "no message was answered at first", ev)
	case len(ids) < len(firsts):
		return cannot(RuleMsgSecondDelivery, probeMsgRetry, "a callback was not observed for every message: a second delivery would be missed", ev)
	}
	return found(RuleMsgSecondDelivery, probeMsgRetry, no, ev)
}
