package reports

import (
	"maps"
	"slices"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// The reports' part of the vocabulary test (rundir/vocabulary_test.go has the
// simulator's, the sink's and the scenarios'): the reports count rather than
// refuse, so "accept" here means a final state gets its own count (delivered,
// not delivered, failed, expired) and its rank, and any other word falls into
// other_final.
func TestVocabularyReports(t *testing.T) {
	if got, want := slices.Sorted(maps.Keys(stateRank)), slices.Sorted(slices.Values(rundir.States())); !slices.Equal(got, want) {
		t.Errorf("stateRank ranks %v, rundir's states are %v", got, want)
	}
	known := slices.Concat(rundir.States(), rundir.NotifyStates())
	for _, st := range slices.Concat(known, []string{rundir.StateAccepted, "PENDING", "READ", "delivered", "sms", "UNKNOWN"}) {
		o := &outcomes{ByState: map[string]int64{}}
		countOutcome(o, st)
		named := o.Delivered + o.NotDelivered + o.Failed + o.Expired
		if want := slices.Contains(known, st); want != (named == 1) || want == (o.OtherFinal == 1) {
			t.Errorf("%q: counted delivered %d, not delivered %d, failed %d, expired %d, other %d; rundir lists it: %v",
				st, o.Delivered, o.NotDelivered, o.Failed, o.Expired, o.OtherFinal, want)
		}
		if (o.Delivered == 1) != rundir.Delivered(st) {
			t.Errorf("%q: delivered %d, rundir.Delivered %v", st, o.Delivered, rundir.Delivered(st))
		}
	}
}
