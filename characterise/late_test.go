package characterise

import (
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// idemRun is an idempotency probe's attempts: one notification accepted,
// resent with the same body lateS after its answer (mismatched: answered
// another id), its copies likewise.
func idemRun(lateS float64, mismatch bool, code int) []rundir.Attempt {
	t0 := time.Date(2026, 11, 26, 16, 0, 0, 0, time.UTC)
	after := t0.Add(100*time.Millisecond + time.Duration(lateS*float64(time.Second)))
	as := []rundir.Attempt{{Op: "send", Seq: 1, Attempt: 1, Code: 200, NotificationID: "n-1", Sent: t0, Latency: 0.1}}
	for i, kind := range []string{"sequential", "concurrent", "concurrent", rundir.ProbeChangedBody} {
		a := rundir.Attempt{Op: "send", Seq: 1, Attempt: 4 + i, Probe: kind, Sent: after, Latency: 0.01, Code: code}
		if code == 200 && kind != rundir.ProbeChangedBody {
			a.NotificationID, a.Mismatch = "n-1", mismatch
			if mismatch {
				a.NotificationID = "n-2"
			}
		}
		as = append(as, a)
	}
	return as
}

// idemState is a characterisation state holding only the idempotency
// probe's run.
func idemState(t *testing.T, embedded bool, as []rundir.Attempt) *state {
	t.Helper()
	f := simFile(t, "late", 3, 0, "{ rate: 1000/1s }", "")
	f.Scenario.Target.Embedded = embedded
	sum := &reports.Summary{}
	return &state{base: f.Scenario, plan: &Plan{}, data: map[string]*probeData{probeIdempotency: {attempts: as, sum: sum}}}
}

// A resend that left well after its first's answer (a busy generator) and
// got another id may have come after the key's window: no evidence about
// the window — cannot tell, never "no", and against the embedded simulator
// the probe's run is incomplete for the environment (issue 27 e). A prompt
// one is evidence: "no" stands, the run too.
func TestLateResendIsNoEvidence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lateS    float64
		embedded bool
	}{{0, true}, {2, true}, {2, false}} {
		st := idemState(t, c.embedded, idemRun(c.lateS, true, 200))
		fs := st.idempotencyFindings()
		late := c.lateS > 0
		for _, f := range fs[:2] {
			if got := f.Value == reports.CannotTell && strings.Contains(f.Because, "the key's window may have passed"); got != late || (!late && f.Value != no) {
				t.Errorf("resent %gs late: %s = %s (%s)", c.lateS, f.Rule, f.Value, f.Because)
			}
		}
		cp := reports.ContractProbe{Name: probeIdempotency, Verdict: reports.VerdictPass}
		st.judgeEnvironment(&cp)
		if want := late && c.embedded; (cp.Verdict == reports.VerdictIncomplete) != want || (want && !strings.Contains(strings.Join(cp.Reasons, ";"), "the machine was too busy")) {
			t.Errorf("resent %gs late, embedded %v: run %s %q", c.lateS, c.embedded, cp.Verdict, cp.Reasons)
		}
	}
}

// Resends after an accepted first that got no answer (the run ended before
// them on a busy machine) leave retry_same_id cannot tell: against the
// embedded simulator that is the environment's, the run incomplete — not a
// pass (issue 27 e: TestIdempotencyMatrix/draft-07).
func TestUnansweredResendsAreTheMachines(t *testing.T) {
	t.Parallel()
	st := idemState(t, true, idemRun(0, false, 0))
	if d := resendDoubts(idemRun(0, false, 200)[:2]); d.unanswered != 2 || d.planned != 3 { // the copies never sent
		t.Errorf("the resend but not its copies recorded: %+v, want 2 of 3 unanswered", d)
	}
	fs := st.idempotencyFindings()
	if fs[0].Value != reports.CannotTell || !strings.Contains(fs[0].Because, "not answered") {
		t.Errorf("%s = %s (%s), want cannot tell naming the unanswered resends", fs[0].Rule, fs[0].Value, fs[0].Because)
	}
	cp := reports.ContractProbe{Name: probeIdempotency, Verdict: reports.VerdictPass}
	st.judgeEnvironment(&cp)
	if cp.Verdict != reports.VerdictIncomplete {
		t.Errorf("run %s %q, want incomplete", cp.Verdict, cp.Reasons)
	}
}
