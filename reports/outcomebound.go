package reports

import (
	"fmt"
	"maps"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/thresholds"
)

// The final-status counts of outcomes (delivered, not_delivered, failed,
// expired, other_final, by_state[…]) count the accepted messages that ended
// by the deadline. While some have no final status (outcomes.no_final_status,
// delivery.lost) each count is only a lower bound: a message that never
// reported may have failed. A threshold that reads them is judged at every
// way those messages could have ended — none of them in a count (as
// measured), or all of them in one count, for each count it reads (the
// corners of what is possible: exact for a threshold monotone in each
// count, as a comparison of a count, a sum or a share is). When the corners
// disagree the threshold cannot be known to hold: it fails "only a lower
// bound", like a percentile whose rank falls among the censored
// (nodata.go). outcomes.failed == 0 passed with every message lost.

// finalCountPaths are the paths of the final-status counts c reads.
func finalCountPaths(c *compiled) [][]any {
	var ps [][]any
	for _, p := range c.Paths {
		if len(p) < 2 || p[0] != "outcomes" {
			continue
		}
		switch p[1] {
		case "delivered", "not_delivered", "failed", "expired", "other_final":
			if len(p) == 2 {
				ps = append(ps, p)
			}
		case "by_state":
			if len(p) == 3 {
				if _, ok := p[2].(string); ok {
					ps = append(ps, p)
				}
			}
		}
	}
	return ps
}

// withEnded is s with n more messages ended in the count at p.
func withEnded(s summary.Summary, p []any, n int64) summary.Summary {
	o := &s.Outcomes
	switch p[1] {
	case "delivered":
		o.Delivered += n
	case "not_delivered":
		o.NotDelivered += n
	case "failed":
		o.Failed += n
	case "expired":
		o.Expired += n
	case "other_final":
		o.OtherFinal += n
	case "by_state":
		m := maps.Clone(o.ByState)
		if m == nil {
			m = map[string]int64{}
		}
		m[p[2].(string)] += n
		o.ByState = m
	}
	return s
}

// outcomeBound says why a threshold that holds on the measured outcomes
// (held) is not known to hold: one of the ways the messages without a final
// status could have ended makes it fail. "" when it holds at every corner,
// or reads no final-status count, or every message ended.
func (s *Summary) outcomeBound(c *compiled) (names []string, why string) {
	n := s.Outcomes.NoFinalStatus
	if !s.Outcomes.Measured || n <= 0 {
		return nil, ""
	}
	ps := finalCountPaths(c)
	for _, p := range ps {
		alt := withEnded(s.Summary, p, n)
		if ok, err := c.Holds(&alt); err == nil && !ok {
			for _, q := range ps {
				names = append(names, thresholds.PathString(q))
			}
			return names, fmt.Sprintf("%s counts only the messages that ended: %d of the %d accepted had no final status by the end of the wait, and the threshold fails if they ended there",
				thresholds.PathString(p), n, s.Outcomes.Accepted)
		}
	}
	return nil, ""
}
