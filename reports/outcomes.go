package reports

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/msgload/msgload/rundir"
)

// outcomes says what became of each message the run sent, one count per
// ending (reports/README.md, "outcomes"): every message sent is either not
// accepted (gave up after retries among them) or accepted, and an accepted one
// ended delivered, not delivered, failed, expired, with another final status,
// or has no final status by the deadline (delivery.lost).
type outcomes struct {
	Messages      int64            `json:"messages" expr:"messages"`               // messages sent (first attempts)
	Accepted      int64            `json:"accepted" expr:"accepted"`               // a 2xx on some attempt
	NotAccepted   int64            `json:"not_accepted" expr:"not_accepted"`       // no attempt got a 2xx
	GaveUp        int64            `json:"gave_up" expr:"gave_up"`                 // of those: the last attempt failed retryably with no retry left
	Refused       map[string]int64 `json:"not_accepted_by" expr:"not_accepted_by"` // the others, by the answer to their last attempt: 429, 4xx, 5xx, no answer
	Delivered     int64            `json:"delivered" expr:"delivered"`             // ended DELIVERED or SEEN by the deadline
	NotDelivered  int64            `json:"not_delivered" expr:"not_delivered"`     // ended NOT_DELIVERED (messaging) or UNDELIVERED (notify)
	Failed        int64            `json:"failed" expr:"failed"`                   // ended FAILED
	Expired       int64            `json:"expired" expr:"expired"`                 // ended EXPIRED
	OtherFinal    int64            `json:"other_final" expr:"other_final"`         // ended with a final status of another name
	NoFinalStatus int64            `json:"no_final_status" expr:"no_final_status"` // accepted, no final status by the deadline: delivery.lost
	ByState       map[string]int64 `json:"by_state" expr:"by_state"`               // accepted messages that ended by the deadline, by final status
	RetryMax      int              `json:"retry_max" expr:"retry_max"`             // retries the policy allowed per message (run.json retry.max)

	measured bool // delivery was measured: the counts from Delivered on have data
}

// outcomeDeliveryCounts are the JSON names of the Outcomes that need delivery
// measured: null in summary.json when it is not.
var outcomeDeliveryCounts = []string{"delivered", "not_delivered", "failed", "expired", "other_final", "no_final_status", "by_state"}

// count adds a message that ended with final status state.
func (o *outcomes) count(state string) {
	if state == "" {
		state = "none"
	}
	o.ByState[state]++
	switch state {
	case rundir.StateDelivered, rundir.StateSeen:
		o.Delivered++
	case rundir.StateNotDelivered, rundir.NotifyUndelivered:
		o.NotDelivered++
	case rundir.StateFailed:
		o.Failed++
	case rundir.StateExpired:
		o.Expired++
	default:
		o.OtherFinal++
	}
}

// clearCounts zeroes the counts that need delivery measured.
func (o *outcomes) clearCounts() {
	o.Delivered, o.NotDelivered, o.Failed, o.Expired, o.OtherFinal, o.NoFinalStatus = 0, 0, 0, 0, 0, 0
	o.ByState = nil
}

// MarshalJSON writes the outcomes, the delivery counts null when delivery was
// not measured.
func (o outcomes) MarshalJSON() ([]byte, error) {
	type plain outcomes
	b, err := json.Marshal(plain(o))
	if err != nil || o.measured {
		return b, err
	}
	return nullKeys(b, outcomeDeliveryCounts)
}

// UnmarshalJSON reads the outcomes; counts that are null read as 0.
func (o *outcomes) UnmarshalJSON(b []byte) error {
	type plain outcomes
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = outcomes(v)
	o.measured = v.ByState != nil
	return nil
}

// noun is what the API sends: "notification" or "message".
func (s *Summary) noun() string {
	if s.Run.API == rundir.APINotify {
		return "notification"
	}
	return "message"
}

