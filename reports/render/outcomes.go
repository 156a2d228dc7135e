package render

import (
	"fmt"
	"strings"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// outcomeLines says the outcomes in plain sentences, for the verdict area of
// every report: what was not accepted, what was not delivered and how.
func (s view) outcomeLines() []string {
	o, n := s.Outcomes, s.Noun()
	var out []string
	if l := s.LoadLine(); l != "" {
		out = append(out, l) // planned against sent comes first (load.go)
	}
	if o.Messages == 0 {
		return append(out, fmt.Sprintf("No %s was sent.", n))
	}
	if o.NotAccepted > 0 {
		why := notAcceptedWhy(o)
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
	for _, st := range reports.SortedStates(o.ByState) {
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
func notAcceptedWhy(o outcomes) []string {
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
func (s view) outcomeCounts() []keyFigure {
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
