package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// plannedRun is a complete run against a service elsewhere that planned
// planned messages at rate a second and sent n of them, each sent late by lag
// from its planned time (hit i due at i / rate), every one delivered.
func plannedRun(planned int64, rate float64, n int, lag, latency float64) *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8080"
	r.ownPlan = true
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: rate, Requests: planned, Duration: rundir.Duration(time.Duration(float64(planned) / rate * float64(time.Second)))}
	for i := 1; i <= n; i++ {
		due := float64(i) / rate
		a := r.send(int64(i), "c1", due+lag*float64(i)/float64(n), 200, latency)
		a.Intended = at(due)
		r.callback(int64(i), due+lag+latency+1, "DELIVERED", "sms", true, false)
	}
	return r
}

// loadReason is s's reason that the load was not held, or nil.
func loadReason(s *Summary) *Reason { return reasonWith(s, "the load was not held") }

// A run with no threshold that sent 6 % of its plan is incomplete, never a
// pass: the generator's CPU held it back (its sends left late, no cap was
// hit), an environment reason. The headline says sent of planned everywhere.
func TestLoadNotHeldIsIncomplete(t *testing.T) {
	r := plannedRun(100, 10, 6, 2, 0.01)
	r.meta.Thresholds = nil
	s, f := build(t, r)
	requireVerdict(t, s, VerdictIncomplete, "sent 6 of 100 planned messages (6.0 %)")
	x := loadReason(s)
	if x == nil || x.Whose != WhoseEnvironment || x.Limit != limitCPU || x.Verdict != VerdictIncomplete || x.Next == "" {
		t.Fatalf("reasons %+v: want the load generator's CPU (environment), with what to do", s.Reasons)
	}
	const headline = "Sent 6 of 100 planned messages (6.0 %)"
	for _, name := range []string{"terminal", rundir.MarkdownFile, rundir.HTMLFile} {
		if !strings.Contains(f[name], headline) {
			t.Errorf("%s does not say %q:\n%s", name, headline, f[name])
		}
	}
	if ExitCode(s.Verdict) == 0 {
		t.Errorf("exit code 0 for a run at 6 %% of its plan")
	}
	// Neither late nor capped: the generator stopped early, for no reason
	// the raw files show — not put down to a busy machine.
	s, _ = build(t, plannedRun(100, 10, 6, 0, 0.01))
	if x := loadReason(s); s.Verdict != VerdictIncomplete || x == nil || x.Limit != limitStopped || GeneratorLimit(x.Limit) {
		t.Errorf("verdict %s, reasons %+v: want incomplete, the generator stopped early", s.Verdict, s.Reasons)
	}
}

// A count plan that sent all its messages but late is under its planned rate:
// incomplete. One that held both is a pass that still says sent of planned.
func TestLoadRateNotHeld(t *testing.T) {
	s, _ := build(t, plannedRun(24, 8, 24, 3, 0.01)) // 24 at 8/s: 3 s planned, 6 s taken
	requireVerdict(t, s, VerdictIncomplete, "the rate achieved was")
	if x := loadReason(s); x == nil || strings.Contains(x.Text, "planned messages") {
		t.Errorf("reasons %q: the rate, not the count, fell short", s.VerdictReasons)
	}
	s, _ = build(t, plannedRun(24, 8, 24, 0, 0.01))
	requireVerdict(t, s, VerdictPass, "")
	if got := s.outcomeLines()[0]; got != "Sent 24 of 24 planned messages (100.0 %)." {
		t.Errorf("headline %q", got)
	}
}

// Whose limit held the load: sends that waited for a small in-flight cap are
// the cap's (raise load.maxInFlight); answers so slow that even the default
// cap could not carry the plan are the target's (a service reason, still
// incomplete: the plan was not applied, so no threshold can be judged as
// passed on it).
func TestLoadWhoseLimit(t *testing.T) {
	capped := func(r *run) *run {
		for i := range r.attempts {
			r.attempts[i].Capped = i > 1
		}
		return r
	}
	r := capped(plannedRun(50, 50, 10, 0.8, 0.2))
	r.meta.MaxInFlight = 2
	s, _ := build(t, r)
	requireVerdict(t, s, VerdictIncomplete, "in flight")
	if x := loadReason(s); x == nil || x.Limit != limitInFlight || x.Whose != WhoseEnvironment || !strings.Contains(x.Next, "load.maxInFlight (now 2)") {
		t.Errorf("reasons %+v: want the in-flight cap of 2", s.Reasons)
	}
	r = capped(plannedRun(100, 100, 30, 20, 20))
	r.meta.MaxInFlight = rundir.DefaultMaxInFlight
	s, _ = build(t, r)
	requireVerdict(t, s, VerdictIncomplete, "slower than the plan allows")
	if x := loadReason(s); x == nil || x.Limit != limitTarget || x.Whose != WhoseService {
		t.Errorf("reasons %+v: want the target", s.Reasons)
	}
}

