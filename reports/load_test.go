package reports

import (
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
	if got := s.LoadLine(); got != "Sent 24 of 24 planned messages (100.0 %)." {
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
	if got := s.LoadLine(); !strings.Contains(got, "Sent 30 of 120") || !strings.Contains(got, "respect mode held the load to the limit") {
		t.Errorf("headline %q", got)
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
