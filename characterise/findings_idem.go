package characterise

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// The idempotency rules the probe's copies in flight, changed body and
// retries decide (the vocabulary of the IETF Idempotency-Key draft-07).
const (
	RuleInFlightOneEffect = "idempotency.in_flight_one_side_effect" // copies sent with the first, in flight: one notification
	RuleInFlightAnswer    = "idempotency.in_flight_answer"          // the codes the first and its copies in flight got (e.g. 200, 409)
	RuleChangedBody       = "idempotency.changed_body_answer"       // first (the first result), new (another notification) or the code (422, 409)
	RuleRetry5xxOneEffect = "idempotency.retry_5xx_one_side_effect" // a 500/503 retried with the same externalId: one notification
	RuleRetryResetOne     = "idempotency.retry_reset_one_side_effect"
	changedFirst          = "first" // the changed body got the first result
	changedNew            = "new"   // the changed body made another notification
)

// idemRules are the rules of this file, in their findings' order.
var idemRules = []string{RuleInFlightOneEffect, RuleInFlightAnswer, RuleChangedBody, RuleRetry5xxOneEffect, RuleRetryResetOne}

// idemMsg is one notification of the idempotency probe, as its attempts
// and the webhooks tagged with it tell.
type idemMsg struct {
	own      []rundir.Attempt // its own sends: the first and its retries
	inFlight []rundir.Attempt // copies sent with the first
	changed  []rundir.Attempt
	after    []rundir.Attempt // resends and copies after the answer
	// delivered is the notificationIds its webhooks carried.
	delivered map[string]bool
}

// idemMessages groups the probe's sends and webhooks by message.
func idemMessages(as []rundir.Attempt, events []rundir.Event) map[int64]*idemMsg {
	ms := map[int64]*idemMsg{}
	get := func(seq int64) *idemMsg {
		if ms[seq] == nil {
			ms[seq] = &idemMsg{delivered: map[string]bool{}}
		}
		return ms[seq]
	}
	for _, a := range as {
		m := get(a.Seq)
		switch a.Probe {
		case "":
			m.own = append(m.own, a)
		case rundir.ProbeInFlight:
			m.inFlight = append(m.inFlight, a)
		case rundir.ProbeChangedBody:
			m.changed = append(m.changed, a)
		default:
			m.after = append(m.after, a)
		}
	}
	for _, e := range events {
		if e.Kind == rundir.KindWebhook && e.Corr != nil && e.Corr.Seq > 0 && ms[e.Corr.Seq] != nil {
			if id := e.ServiceID(); id != "" {
				ms[e.Corr.Seq].delivered[id] = true
			}
		}
	}
	return ms
}

// effects is the notifications the message's own sends and copies in
// flight made: the ids they were answered, and the ids delivered that no
// resend after the answer was answered (a notification only such a resend
// made is the resend's, judged by its own rule). seen: a webhook came for it.
func (m *idemMsg) effects() (n int, seen bool) {
	ids := map[string]bool{}
	for _, a := range slices.Concat(m.own, m.inFlight) {
		if is2xx(a.Code) && a.NotificationID != "" {
			ids[a.NotificationID] = true
		}
	}
	later := map[string]bool{}
	for _, a := range slices.Concat(m.after, m.changed) {
		if is2xx(a.Code) && !ids[a.NotificationID] {
			later[a.NotificationID] = true
		}
	}
	for id := range m.delivered {
		if !later[id] {
			ids[id] = true
		}
	}
	return len(ids), len(m.delivered) > 0
}

// keyID is the notificationId the message's externalId holds: its own
// send's, or — when a copy in flight got there first and the own send was
// answered 409 — that copy's ("" when none was accepted).
func (m *idemMsg) keyID() string {
	for _, a := range slices.Concat(m.own, m.inFlight) {
		if is2xx(a.Code) && a.NotificationID != "" {
			return a.NotificationID
		}
	}
	return ""
}

func is2xx(c int) bool { return c >= 200 && c < 300 }

// firstAnswered is when the message's first send was answered (zero when
// it was not sent).
func (m *idemMsg) firstAnswered() time.Time {
	for _, a := range m.own {
		if a.Attempt == 1 && !a.Sent.IsZero() {
			return a.Sent.Add(time.Duration(a.Latency * float64(time.Second)))
		}
	}
	return time.Time{}
}

// reallyInFlight is the copies that left before the first was answered.
func (m *idemMsg) reallyInFlight() []rundir.Attempt {
	end := m.firstAnswered()
	var cs []rundir.Attempt
	for _, c := range m.inFlight {
		if !end.IsZero() && !c.Sent.IsZero() && c.Sent.Before(end) {
			cs = append(cs, c)
		}
	}
	return cs
}

