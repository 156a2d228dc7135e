package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// TestBadAnswerNotAccepted: a 2xx whose body was not the API's answer (class
// bad_answer) is an error and no acceptance, so no delivery is expected of it
// and it is not lost; sends the attacker gave up are counted by reason and
// shown in the key figures.
func TestBadAnswerNotAccepted(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.send(1, "c1", 1, 200, 0.01)
	r.callback(1, 2, "DELIVERED", "sms", true, false)
	bad := r.send(2, "c1", 2, 200, 0.01)
	bad.Outcome, bad.Class, bad.TxID = rundir.OutcomeUnknown, "bad_answer", ""
	gone := r.send(3, "c1", 3, 429, 0.01)
	gone.GaveUp = "retry_after_past_end"
	stopped := r.send(4, "c1", 4, 503, 0.01)
	stopped.GaveUp = "stopped"
	s, err := reports.Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests.Accepted != 1 || s.Delivery.Expected != 1 || s.Delivery.Lost != 0 {
		t.Errorf("accepted %d expected %d lost %d; want 1, 1, 0", s.Requests.Accepted, s.Delivery.Expected, s.Delivery.Lost)
	}
	if s.Requests.Errors["bad_answer"] != 1 {
		t.Errorf("errors %v, want bad_answer 1", s.Requests.Errors)
	}
	if g := s.Requests.GaveUp; g["retry_after_past_end"] != 1 || g["stopped"] != 1 || len(g) != 2 {
		t.Errorf("gave_up %v", g)
	}
	var out bytes.Buffer
	Terminal(&out, s)
	if want := "2 (gave up: Retry-After past the run's end 1, interrupted while waiting 1)"; !strings.Contains(out.String(), want) {
		t.Errorf("terminal summary lacks %q:\n%s", want, out.String())
	}
}

// TestCappedSends: first attempts the in-flight cap delayed are counted and
// the key figures say so with the cap.
func TestCappedSends(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.MaxInFlight = 10
	r.send(1, "c1", 1, 200, 0.01)
	for seq := int64(2); seq <= 4; seq++ {
		a := r.send(seq, "c1", float64(seq), 200, 0.01)
		a.Capped, a.Sent = true, a.Sent.Add(500_000_000)
	}
	s, err := reports.Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests.Capped != 3 || s.Requests.MaxInFlight != 10 {
		t.Errorf("capped %d, max in flight %d; want 3 and 10", s.Requests.Capped, s.Requests.MaxInFlight)
	}
	var out bytes.Buffer
	Terminal(&out, s)
	if want := "3 (at most 10 messages in flight"; !strings.Contains(out.String(), want) {
		t.Errorf("terminal summary lacks %q:\n%s", want, out.String())
	}
}
