package reports

import (
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// A run whose sink logged no event at all observed no callback: the counts
// over the events (delivery.duplicates, .malformed, …) have no data, and a
// threshold on them fails — delivery.duplicates == 0 passed on a run whose
// every accepted message was lost. With the events there, they are data.
func TestNoEventsNoEventCounts(t *testing.T) {
	for _, expr := range []string{"delivery.duplicates == 0", "delivery.malformed == 0", "delivery.unmatched == 0", "idempotency.duplicate_deliveries == 0"} {
		r := plannedRun(10, 10, 10, 0, 0.01)
		r.meta.Thresholds = []string{expr}
		s, _ := build(t, r)
		requireVerdict(t, s, VerdictPass, "")

		r.events = nil // the service sent nothing, or could not reach the sink
		s, _ = build(t, r)
		requireVerdict(t, s, verdictFail, "")
		if th := s.Thresholds[0]; th.OK || !strings.Contains(th.Error, "the sink logged no event at all") {
			t.Errorf("%s with no event: %+v", expr, th)
		}
	}
}

// With no limit window in run.json nothing is counted against a limit:
// rate_limit.excess_accepted has no data (it read 0, and passed).
func TestNoLimitNoExcess(t *testing.T) {
	r := plannedRun(10, 10, 10, 0, 0.01)
	r.meta.Thresholds = []string{"rate_limit.excess_accepted == 0"}
	if r.meta.Limit.Window.D() <= 0 {
		t.Fatalf("the planned run has no limit: %+v", r.meta.Limit)
	}
	s, _ := build(t, r)
	requireVerdict(t, s, VerdictPass, "")
	r.meta.Limit = rundir.Limit{}
	s, _ = build(t, r)
	requireVerdict(t, s, verdictFail, "")
	if th := s.Thresholds[0]; th.OK || !strings.Contains(th.Error, "knows no rate limit") {
		t.Errorf("no limit: %+v", th)
	}
}

// The Retry-After counts are counts over the 429s: with none, no data.
func TestNo429NoRetryAfter(t *testing.T) {
	r := plannedRun(10, 10, 10, 0, 0.01)
	r.meta.Thresholds = []string{"rate_limit.retry_after.missing == 0", "rate_limit.retry_after.too_short == 0"}
	s, _ := build(t, r)
	requireVerdict(t, s, verdictFail, "")
	for _, th := range s.Thresholds {
		if th.OK || !strings.Contains(th.Error, "no request was refused 429") {
			t.Errorf("no 429: %+v", th)
		}
	}
	r = gen429(200, 3, "none") // 429s with a Retry-After: data
	r.meta.Thresholds = []string{"rate_limit.retry_after.missing == 0"}
	s, _ = build(t, r)
	if s.RateLimit.Rejected429 == 0 || !s.Thresholds[0].OK {
		t.Errorf("with %d 429s: %+v", s.RateLimit.Rejected429, s.Thresholds[0])
	}
}