// outcomeLines says the outcomes in plain sentences, for the verdict area of
// every report: what was not accepted, what was not delivered and how.
func (s *Summary) outcomeLines() []string {
	o, n := s.Outcomes, s.noun()
	var out []string
	if l := s.loadLine(); l != "" {
		out = append(out, l) // planned against sent comes first (load.go)
	}
	if o.Messages == 0 {
		return append(out, fmt.Sprintf("No %s was sent.", n))
	}
	if o.NotAccepted > 0 {
		why := o.notAcceptedWhy()
		verb := "were"
		if o.NotAccepted == 1 {
			verb = "was"
		}
		line := fmt.Sprintf("%d of %s %s not accepted", o.NotAccepted, plural(o.Messages, n), verb)
		if len(why) > 0 {
			line += ": " + strings.Join(why, ", ")
		}
		out = append(out, line+".")
	}
	if !s.Delivery.Measured {
		out = append(out, fmt.Sprintf("%d of %s were accepted; delivery was not measured.", o.Accepted, plural(o.Messages, n)))
		return out
	}
	if o.Accepted == 0 {
		return out
	}
	bad := o.Accepted - o.Delivered
	if bad == 0 {
		out = append(out, fmt.Sprintf("All %s accepted were delivered.", plural(o.Accepted, n)))
		return out
	}
	var why []string
	for _, st := range sortedStates(o.ByState) {
		if rundir.Delivered(st) {
			continue
		}
		why = append(why, fmt.Sprintf("%d %s", o.ByState[st], st))
	}
	if o.NoFinalStatus > 0 {
		why = append(why, fmt.Sprintf("%d with no final status", o.NoFinalStatus))
	}
	verb := "were"
	if bad == 1 {
		verb = "was"
	}
	out = append(out, fmt.Sprintf("%d of %s accepted %s not delivered: %s.", bad, plural(o.Accepted, n), verb, strings.Join(why, ", ")))
	return out
}

// notAcceptedWhy says why messages were not accepted: gave up after their
// retries, or the answer to their last attempt.
func (o outcomes) notAcceptedWhy() []string {
	var why []string
	if o.GaveUp > 0 {
		why = append(why, fmt.Sprintf("%d gave up after %s", o.GaveUp, retries(o.RetryMax)))
	}
	for _, k := range sortedKeys(o.Refused) {
		if k == "no answer" {
			why = append(why, fmt.Sprintf("%d got no answer", o.Refused[k]))
		} else {
			why = append(why, fmt.Sprintf("%d answered %s", o.Refused[k], k))
		}
	}
	return why
}

// retries is "1 retry", "3 retries".
func retries(n int) string {
	if n == 1 {
		return "1 retry"
	}
	return fmt.Sprintf("%d retries", n)
}

// outcomeCounts are the outcome figures as rows, for the tables of the reports.
func (s *Summary) outcomeCounts() []keyFigure {
	o := s.Outcomes
	m := func(v int64) string { return measuredCount(s.Delivery, v) }
	return []keyFigure{
		{"sent", fmt.Sprint(o.Messages)},
		{"accepted", fmt.Sprint(o.Accepted)},
		{"delivered", m(o.Delivered)},
		{"not delivered", m(o.NotDelivered)},
		{"failed", m(o.Failed)},
		{"expired", m(o.Expired)},
		{"other final status", m(o.OtherFinal)},
		{"no final status (lost)", m(o.NoFinalStatus)},
		{"not accepted", fmt.Sprint(o.NotAccepted)},
		{"gave up after retries", fmt.Sprint(o.GaveUp)},
	}
}

// sortedStates orders final states: the rank of stateRank (worst first), then by name.
func sortedStates(m map[string]int64) []string {
	ks := sortedKeys(m)
	sort.SliceStable(ks, func(i, j int) bool {
		ri, oki := stateRank[ks[i]]
		rj, okj := stateRank[ks[j]]
		if oki != okj {
			return oki
		}
		return ri < rj
	})
	return ks
}
