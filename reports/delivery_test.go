package reports

import (
	"testing"

	"github.com/msgload/msgload/rundir"
)

// A notification run with idempotency probes: the service answers one probe with
// another notificationId (a mismatch) and calls the webhook twice for one message.
func TestNotifyIdempotency(t *testing.T) {
	r := newRun(rundir.APINotify)
	r.send(1, "c1", 1, 200, 0.01)
	p := r.send(1, "c1", 1.5, 200, 0.01)                     // sequential probe, same id: fine
	p.Attempt, p.Probe, p.FirstSent = 2, "sequential", at(1) // probes number on from the message's attempts
	r.send(2, "c1", 2, 200, 0.01)
	p = r.send(2, "c1", 2.5, 200, 0.01) // probe answered with another id
	p.Attempt, p.Probe, p.FirstSent, p.NotificationID = 2, "concurrent", at(2), "n-other"
	p.Mismatch = true // as the attacker marks it; counted once per message with the id check
	r.callback(1, 4, "DELIVERED", "", true, false)
	r.callback(2, 5, "DELIVERED", "", true, false)
	r.callback(2, 6, "FAILED", "", true, false) // a second terminal webhook for one externalId
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	i := s.Idempotency
	if i.Probes != 2 || i.Mismatches != 1 || i.DuplicateDeliveries != 1 || i.Retries != 0 {
		t.Errorf("idempotency %+v: want 2 probes, 1 mismatch, 1 duplicate delivery, no retries", i)
	}
	if s.Requests.Messages != 2 || s.Delivery.Expected != 2 || s.Delivery.Received != 2 {
		t.Errorf("messages %d expected %d received %d", s.Requests.Messages, s.Delivery.Expected, s.Delivery.Received)
	}
	if p := s.Delivery.Latency; p.Count != 2 || p.Max < 2.99 || p.Max > 3.01 {
		t.Errorf("latency %+v: want two, the largest 3 s", p)
	}
}

// A polled messaging run: statuses come from check_status attempts, repeated
// reads of one state are not duplicates, and a message never seen terminal is lost.
func TestPolledRun(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Delivery.Via = "poll"
	r.send(1, "c1", 1, 200, 0.01)
	r.send(2, "c1", 2, 200, 0.01)
	poll := func(seq int64, sec float64, state string) {
		r.attempts = append(r.attempts, rundir.Attempt{Seq: seq, API: rundir.APIMessaging, Op: "check_status", Client: "c1",
			Attempt: 1, Intended: at(sec), Sent: at(sec), Code: 200, Latency: 0.5, Outcome: "ok", Class: "ok",
			TxID: "tx-" + itoa(seq), State: state, Channel: "sms"})
	}
	poll(1, 3, "ACCEPTED")
	poll(1, 5, "DELIVERED")
	poll(1, 7, "DELIVERED") // read again: the same state
	poll(2, 4, "ACCEPTED")
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if d.Via != "poll" || d.Expected != 2 || d.Received != 1 || d.Lost != 1 || d.Duplicates != 0 {
		t.Errorf("polled delivery %+v", d)
	}
	// Seen at 5.5 s (send time + answer latency), sent at 1 s.
	if p := d.Latency.P50; p < 4.49 || p > 4.51 {
		t.Errorf("polled latency %v, want 4.5 s", p)
	}
	if s.Requests.ByOp["check_status"] != 4 {
		t.Errorf("by_op %v", s.Requests.ByOp)
	}
}

// A polled failover run (chain viber, sms from run.json): NOT_DELIVERED on
// viber is a step to sms, not the end; the message ends DELIVERED on sms. One
// that stays NOT_DELIVERED on viber never ends: lost.
func TestPolledFailover(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Delivery.Via = "poll"
	r.meta.Chain = []string{"viber", "sms"}
	r.send(1, "c1", 1, 200, 0.01)
	r.send(2, "c1", 1, 200, 0.01)
	poll := func(seq int64, sec float64, state, channel string) {
		r.attempts = append(r.attempts, rundir.Attempt{Seq: seq, API: rundir.APIMessaging, Op: "check_status", Client: "c1",
			Attempt: 1, Intended: at(sec), Sent: at(sec), Code: 200, Latency: 0.5, Outcome: "ok", Class: "ok",
			TxID: "tx-" + itoa(seq), State: state, Channel: channel})
	}
	poll(1, 3, "NOT_DELIVERED", "viber")
	poll(1, 5, "DELIVERED", "sms")
	poll(2, 3, "NOT_DELIVERED", "viber")
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if d.Received != 1 || d.Lost != 1 {
		t.Errorf("received %d lost %d, want 1 and 1 (NOT_DELIVERED on viber is not the end)", d.Received, d.Lost)
	}
	if p := d.Latency.P50; p < 4.49 || p > 4.51 {
		t.Errorf("latency %v, want 4.5 s (to DELIVERED on sms)", p)
	}
	f := d.Failover
	if f.Messages != 2 || len(f.Steps) != 1 || f.Steps[0].From != "viber" || f.Steps[0].To != "sms" {
		t.Errorf("failover %+v: want both messages stepping viber→sms", f)
	}
}

