package render

import (
	"fmt"
)

// The verdict card is the top of every report (terminal, report.md,
// report.html): the verdict, each reason with whose it is and the next step,
// planned against sent, and each threshold as a person reads it —
// `delivery.latency.p95 2.26 s < 5 s (headroom 55 %)`, never a bare float.

// A threshold's figure is one of the axis units of plot.go: unitSeconds,
// unitShare (a fraction shown as a percentage) or unitCount.

// planLine is planned against sent, for the card's headline: the load line
// of a count plan, else what was sent at what rate against the planned rate.
func (s view) planLine() string {
	if l := s.LoadLine(); l != "" {
		return l
	}
	r := s.Requests
	line := fmt.Sprintf("Sent %s", plural(r.Messages, s.Noun()))
	if r.PlannedRate > 0 {
		line += fmt.Sprintf(" at %s/s of %s/s planned", showRate(r.AchievedRate, r.Messages > 0, twoDecimals), twoDecimals(r.PlannedRate))
	}
	return line + "."
}

// cardReason is a reason as the card shows it: whose it is, its text, and
// the next step.
type cardReason struct{ Whose, Text, Next string }

// cardReasons are the verdict's reasons for the card, worst first; a reason
// of an old summary.json, with no whose, says "unknown".
func (s view) cardReasons() []cardReason {
	rs := s.ReasonList()
	out := make([]cardReason, len(rs))
	for i, r := range rs {
		w := r.Whose
		if w == "" {
			w = "unknown"
		}
		out[i] = cardReason{Whose: w, Text: r.Text, Next: r.Next}
	}
	return out
}

// cardLines are the card's sentences: planned against sent first, then the
// outcome in words, then the comparison against the baseline (if any).
func (s view) cardLines() []string {
	lines := s.outcomeLines()
	if s.LoadLine() == "" { // outcomeLines opens with it when there is one
		lines = append([]string{s.planLine()}, lines...)
	}
	return append(lines, s.BaselineLines()...)
}
