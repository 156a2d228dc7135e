package characterise

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// simTimeout is the simulator's own timeout of its calls (sim.DefaultConfig).
const simTimeout = 5 * time.Second

// checkSent counts every send that left, in every probe's attempts.jsonl:
// at most the budget, and what the contract says was sent.
func checkSent(t *testing.T, res *Result, budget int64) {
	t.Helper()
	var sent int64
	err := filepath.WalkDir(res.Dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == rundir.AttemptsFile {
			as, rerr := readSends(path)
			sent += int64(len(as))
			err = rerr
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if sent > budget || res.Contract.Sent != sent || sent == 0 {
		t.Errorf("budget %d: %d sends in the attempts, the contract says %d", budget, sent, res.Contract.Sent)
	}
}

// The callback-gone and callback-timeout probes are planned within the
// budget and the time, after the other callback probes, when what every
// other probe left of --max-time holds them; else they are left out, their
// requests given back to the isolation probe, and both their rules say
// why (not planned: does not fit) — never a plan over the budget.
func TestGonePlan(t *testing.T) {
	t.Parallel()
	f := hookFile(t, hookCase{"", 4, 300 * time.Millisecond, 2, 0, false, true, 0})
	for _, tc := range []struct {
		o    Options
		want bool // planned
	}{
		{hookOptions, true},
		{Options{Budget: 300, MaxWindow: 4 * time.Second, MaxTime: 70 * time.Second, HookWait: 12 * time.Second}, false},
		{Options{Budget: 120, MaxWindow: 4 * time.Second, MaxTime: 2 * time.Minute, HookWait: 12 * time.Second}, false},
		{Options{}, false}, // the defaults: the straddle and the sustained probe before them
	} {
		p, err := NewPlan(f, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		p.Print(&b)
		t.Log(b.String())
		var names []string
		var gone, retryAfter int
		for i, pr := range p.Probes {
			names = append(names, pr.Name)
			switch pr.Name {
			case probeHookGone, probeHookTimeout:
				gone++
				if pr.Requests != hookGoneN || i <= retryAfter {
					t.Errorf("%+v: %s of %d requests at %d, after callback-retry-after at %d", tc.o, pr.Name, pr.Requests, i, retryAfter)
				}
			case probeHookRetryAfter:
				retryAfter = i
			}
		}
		if p.Requests() > p.Budget || p.Takes() > p.MaxTime {
			t.Errorf("%+v: the plan takes %d requests and %s", tc.o, p.Requests(), p.Takes())
		}
		switch {
		case tc.want && (gone != 2 || p.goneWhy != "" || p.hookHold < minHookHold || p.hookHold >= p.hookWait):
			t.Errorf("%+v: probes %v, hold %s, not planned because %q", tc.o, names, p.hookHold, p.goneWhy)
		case !tc.want && (gone != 0 || !strings.HasPrefix(p.goneWhy, "does not fit") && !strings.HasPrefix(p.goneWhy, "not planned")):
			t.Errorf("%+v: probes %v, not planned because %q", tc.o, names, p.goneWhy)
		}
		if !tc.want {
			st := &state{base: f.Scenario, plan: p}
			for _, fd := range st.goneFindings() {
				if fd.Value != reports.CannotTell || fd.Because != p.goneWhy {
					t.Errorf("%+v: %s = %s (%s), want cannot tell because %s", tc.o, fd.Rule, fd.Value, fd.Because, p.goneWhy)
				}
			}
		}
	}
}
