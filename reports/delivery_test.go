package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// A poll that reads ACCEPTED (the send's answer: no channel) on a chain
// through vkok says nothing of where the message is: it is not placed on vkok
// as a channel-less DELIVERED would be (before: a failover step sms → vkok
// for every message a poll found still ACCEPTED).
func TestPolledAcceptedIsNoStep(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Delivery.Via = "poll"
	r.meta.Chain = []string{"sms:SEEN", "vkok"}
	r.send(1, "c1", 1, 200, 0.01)
	poll := func(sec float64, state, channel string) {
		r.attempts = append(r.attempts, rundir.Attempt{Seq: 1, API: rundir.APIMessaging, Op: "check_status", Client: "c1",
			Attempt: 1, Intended: at(sec), Sent: at(sec), Code: 200, Latency: 0.5, Outcome: "ok", Class: "ok",
			TxID: "tx-1", State: state, Channel: channel})
	}
	poll(2, "ACCEPTED", "")
	poll(3, "DELIVERED", "sms")
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if len(d.Failover.Steps) != 0 || d.Failover.Messages != 0 {
		t.Errorf("failover steps %+v (%d messages), want none: the message never left sms", d.Failover.Steps, d.Failover.Messages)
	}
	if d.Lost != 1 {
		t.Errorf("lost %d, want 1 (sms DELIVERED under a SEEN condition is not the end)", d.Lost)
	}
}

// A polled failover run (chain viber, sms from run.json): NOT_DELIVERED on
// viber is a step to sms, not the end; the message ends DELIVERED on sms. One
// that stays NOT_DELIVERED on viber never ends: lost.
func TestPolledFailover(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Delivery.Via = "poll"
	r.meta.Chain = []string{"viber:DELIVERED", "sms"}
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
	r.callback(2, 5, "DELIVERED", "", true, true) // a real duplicate of the call (not of the delivery)
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if d.Refused != 1 || d.Redelivered != 1 || d.Duplicates != 1 || s.Idempotency.DuplicateDeliveries != 0 {
		t.Errorf("refused %d redelivered %d duplicates %d duplicate deliveries %d: want 1, 1, 1, 0",
			d.Refused, d.Redelivered, d.Duplicates, s.Idempotency.DuplicateDeliveries)
	}
	if p := d.RetryDelay.P50; p < 4.99 || p > 5.01 {
		t.Errorf("retry delay %v, want 5 s", p)
	}
	if p := d.Latency.Max; p < 1.99 || p > 2.01 {
		t.Errorf("latency max %v, want 2 s (to the first, refused, arrival)", p)
	}
}

// cascadeRun builds a viber → sms run with the failover condition until on
// viber, each message's records given as (seconds after its send, state,
// channel); a record with drop set was drawn by the simulator but never
// reached the sink. The truth lists every record as a step, called back
// (answered 200) unless dropped.
type srec struct {
	sec     float64
	state   string
	channel string
	drop    bool
}

func cascadeRun(until string, msgs [][]srec) *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Chain = rundir.Chain{{Channel: "viber", Until: until}, {Channel: "sms"}}.Strings()
	r.truth = &rundir.Truth{RateLimit: rundir.TruthRateLimit{Requests: 100, Window: rundir.Duration(time.Minute), Algorithm: "sliding"}}
	for i, recs := range msgs {
		seq := int64(i + 1)
		sent := float64(i)
		r.send(seq, "c1", sent, 200, 0.01)
		tm := rundir.TruthMessage{API: rundir.APIMessaging, ID: "tx-" + itoa(seq), Client: "c1", AcceptedAt: at(sent), Sends: 1}
		for _, x := range recs {
			tm.Steps = append(tm.Steps, rundir.TruthStep{Channel: x.channel, State: x.state, Delay: rundir.Duration(time.Duration(x.sec * float64(time.Second)))})
			cb := rundir.TruthCallback{ID: tm.ID, Kind: rundir.KindCallback, State: x.state, Channel: x.channel, Attempt: 1, At: at(sent + x.sec), Done: at(sent + x.sec)}
			if x.drop {
				cb.Action = rundir.CallbackDropped
			} else {
				cb.Action, cb.Status = rundir.CallbackSent, 200
				r.callback(seq, sent+x.sec, x.state, x.channel, false, false) // the sink's judgement is not trusted
			}
			r.truth.Callbacks = append(r.truth.Callbacks, cb)
		}
		tm.Final = recs[len(recs)-1].state
		r.truth.Messages = append(r.truth.Messages, tm)
	}
	r.sortEvents()
	return r
}