// idemMoreFindings are the findings of this file from the idempotency
// probe's run (st.data's, trusted: idempotencyFindings checked it).
func (st *state) idemMoreFindings(pd *probeData) []reports.Finding {
	events, err := pd.events()
	if err != nil {
		return allCannot(idemRules, probeIdempotency, "its events could not be read: "+err.Error())
	}
	ms := idemMessages(pd.attempts, events)
	seqs := slices.Sorted(maps.Keys(ms))
	var list []*idemMsg
	for _, s := range seqs {
		list = append(list, ms[s])
	}
	fs := inFlightFindings(list)
	fs = append(fs, changedFinding(list))
	fs = append(fs, retryFinding(RuleRetry5xxOneEffect, "a 500 or 503", list, func(a rundir.Attempt) bool { return a.Code == 500 || a.Code == 503 }))
	fs = append(fs, retryFinding(RuleRetryResetOne, "a reset (no answer)", list, func(a rundir.Attempt) bool {
		return a.Code == 0 && (a.Class == rundir.ClassReset || a.Outcome == rundir.OutcomeUnknown)
	}))
	return fs
}

// oneEffect judges messages by their side effects: no when one made more
// than one notification (the answers alone may show it), yes when every one
// made one and a webhook was seen for each (a notification the answers do
// not show — processed, then 500 — shows only as a delivery).
func oneEffect(rule, what, none string, ms []*idemMsg) reports.Finding {
	var many, seen int
	for _, m := range ms {
		n, s := m.effects()
		if n > 1 {
			many++
		}
		if s {
			seen++
		}
	}
	ev := fmt.Sprintf("%d notifications %s: %d made more than one notification (ids answered and delivered), %d had a webhook observed", len(ms), what, many, seen)
	switch {
	case len(ms) == 0:
		return cannot(rule, probeIdempotency, none, ev)
	case many > 0:
		return found(rule, probeIdempotency, no, ev)
	case seen < len(ms):
		return cannot(rule, probeIdempotency, "a webhook was not observed for every one: a notification the answers do not show would be missed", ev)
	}
	return found(rule, probeIdempotency, yes, ev)
}

// inFlightFindings: the messages whose copies left before the first was
// answered — one notification each, and the codes they all got.
func inFlightFindings(list []*idemMsg) []reports.Finding {
	var ms []*idemMsg
	var codes []string
	sent := 0
	for _, m := range list {
		sent += len(m.inFlight)
		cs := m.reallyInFlight()
		if len(cs) == 0 || len(m.own) == 0 {
			continue
		}
		ms = append(ms, m)
		for _, a := range slices.Concat(m.own[:1], cs) {
			if a.Code > 0 {
				codes = append(codes, strconv.Itoa(a.Code))
			}
		}
	}
	fs := []reports.Finding{oneEffect(RuleInFlightOneEffect, "sent with copies in flight", "no copy left before its first was answered (the service answered first)", ms)}
	ev := fmt.Sprintf("%d copies sent with their first, %d of %d notifications with a copy that left before the first was answered", sent, len(ms), len(list))
	if set := codeSet(strings.Join(codes, ",")); set != "" {
		fs = append(fs, found(RuleInFlightAnswer, probeIdempotency, set, ev))
	} else {
		fs = append(fs, cannot(RuleInFlightAnswer, probeIdempotency, "no copy left before its first was answered, or none was answered", ev))
	}
	return fs
}

// changedFinding: what a resend with another text under the same
// externalId got — the first result, another notification, or a code.
func changedFinding(list []*idemMsg) reports.Finding {
	var vs []string
	n, limited := 0, 0
	for _, m := range list {
		want := m.keyID()
		for _, a := range m.changed {
			n++
			switch {
			case a.Code == 0:
			case a.Code == 429:
				limited++ // the limiter refused it before the key was looked at: no answer of the key's
			case is2xx(a.Code) && want != "" && a.NotificationID == want:
				vs = append(vs, changedFirst)
			case is2xx(a.Code):
				vs = append(vs, changedNew)
			default:
				vs = append(vs, strconv.Itoa(a.Code))
			}
		}
	}
	ev := fmt.Sprintf("%d resends with another text under the same externalId: %s", n, cmpOr(codeSet(strings.Join(vs, ",")), "none answered"))
	if limited > 0 {
		ev += fmt.Sprintf(" (%d refused 429 by the rate limit, not counted: the limiter answered, not the key)", limited)
	}
	if len(vs) == 0 {
		return cannot(RuleChangedBody, probeIdempotency, "no resend with another body was answered", ev)
	}
	return found(RuleChangedBody, probeIdempotency, codeSet(strings.Join(vs, ",")), ev)
}

// retryFinding: the messages one of whose own sends got failed (what) and
// were retried with the same externalId — one notification each.
func retryFinding(rule, what string, list []*idemMsg, failed func(rundir.Attempt) bool) reports.Finding {
	var ms []*idemMsg
	for _, m := range list {
		if i := slices.IndexFunc(m.own, failed); i >= 0 && slices.ContainsFunc(m.own[i+1:], func(a rundir.Attempt) bool { return a.Attempt > m.own[i].Attempt }) {
			ms = append(ms, m)
		}
	}
	return oneEffect(rule, "answered "+what+" and retried", "no send was answered "+what+" and retried (the service gave none; the seed says such a retry is safe, nothing here checked it)", ms)
}
