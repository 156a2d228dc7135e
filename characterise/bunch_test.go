package characterise

import (
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// levelRun is the sustained probe's sends against a sliding log of 20/2s:
// each level as planned (18, 20, 22 in 2 s each, back to back); the first
// late sends of the 0.9 level left late all at once (a busy generator), so
// they hold the log's slots into the 1.0 level, whose first refused sends
// the limiter refused.
func levelRun(late, refused int) []rundir.Attempt {
	t0 := time.Date(2026, 11, 26, 16, 0, 0, 0, time.UTC)
	var as []rundir.Attempt
	seq := int64(0)
	start := t0
	for li, n := range []int{18, 20, 22} {
		gap := 2 * time.Second / time.Duration(n)
		for k := range n {
			seq++
			a := rundir.Attempt{Op: "send", Seq: seq, Attempt: 1, Code: 200, Intended: start.Add(time.Duration(k) * gap)}
			a.Sent = a.Intended
			if li == 0 && k < late {
				a.Sent = start.Add(time.Duration(late) * gap)
			}
			if li == 1 && k < refused {
				a.Code = 429
			}
			as = append(as, a)
		}
		start = start.Add(2 * time.Second)
	}
	return as
}

// A level whose late sends went out together put more in one window than
// planned: its refusals are the bunch's, not the limiter's at that rate —
// cannot tell, never a share at a rate nobody planned (issue 27 f:
// TestSustainedLevels, 35 % refused at 1.0 × a sliding log of 20/2s). A
// level sent as planned is told.
func TestBunchedLevelIsNotHeld(t *testing.T) {
	t.Parallel()
	sp := sustainPlan{w: 2 * time.Second, limit: 20, levels: []int64{18, 20, 22}}
	fs := sp.levelFindings(levelRun(9, 7))
	if at := fs[1]; at.Value != reports.CannotTell || !strings.Contains(at.Because, "bunched") {
		t.Errorf("1.0 × after 9 late sends at once: %s (%s), want cannot tell: bunched", at.Value, at.Because)
	}
	if why := sp.bunchWhy(levelRun(9, 7)); !strings.HasPrefix(why, "at 1 ×: the level's sends bunched") {
		t.Errorf("the run's reason %q, want the 1.0 level's bunch (the 0.9 level's late sends hold its slots)", why)
	}
	if why := sp.bunchWhy(levelRun(0, 0)); why != "" {
		t.Errorf("as planned: the run's reason %q, want none", why)
	}
	fs = sp.levelFindings(levelRun(0, 0))
	for _, f := range fs[:2] {
		if f.Value != "0" {
			t.Errorf("as planned: %s = %s (%s), want 0", f.Rule, f.Value, f.Because)
		}
	}
}
