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

// failoverSource is a messaging characterisation file against the
// simulator: viber, which delivers in about 5 s (after the probe's ttl of
// 2 s), then sms.
const failoverSource = `name: fo
api: messaging
target: embedded
clients: 2
message:
  recipient: "+79990000001"
  text: "x {{.Seq}}"
  scenario:
    - { channel: viber, sender: msgload }
    - { channel: sms, sender: msgload }
delivery: { grace: 2s }
sim:
  seed: 7
  rateLimit: { rate: 20/2s, algorithm: sliding }
  profiles:
    viber: { median: 5s, p95: 8s, outcomes: { DELIVERED: 100% } }
    sms: { median: 100ms, p95: 300ms, outcomes: { DELIVERED: 100% } }
`

// The messaging-status probe: its messages' first channel expires after
// the probe's ttl and the service goes on with the next one; the failover
// finding's interval holds every message's failover after the ttl as the
// simulator's truth has it (its EXPIRED step against its acceptance), and
// check-status agrees with the callbacks (the simulator's do); each is told
// whenever the probe's run held its plan. The sends are within the budget.
func TestFailoverAfterTTL(t *testing.T) {
	t.Parallel()
	f, err := parse(t, failoverSource)
	if err != nil {
		t.Fatal(err)
	}
	res := characteriseOnly(t, f, hookOptions, probeMsgStatus) // the other probes have their own tests
	checkSent(t, res, hookOptions.Budget)
	var fd *reports.Finding
	for i := range res.Contract.Findings {
		if res.Contract.Findings[i].Rule == RuleFailoverAfterTTL {
			fd = &res.Contract.Findings[i]
		}
	}
	var text strings.Builder
	_ = res.Contract.Text(&text)
	if fd == nil {
		t.Fatalf("no finding of %s\n%s", RuleFailoverAfterTTL, text.String())
	}
	checkStatusAgrees(t, res.Contract, text.String())
	var run string
	for _, p := range res.Contract.Probes {
		if p.Name == probeMsgStatus {
			run = p.Dir
		}
	}
	if fd.Value == reports.CannotTell {
		if run == "" || res.Contract.Verdict != reports.VerdictIncomplete {
			t.Fatalf("%s: cannot tell (%s)\n%s", fd.Rule, fd.Because, text.String())
		}
		return
	}
	tr, err := rundir.ReadTruth(os.DirFS(run))
	if err != nil || tr == nil {
		t.Fatalf("the probe's truth in %s: %v", filepath.Base(run), err)
	}
	n := 0
	for _, m := range tr.Messages {
		for _, s := range m.Steps {
			if s.State != rundir.StateExpired {
				continue
			}
			n++
			if after := (s.Delay.D() - failoverTTL*time.Second).Seconds(); after < *fd.Low || after > *fd.High {
				t.Errorf("%s: %s failed over %.3f s after the ttl, outside %s [%g, %g]", fd.Rule, m.ID, after, fd.Value, *fd.Low, *fd.High)
			}
		}
	}
	if n == 0 {
		t.Errorf("the simulator's truth has no EXPIRED step\n%s", text.String())
	}
	t.Log(text.String())
}

// checkStatusAgrees: the simulator's check-status and callbacks agree.
func checkStatusAgrees(t *testing.T, ct *reports.Contract, text string) {
	t.Helper()
	for _, f := range ct.Findings {
		if f.Rule != RuleStatusAgrees {
			continue
		}
		if f.Value != yes && (f.Value != reports.CannotTell || ct.Verdict != reports.VerdictIncomplete) {
			t.Errorf("%s = %s %s %v, want yes\n%s", f.Rule, f.Value, f.Because, f.Evidence, text)
		}
		return
	}
	t.Errorf("no finding of %s\n%s", RuleStatusAgrees, text)
}

// compareStatus counts a message whose two final states differ as
// disagreeing (the first named), one missing either as missing — never
// agreeing.
func TestCompareStatus(t *testing.T) {
	t.Parallel()
	polled := map[string]string{"a": "DELIVERED", "b": "DELIVERED", "c": "NOT_DELIVERED"}
	called := map[string]string{"a": "DELIVERED", "b": "EXPIRED", "d": "DELIVERED"}
	c := compareStatus([]string{"a", "b", "c", "d"}, polled, called)
	if c.both != 2 || c.disagree != 1 || c.missing != 2 || !strings.Contains(c.first, "b, check-status DELIVERED, callbacks EXPIRED") {
		t.Errorf("%+v", c)
	}
}

// The messaging-status probe is planned for the messaging API only, after
// the callback probes, when what every other probe left of --max-time
// holds it; else its two rules say why, never a plan over the budget.
func TestMsgStatusPlan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		src     string
		o       Options
		why     string // "" when planned
		planned bool
	}{
		{failoverSource, hookOptions, "", true},
		{failoverSource, Options{Budget: 300, MaxWindow: 4 * time.Second, MaxTime: 42 * time.Second, HookWait: 12 * time.Second}, "does not fit", false}, // the others take about 39 s
		{strings.Replace(failoverSource, "delivery: { grace: 2s }", "delivery: { via: poll }", 1), hookOptions, "not planned: delivery via poll", false},
		{simSource("n", 7, 2, "{ rate: 20/2s }", ""), hookOptions, "", false}, // notify: no such probe, no such rule
	} {
		f, err := parse(t, tc.src)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(f, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		at, hooks := -1, 0
		for i, pr := range p.Probes {
			switch pr.Name {
			case probeMsgStatus:
				at = i
			case probeHookRetry, probeHookRetryAfter, probeHookGone, probeHookTimeout:
				hooks = i + 1
			}
		}
		switch {
		case tc.planned && (at != hooks || p.failWhy != ""):
			t.Errorf("%s: messaging-status at %d (after the callback probes: %d), not planned because %q", f.Scenario.API, at, hooks, p.failWhy)
		case !tc.planned && (at >= 0 || !strings.HasPrefix(p.failWhy, tc.why)):
			t.Errorf("%s: messaging-status at %d, not planned because %q, want %q", f.Scenario.API, at, p.failWhy, tc.why)
		case p.Requests() > p.Budget || p.Takes() > p.MaxTime:
			t.Errorf("%s: the plan takes %d requests and %s", f.Scenario.API, p.Requests(), p.Takes())
		}
		if tc.why != "" {
			st := &state{base: f.Scenario, plan: p}
			for _, fd := range []reports.Finding{st.failoverFinding(), st.statusFinding()} {
				if fd.Value != reports.CannotTell || fd.Because != p.failWhy {
					t.Errorf("%s = %s (%s), want cannot tell because %s", fd.Rule, fd.Value, fd.Because, p.failWhy)
				}
			}
		}
	}
}