// Events without a tag of ours (the sink could not match them: the service
// dropped trackData) are joined to attempts by key; one that joins nothing
// stays unmatched.
func TestJoinByKey(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.send(1, "c1", 1, 200, 0.01)
	r.events = append(r.events, rundir.Event{Kind: rundir.KindCallback, ReceivedAt: at(4),
		Corr: &rundir.Correlation{Key: "tx-1", State: "DELIVERED", Channel: "sms", Terminal: true}},
		rundir.Event{Kind: rundir.KindCallback, ReceivedAt: at(4),
			Corr: &rundir.Correlation{Key: "tx-of-nobody", State: "DELIVERED", Channel: "sms", Terminal: true}})
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Delivery.Received != 1 || s.Delivery.Unmatched != 1 || s.Delivery.Latency.P50 < 2.99 || s.Delivery.Latency.P50 > 3.01 {
		t.Errorf("joined by txId: %+v; want one received in 3 s, one unmatched", s.Delivery)
	}
}

// Failover without a chain in trackData: every change of channel is a step.
func TestFailoverWithoutChain(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.send(1, "c1", 0, 200, 0.01)
	r.callback(1, 5, "EXPIRED", "viber", false, false)
	r.callback(1, 8, "DELIVERED", "sms", true, false)
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	f := s.Delivery.Failover
	if f.Messages != 1 || len(f.Steps) != 1 || f.Steps[0].From != "viber" || f.Steps[0].To != "sms" {
		t.Fatalf("failover %+v", f)
	}
	if tm := f.Steps[0].Time.P50; tm < 7.99 || tm > 8.01 {
		t.Errorf("step time %v, want 8 s (first send to the first event on sms)", tm)
	}
	if s.Delivery.ByChannel["sms"].Count != 1 {
		t.Errorf("final channel: %v", s.Delivery.ByChannel)
	}
}

func TestTruthComparison(t *testing.T) {
	s, err := Analyze(fullRun().write(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Truth
	if tr == nil {
		t.Fatal("truth.json present but no truth section")
	}
	// Every 13th accepted message had its only callback dropped.
	if tr.ExpectedLost != 3 || tr.MeasuredLost != 3 || tr.CallbacksDropped != 3 {
		t.Errorf("lost: expected %d measured %d dropped %d, want 3 each", tr.ExpectedLost, tr.MeasuredLost, tr.CallbacksDropped)
	}
	if tr.WindowMismatches != 0 || len(tr.Windows) != 12 {
		t.Errorf("windows: %d rows, %d mismatches", len(tr.Windows), tr.WindowMismatches)
	}
	if tr.TrueLatency.P95 != tr.MeasuredLatency.P95 {
		t.Errorf("p95 true %v measured %v: the hand-built sink saw exactly the drawn delays", tr.TrueLatency.P95, tr.MeasuredLatency.P95)
	}
}

// Calls the sink refused on purpose make the service retry: the retries are
// counted as redeliveries with their delay, not as duplicates; latency runs to
// the first arrival, refused or not (as the sink measures it).
func TestRefusedOnPurpose(t *testing.T) {
	r := newRun(rundir.APINotify)
	r.send(1, "c1", 1, 200, 0.01)
	r.send(2, "c1", 2, 200, 0.01)
	r.callback(1, 3, "DELIVERED", "", true, false)
	r.events[len(r.events)-1].Answered = 503
	r.callback(1, 8, "DELIVERED", "", true, true) // the service's retry, 5 s later
	r.callback(2, 4, "DELIVERED", "", true, false)
	r.callback(2, 5, "DELIVERED", "", true, true) // a real duplicate
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if d.Refused != 1 || d.Redelivered != 1 || d.Duplicates != 1 || s.Idempotency.DuplicateDeliveries != 1 {
		t.Errorf("refused %d redelivered %d duplicates %d duplicate deliveries %d: want 1 each",
			d.Refused, d.Redelivered, d.Duplicates, s.Idempotency.DuplicateDeliveries)
	}
	if p := d.RetryDelay.P50; p < 4.99 || p > 5.01 {
		t.Errorf("retry delay %v, want 5 s", p)
	}
	if p := d.Latency.Max; p < 1.99 || p > 2.01 {
		t.Errorf("latency max %v, want 2 s (to the first, refused, arrival)", p)
	}
}
