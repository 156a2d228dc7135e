package reports

import (
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestChartsOfARunGoingBounded: a run still going (the run's checkpoints
// analyse it every minute: no attack_end, no end in run.json yet) or killed
// is charted in buckets as wide as its plan makes them, at most maxBuckets.
// Before, its buckets were a second wide, each with its own latency hist, up
// to 4·maxBuckets of them: the run process's peak grew by them for its first
// 8 minutes (7.65 MB at 300/s; issue 23), and the seconds past the 480th
// were not charted at all.
func TestChartsOfARunGoingBounded(t *testing.T) {
	const secs = 600
	r := newRun(rundir.APIMessaging)
	r.meta.AttackEnd, r.meta.End = time.Time{}, time.Time{}
	r.meta.Planned.Duration = rundir.Duration(secs * time.Second)
	for i := range secs {
		r.send(int64(i+1), "c1", float64(i)+0.5, 200, 0.01)
	}
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	ch := s.charts
	if len(ch.lat) > maxBuckets {
		t.Errorf("%d latency hists for a run of %d s still going: want at most %d", len(ch.lat), secs, maxBuckets)
	}
	if charted := time.Duration(ch.n) * ch.width; charted < secs*time.Second {
		t.Errorf("%v of the run charted (%d buckets of %v): want all %d s", charted, ch.n, ch.width, secs)
	}
}