// Respect mode's limiter holds sends on purpose when the plan is above the
// limit: not a shortfall. The headline says so.
func TestLoadHeldByRespectLimit(t *testing.T) {
	r := plannedRun(120, 2, 30, 0, 0.01) // 2/s planned, the limit lets 0.5/s go
	for i := range r.attempts {
		r.attempts[i].Sent = at(float64(i) * 2) // one every 2 s
	}
	r.meta.Limit = rundir.Limit{Requests: 5, Window: rundir.Duration(10 * time.Second), Mode: "respect"}
	s, _ := build(t, r)
	requireVerdict(t, s, VerdictPass, "")
	if got := s.outcomeLines()[0]; !strings.Contains(got, "Sent 30 of 120") || !strings.Contains(got, "respect mode held the load to the limit") {
		t.Errorf("headline %q", got)
	}
}

// In exceed mode the 429s the scenario sends for are not errors in the
// headline: they are said apart, and errors exclude them.
func TestExceedModeHeadline(t *testing.T) {
	r := passingRun()
	r.meta.Thresholds = nil
	r.meta.Limit = rundir.Limit{Requests: 1, Window: rundir.Duration(time.Minute), Mode: "exceed"}
	for i := int64(2); i <= 10; i++ {
		code := 429
		if i == 10 {
			code = 500
		}
		r.send(i, "c1", float64(i), code, 0.01)
	}
	_, f := build(t, r)
	for _, name := range []string{"terminal", rundir.MarkdownFile, rundir.HTMLFile} {
		if !strings.Contains(f[name], "10 messages, 80.00% answered 429, as exceed mode expects; 10.00% other errors") || strings.Contains(f[name], "90.00% errors") {
			t.Errorf("%s counts the expected 429s as errors:\n%s", name, f[name])
		}
	}
	r.meta.Limit.Mode = "respect" // in respect mode a 429 is a finding: an error
	_, f = build(t, r)
	if !strings.Contains(f["terminal"], "90.00% errors") {
		t.Errorf("respect mode: 429s are errors:\n%s", f["terminal"])
	}
}

// A figure that stands on a missing raw file has no data: the threshold line
// of the error run says so, never the value of nothing (without events.jsonl
// every accepted message would read as lost).
func TestMissingRawFileThresholdNoData(t *testing.T) {
	r := passingRun()
	r.meta.Thresholds = []string{"delivery.lost == 0", "requests.error_rate < 1%"}
	dir := r.write(t)
	mustRemove(t, dir, rundir.EventsFile)
	s, f := buildDir(t, dir)
	requireVerdict(t, s, VerdictError, "events.jsonl is missing")
	if !strings.Contains(f["terminal"], "delivery.lost == 0 — no data: delivery.lost: events.jsonl is missing") || strings.Contains(f["terminal"], "(value 1)") {
		t.Errorf("terminal:\n%s", f["terminal"])
	}
	if len(s.Thresholds) != 2 || !s.Thresholds[1].OK {
		t.Errorf("the error rate stands on attempts.jsonl, which is there: %+v", s.Thresholds)
	}
	if !strings.Contains(f[rundir.SummaryFile], `"whose": "environment"`) {
		t.Errorf("summary.json: the missing file is no environment reason:\n%s", f[rundir.SummaryFile])
	}
}

func mustRemove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// A count plan owes every message: 23 of 24 sent (4 % short, inside the
// tolerance a duration plan has) is incomplete, never a pass; the same
// shortfall of a duration plan is held.
func TestCountPlanShortByOneIsIncomplete(t *testing.T) {
	r := plannedRun(24, 8, 23, 0, 0.01)
	r.meta.Planned.Counted = true
	s, _ := build(t, r)
	requireVerdict(t, s, VerdictIncomplete, "sent 23 of 24 planned messages")
	r = plannedRun(24, 8, 23, 0, 0.01)
	if s, _ := build(t, r); loadReason(s) != nil {
		t.Errorf("a duration plan one message short: %+v", s.Reasons)
	}
}
