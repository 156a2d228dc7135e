package reports

import (
	"fmt"
	"slices"

	"github.com/msgload/msgload/rundir"
)

// MaxListed bounds the lists of lost and late messages in summary.json.
const MaxListed = 20

// noteLost lists a lost message (and a late one) among the first MaxListed.
func noteLost(d *Delivery, seq int64, late bool) {
	keepSmallest(&d.LostSeqs, seq)
	if late {
		keepSmallest(&d.LateSeqs, seq)
	}
}

// keepSmallest keeps the MaxListed smallest sequence numbers, in order.
func keepSmallest(list *[]int64, seq int64) {
	i, found := slices.BinarySearch(*list, seq)
	if found || i >= MaxListed {
		return
	}
	*list = slices.Insert(*list, i, seq)
	if len(*list) > MaxListed {
		*list = (*list)[:MaxListed]
	}
}

// LostJQ is the jq command, run in the run directory, that lists the ids the
// service gave every lost message (late ones flagged): rundir.LostFile, the
// analysis's own list, joined by sequence with the sends of attempts.jsonl —
// no second reading of the rule in jq (no path in it: the reports are the
// same wherever the run directory is read from).
func (s *Summary) LostJQ() string {
	if !s.Delivery.Measured || len(s.Delivery.LostSeqs) == 0 {
		return ""
	}
	return fmt.Sprintf(`jq -nc --slurpfile lost %s '(reduce $lost[] as $l ({}; .[$l.seq | tostring] = $l.late)) as $late | inputs | select(.op == "send" and $late[.seq | tostring] != null) | {seq, late: $late[.seq | tostring], attempt, code, tx_id, notification_id}' %s`,
		rundir.LostFile, rundir.AttemptsFile)
}