// The end of a message follows the failover rule (issue 12, cascades):
// NOT_DELIVERED on viber and then on sms is one message that was not
// delivered — not a duplicate, not lost, not delivered twice; under a SEEN
// condition, DELIVERED on viber is not the end. The truth comparison judges
// the truth by the same rule and agrees.
func TestCascadeEnd(t *testing.T) {
	notDelivered := []srec{{1, "NOT_DELIVERED", "viber", false}, {1.5, "NOT_DELIVERED", "sms", false}}
	var msgs [][]srec
	for range 20 {
		msgs = append(msgs, notDelivered)
	}
	// The step on viber arrived but the end on sms was dropped: lost, by the
	// truth too (matching callbacks by state alone found it delivered).
	msgs = append(msgs, []srec{{1, "NOT_DELIVERED", "viber", false}, {1.5, "NOT_DELIVERED", "sms", true}})
	s, err := Analyze(cascadeRun(rundir.StateDelivered, msgs).write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if d.Duplicates != 0 || s.Idempotency.DuplicateDeliveries != 0 || d.Lost != 1 || d.Received != 20 {
		t.Errorf("NOT_DELIVERED on viber then sms: duplicates %d, duplicate deliveries %d, lost %d, received %d; want 0, 0, 1, 20",
			d.Duplicates, s.Idempotency.DuplicateDeliveries, d.Lost, d.Received)
	}
	if d.Latency.P50 < 1.49 || d.Latency.P50 > 1.51 {
		t.Errorf("latency p50 %v, want 1.5 s (to NOT_DELIVERED on sms)", d.Latency.P50)
	}
	if len(d.Failover.Steps) != 1 || d.Failover.Steps[0].Count != 21 {
		t.Errorf("failover steps %+v, want viber → sms for 21 messages", d.Failover.Steps)
	}
	if tr := s.Truth; tr.ExpectedLost != 1 || tr.Agrees == nil || !*tr.Agrees {
		t.Errorf("truth: expected lost %d, agrees %v %q; want 1, true", tr.ExpectedLost, tr.Agrees, tr.Disagreements)
	}

	// condition_status SEEN: DELIVERED on viber, SEEN does not come within the
	// ttl, EXPIRED on viber, then DELIVERED on sms.
	seen := [][]srec{
		{{0.2, "DELIVERED", "viber", false}, {1.2, "EXPIRED", "viber", false}, {1.3, "DELIVERED", "sms", false}},
		{{0.2, "DELIVERED", "viber", false}, {0.4, "SEEN", "viber", false}},
	}
	s, err = Analyze(cascadeRun(rundir.StateSeen, seen).write(t))
	if err != nil {
		t.Fatal(err)
	}
	d = s.Delivery
	if d.Latency.Max < 1.29 || d.Latency.Max > 1.31 || d.Latency.P50 < 0.39 || d.Latency.P50 > 0.41 {
		t.Errorf("latency p50 %v max %v, want 0.4 s (SEEN on viber) and 1.3 s (DELIVERED on sms)", d.Latency.P50, d.Latency.Max)
	}
	if d.Duplicates != 0 || s.Idempotency.DuplicateDeliveries != 0 || d.Lost != 0 {
		t.Errorf("duplicates %d, duplicate deliveries %d, lost %d; want 0 each", d.Duplicates, s.Idempotency.DuplicateDeliveries, d.Lost)
	}
	if len(d.Failover.Steps) != 1 || d.Failover.Steps[0].Count != 1 {
		t.Errorf("failover steps %+v, want viber → sms once", d.Failover.Steps)
	}
	if tr := s.Truth; tr.Agrees == nil || !*tr.Agrees {
		t.Errorf("truth disagrees: %q", tr.Disagreements)
	}
}

// A measurement that differs from the truth fails the comparison: here the
// sink's log lost one arrival the simulator saw answered.
func TestTruthDisagreement(t *testing.T) {
	r := cascadeRun(rundir.StateDelivered, [][]srec{
		{{1, "DELIVERED", "viber", false}},
		{{2, "DELIVERED", "viber", false}},
	})
	r.events = r.events[:1]
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Truth
	if tr.Agrees == nil || *tr.Agrees || len(tr.Disagreements) == 0 {
		t.Fatalf("agrees %v, disagreements %q: want a disagreement on lost", tr.Agrees, tr.Disagreements)
	}
	if !strings.Contains(strings.Join(tr.Disagreements, "\n"), "delivery.lost: measured 1, true 0") {
		t.Errorf("disagreements %q do not name delivery.lost", tr.Disagreements)
	}
}

// A service that answers one id for several messages (a mock server with a
// fixed example answer does) is a finding, not a silent join of every
// callback to the first message.
func TestIDCollisions(t *testing.T) {
	r := newRun(rundir.APINotify)
	for seq := int64(1); seq <= 20; seq++ {
		r.send(seq, "c1", float64(seq), 200, 0.01).NotificationID = "n-same"
	}
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Idempotency.IDCollisions; got != 19 {
		t.Errorf("id collisions %d, want 19 (20 messages, one id)", got)
	}
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "already given another message") {
		t.Errorf("no warning for the collision: %q", s.Warnings)
	}
}

