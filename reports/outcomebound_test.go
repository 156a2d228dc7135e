package reports

import (
	"strings"
	"testing"
)

// The final-status counts are lower bounds while messages have no final
// status: a threshold that holds on them as measured but fails if those
// messages ended in a count it reads is not known to hold (it fails);
// one that holds however they end is judged as ever; with every message
// ended nothing changes. outcomes.failed == 0 passed with every callback lost.
func TestOutcomesAreLowerBounds(t *testing.T) {
	lost := func(n int) *run {
		r := plannedRun(10, 10, 10, 0, 0.01)
		r.events = r.events[:len(r.events)-n] // the last n messages never reported
		return r
	}
	for _, tc := range []struct {
		expr   string
		lost   int
		ok     bool
		reason string
	}{
		{"outcomes.failed == 0", 0, true, ""},
		{"outcomes.failed == 0", 10, false, "outcomes.failed counts only the messages that ended: 10 of the 10 accepted had no final status"},
		{"outcomes.failed < 5", 3, true, ""}, // 3 more failed would still be under 5
		{"outcomes.failed < 5", 6, false, "6 of the 10 accepted"},
		{`outcomes.by_state["FAILED"] == 0`, 2, false, "outcomes.by_state.FAILED counts only"},
		{"outcomes.delivered >= 7", 3, true, ""},                 // from below: the delivered are at least 7 however the rest end
		{"outcomes.delivered >= 8", 3, false, ""},                // fails as measured: judged, no bound
		{"outcomes.failed + outcomes.expired <= 2", 2, true, ""}, // both lost in one count: 2
		{"outcomes.failed + outcomes.expired <= 1", 2, false, "counts only the messages that ended"},
	} {
		r := lost(tc.lost)
		r.meta.Thresholds = []string{tc.expr}
		s, _ := build(t, r)
		th := s.Thresholds[0]
		if th.OK != tc.ok || !strings.Contains(th.Error, tc.reason) {
			t.Errorf("%s with %d lost: %+v, want ok %v and %q", tc.expr, tc.lost, th, tc.ok, tc.reason)
		}
		if tc.reason != "" && (len(th.NoData) == 0 || !strings.HasPrefix(th.Error, "only a lower bound: ")) {
			t.Errorf("%s with %d lost: %+v, want the figure named as only a lower bound", tc.expr, tc.lost, th)
		}
	}
}
