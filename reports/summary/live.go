package summary

import (
	"fmt"

	"github.com/msgload/msgload/thresholds"
)

// Which abortOnFail thresholds can be judged while the run goes: the rule is
// told in package reports' live.go, which judges them (LiveThreshold.Judge);
// here is what scenario validation refuses before a run starts.

// growingCount are the counts that only grow as records are added to a run
// directory, so that their live value is at most their final one. A name
// ending in "[]" stands for every key of a map of counts.
var growingCount = map[string]bool{
	"requests.total": true, "requests.messages": true, "requests.accepted": true,
	"requests.late": true, "requests.capped": true,
	"requests.codes[]": true, "requests.errors[]": true, "requests.by_op[]": true, "requests.gave_up[]": true,
	"idempotency.probes": true, "idempotency.retries": true, "idempotency.mismatches": true, "idempotency.id_collisions": true,
	"rate_limit.rejected_429": true,
	"delivery.duplicates":     true, "delivery.malformed": true, "delivery.unauthorized": true,
}

// liveKnown says whether the figure at p is settled by the records on disk
// while the run goes (see above).
func liveKnown(p []any) bool {
	head, _ := p[0].(string)
	if len(p) > 1 && p[1] == "bad_lines" {
		return false // a line being written reads as torn until its end is flushed
	}
	switch head {
	case "requests", "rate_limit":
		return true
	case "idempotency":
		return len(p) < 2 || p[1] != "duplicate_deliveries"
	case "delivery":
		return len(p) == 2 && growingCount[thresholds.PathString(p)]
	}
	return false
}

// Grows says whether the figure at p is a growingCount.
func Grows(p []any) bool {
	if growingCount[thresholds.PathString(p)] {
		return true
	}
	return len(p) == 3 && growingCount[thresholds.PathString(p[:2])+"[]"]
}

// CheckLive compiles an abortOnFail threshold for a scenario of scope sc:
// it must be a threshold the report accepts (CheckThresholdFor) and read
// only figures known live.
func CheckLive(src string, sc Scope) (*Compiled, error) {
	if err := CheckThresholdFor(src, sc); err != nil {
		return nil, err
	}
	c, err := checkThreshold(src)
	if err != nil {
		return nil, err
	}
	for _, p := range c.Paths {
		if !liveKnown(p) {
			return nil, fmt.Errorf("%s is only known when the run has ended (after the grace period), so it cannot be judged live: drop abortOnFail, or bound a figure of the sends (requests.*, idempotency.*, rate_limit.*, delivery.duplicates)", thresholds.PathString(p))
		}
	}
	return c, nil
}

// CheckLiveThreshold is CheckLive's error alone, for scenario validation.
func CheckLiveThreshold(src string, sc Scope) error {
	_, err := CheckLive(src, sc)
	return err
}