// A disagreement with the truth is msgload's bug: the verdict is error, its
// reason whose measurement with the command that reproduces it — never the
// service's fail. An id collision is the service's: a fail reason.
func TestTruthAndCollisionFailTheVerdict(t *testing.T) {
	r := cascadeRun(rundir.StateDelivered, [][]srec{{{1, "DELIVERED", "viber", false}}, {{2, "DELIVERED", "viber", false}}})
	r.events = r.events[:1]
	dir := r.write(t)
	s, err := conclude(dir)
	if err != nil {
		t.Fatal(err)
	}
	truth := reasonWith(s, "ground truth")
	if s.Verdict != VerdictError || truth == nil || truth.Whose != WhoseMeasurement || truth.Verdict != VerdictError ||
		!strings.Contains(truth.Next, "msgload report "+dir) || !strings.Contains(truth.Next, "issue") {
		t.Errorf("verdict %s %+v: want error, whose measurement, with msgload report %s and an issue to file", s.Verdict, s.Reasons, dir)
	}
	for _, x := range s.Reasons {
		if x.Whose == WhoseService {
			t.Errorf("a service reason for msgload's disagreement: %+v", x)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, rundir.SummaryFile)); !strings.Contains(string(b), `"whose": "measurement"`) {
		t.Errorf("summary.json has no structured reason whose measurement:\n%s", b)
	}
	c := cascadeRun(rundir.StateDelivered, [][]srec{{{1, "DELIVERED", "viber", false}}, {{2, "DELIVERED", "viber", false}}})
	for i := range c.attempts {
		c.attempts[i].TxID = "tx-same"
	}
	s, err = conclude(c.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if x := reasonWith(s, "already given"); s.Verdict == VerdictPass || x == nil || x.Whose != WhoseService || x.Verdict != verdictFail {
		t.Errorf("verdict %s %+v: want a service fail reason for the id collision", s.Verdict, s.Reasons)
	}
}

// reasonWith is the first of s's reasons whose text has sub, or nil.
func reasonWith(s *Summary, sub string) *Reason {
	for i := range s.Reasons {
		if strings.Contains(s.Reasons[i].Text, sub) {
			return &s.Reasons[i]
		}
	}
	return nil
}

// A call the simulator got no answer to (the answer was reset on the way
// back) may or may not be in the sink's log: the truth gives a range, and
// either log agrees with it.
func TestTruthUnansweredCall(t *testing.T) {
	for _, logged := range []bool{true, false} {
		r := cascadeRun(rundir.StateDelivered, [][]srec{{{1, "DELIVERED", "viber", false}}})
		// The simulator's first call got no answer; its retry a second later got 200.
		cb := &r.truth.Callbacks[0]
		cb.Status = 0
		retry := *cb
		retry.Action, retry.Attempt, retry.Status = rundir.CallbackRetried, 2, 200
		retry.At, retry.Done = at(2), at(2)
		r.truth.Callbacks = append(r.truth.Callbacks, retry)
		if logged {
			r.callback(1, 2, "DELIVERED", "viber", false, false) // the first call reached the sink too
		} else {
			r.events[0].ReceivedAt = at(2) // only the retry reached it
		}
		s, err := Analyze(r.write(t))
		if err != nil {
			t.Fatal(err)
		}
		tr := s.Truth
		if tr.Agrees == nil || !*tr.Agrees || tr.Unanswered != 1 || tr.ExpectedDuplicates != 0 || tr.ExpectedDuplicatesMax != 1 {
			t.Errorf("logged %v: agrees %v %q, unanswered %d, duplicates %d to %d; want agreement, 1, 0 to 1",
				logged, tr.Agrees, tr.Disagreements, tr.Unanswered, tr.ExpectedDuplicates, tr.ExpectedDuplicatesMax)
		}
	}
}

// The sink logs in commit order: two copies of one call that arrived together
// may be logged against their arrival order. The end is the first arrival
// (found by the oracle test, seeds 765 and 376).
func TestEndIsFirstArrivalNotFirstLine(t *testing.T) {
	r := newRun(rundir.APINotify)
	r.send(1, "c1", 1, 200, 0.01)
	r.callback(1, 3.5, "DELIVERED", "", true, false) // logged first, arrived second
	r.callback(1, 3.2, "DELIVERED", "", true, true)
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Delivery.Latency.Max; p < 2.19 || p > 2.21 {
		t.Errorf("latency %v, want 2.2 s (to the first arrival)", p)
	}
	if s.Delivery.Duplicates != 1 {
		t.Errorf("duplicates %d, want 1", s.Delivery.Duplicates)
	}
}

// TestEndBeforeSendIsNoMeasurement: a final status that arrived before its
// message's first send (a wrong join, or a sink whose clock is not the
// attacker's) was clipped to a latency of 0 in silence and the run passed;
// it is counted, and the verdict is error, whose the measurement's.
func TestEndBeforeSendIsNoMeasurement(t *testing.T) {
	r := newRun(rundir.APINotify)
	r.meta.Target = "http://127.0.0.1:8081" // no simulator: no truth.json to miss
	r.meta.Thresholds = []string{"delivery.latency.p95 < 1s"}
	r.send(1, "c1", 10, 200, 0.01)
	r.send(2, "c1", 11, 200, 0.01)
	r.callback(1, 10.5, "DELIVERED", "", true, false)
	r.callback(2, 9, "DELIVERED", "", true, false) // 2 s before message 2 was sent
	s, err := conclude(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Delivery.BeforeSend != 1 {
		t.Errorf("before_send %d, want 1", s.Delivery.BeforeSend)
	}
	if s.Verdict != VerdictError {
		t.Fatalf("verdict %s (%q), want error", s.Verdict, s.VerdictReasons)
	}
	found := false
	for _, x := range s.Reasons {
		found = found || x.Whose == WhoseMeasurement && strings.Contains(x.Text, "ended before its first send")
	}
	if !found {
		t.Errorf("no measurement reason for the end before the send: %+v", s.Reasons)
	}
}
