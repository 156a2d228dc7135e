package reports

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// status adds a messaging callback of txId tx for message seq, arriving at
// sec, its status changed at upd (the body's updatedAt), on channel ("" for
// none, as vkok's records and some FAILED and EXPIRED ones come).
func (r *run) status(seq int64, tx string, sec, upd float64, state, channel string) {
	body := map[string]any{"txId": tx, "updatedAt": at(upd).Format(time.RFC3339Nano), "state": state}
	if channel != "" {
		body["channel"] = channel
	}
	b, _ := json.Marshal(body)
	r.events = append(r.events, rundir.Event{Kind: rundir.KindCallback, Route: "/callback", ReceivedAt: at(sec), API: rundir.APIMessaging,
		Payload: b, Corr: &rundir.Correlation{Key: tx, Run: r.meta.ID, Seq: seq, FirstSent: r.firstSent(seq), State: state, Channel: channel, Matched: true}})
}

// firstSent is the first send of seq as its attempts tell.
func (r *run) firstSent(seq int64) time.Time {
	for _, a := range r.attempts {
		if a.Seq == seq && a.Attempt == 1 {
			return a.FirstSent
		}
	}
	return time.Time{}
}

// sms(SEEN) → vkok with callbacks held back: vkok's DELIVERED (no channel: vkok
// is not in the status record's enum) arrives before sms's DELIVERED and
// EXPIRED. It belongs to vkok, where the message was when it changed, and
// ends the message — whatever the order of arrival or of the lines.
func TestChannellessRecordPlacedByItsOwnTime(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Chain = []string{"sms:SEEN", "vkok"}
	r.send(1, "c1", 1, 200, 0.01)
	r.status(1, "tx-1", 3.4, 3.3, rundir.StateDelivered, "") // vkok, overtook the two before it
	r.status(1, "tx-1", 3.5, 2, rundir.StateDelivered, "sms")
	r.status(1, "tx-1", 3.6, 3, rundir.StateExpired, "sms") // sms's ttl: on to vkok
	r.send(2, "c1", 2, 200, 0.01)
	r.status(2, "tx-2", 4.5, 4.4, rundir.StateExpired, "sms") // held back behind its own successor
	r.status(2, "tx-2", 4.0, 3, rundir.StateDelivered, "sms")
	r.status(2, "tx-2", 4.6, 4.5, rundir.StateDelivered, "")
	r.status(2, "tx-2", 4.7, 4.5, rundir.StateDelivered, "") // a duplicate of vkok's
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if d.Lost != 0 || d.Received != 2 || d.Duplicates != 1 {
		t.Errorf("lost %d received %d duplicates %d, want 0, 2, 1", d.Lost, d.Received, d.Duplicates)
	}
	if p := d.ByChannel["vkok"]; p.Count != 2 || p.Max < 2.59 || p.Max > 2.61 {
		t.Errorf("by channel %+v: want both ended on vkok, the slower in 2.6 s", d.ByChannel)
	}
	if len(d.Failover.Steps) != 1 || d.Failover.Steps[0].Count != 2 || d.Failover.Steps[0].To != "vkok" {
		t.Errorf("failover steps %+v, want sms → vkok twice", d.Failover.Steps)
	}
}

// viber(DELIVERED) → vkok(SEEN) → sms: vkok's EXPIRED (no channel) is sent
// twice. Both copies are one status change, on vkok: the step it makes to sms
// does not move its own copy onto sms, where EXPIRED would end the message
// (TestOracle seed 36 on the oracle's vkok-reorder shape: the second copy
// ended the message 181 ms before sms's DELIVERED, its true end).
func TestDuplicatedChannellessRecordStaysOnItsItem(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Chain = []string{"viber:DELIVERED", "vkok:SEEN", "sms"}
	r.send(1, "c1", 1, 200, 0.01)
	r.status(1, "tx-1", 2.0, 2.0, rundir.StateNotDelivered, "viber")
	r.status(1, "tx-1", 2.1, 2.1, rundir.StateDelivered, "")
	r.status(1, "tx-1", 3.1, 3.1, rundir.StateExpired, "") // vkok's ttl: on to sms
	r.status(1, "tx-1", 3.2, 3.1, rundir.StateExpired, "") // the same call again
	r.status(1, "tx-1", 3.5, 3.5, rundir.StateDelivered, "sms")
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if d.Duplicates != 1 || d.Lost != 0 {
		t.Errorf("duplicates %d lost %d, want 1 and 0", d.Duplicates, d.Lost)
	}
	if p := d.ByChannel["sms"]; p.Count != 1 || p.Max < 2.49 || p.Max > 2.51 {
		t.Errorf("by channel %+v: want the message ended on sms's DELIVERED, 2.5 s after its send", d.ByChannel)
	}
	if _, ok := d.ByChannel["vkok"]; ok {
		t.Errorf("by channel %+v: a copy of vkok's EXPIRED ended the message", d.ByChannel)
	}
}

// A message retried after an unknown outcome ends under both txIds: one
// duplicate delivery, whichever txId's records arrive first.
func TestDuplicateDeliveryWhicheverTxIDArrivesFirst(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Chain = []string{"viber:SEEN", "sms"}
	r.meta.Retry = rundir.Retry{On: []string{"timeout"}, Max: 1}
	r.send(1, "c1", 1, 0, 5) // timed out: the service took it as tx-a
	p := r.send(1, "c1", 6.5, 200, 0.01)
	p.Attempt, p.FirstSent, p.TxID = 2, at(1), "tx-b"
	// tx-b's first record comes first; tx-a ends first, tx-b second.
	r.status(1, "tx-b", 8, 7.9, rundir.StateDelivered, "viber") // not the end: viber waits for SEEN
	r.status(1, "tx-a", 9, 8.9, rundir.StateDelivered, "sms")
	r.status(1, "tx-b", 10, 9.9, rundir.StateSeen, "viber")
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Idempotency.DuplicateDeliveries; n != 1 {
		t.Errorf("duplicate deliveries %d, want 1 (ended under tx-a and under tx-b)", n)
	}
}

// The truth comparison judges idempotency.duplicate_deliveries: the simulator
// ended one message under two txIds, the sink logged only one of the ends.
func TestTruthJudgesDuplicateDeliveries(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Chain = []string{"sms"}
	r.meta.Retry = rundir.Retry{On: []string{"timeout"}, Max: 1}
	r.send(1, "c1", 1, 0, 5)
	p := r.send(1, "c1", 6.5, 200, 0.01)
	p.Attempt, p.FirstSent, p.TxID = 2, at(1), "tx-b"
	r.status(1, "tx-a", 9, 8.9, rundir.StateDelivered, "sms")
	truthMsg := func(id string, acc float64) rundir.TruthMessage {
		return rundir.TruthMessage{API: rundir.APIMessaging, ID: id, ExternalID: "test-run.1", Client: "c1", AcceptedAt: at(acc), Sends: 1,
			Steps: []rundir.TruthStep{{Channel: "sms", State: rundir.StateDelivered, Code: 0}}, Final: rundir.StateDelivered}
	}
	call := func(id string, sec float64) rundir.TruthCallback {
		return rundir.TruthCallback{ID: id, Kind: rundir.KindCallback, State: rundir.StateDelivered, Channel: "sms",
			Action: rundir.CallbackSent, Attempt: 1, At: at(sec), Done: at(sec + 0.01), Status: 200}
	}
	r.truth = &rundir.Truth{RateLimit: rundir.TruthRateLimit{Algorithm: "sliding"},
		Messages:  []rundir.TruthMessage{truthMsg("tx-a", 1.01), truthMsg("tx-b", 6.51)},
		Callbacks: []rundir.TruthCallback{call("tx-a", 8.99), call("tx-b", 9.5)}} // tx-b's end: answered, not in events.jsonl
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Truth
	if tr == nil || tr.Agrees == nil || *tr.Agrees {
		t.Fatalf("truth %+v: want a disagreement", tr)
	}
	if tr.ExpectedDuplicateDeliveries != 1 || tr.MeasuredDuplicateDeliveries != 0 {
		t.Errorf("duplicate deliveries: expected %d measured %d, want 1 and 0", tr.ExpectedDuplicateDeliveries, tr.MeasuredDuplicateDeliveries)
	}
	if !slices.ContainsFunc(tr.Disagreements, func(s string) bool { return strings.HasPrefix(s, "idempotency.duplicate_deliveries:") }) {
		t.Errorf("disagreements %q: want idempotency.duplicate_deliveries", tr.Disagreements)
	}
}

// updatedAt reads the status's own time from the body as logged: the quick
// look and encoding/json agree, and a body without one reads as none.
func TestUpdatedAt(t *testing.T) {
	want := at(2.5).UnixNano()
	ts := at(2.5).Format(time.RFC3339Nano)
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"txId":"x","updatedAt":"` + ts + `","state":"SEEN"}`, true},
		{`{ "updatedAt" :  "` + ts + `" }`, true},
		{`{"trackData":{"updatedAt":"2001-01-01T00:00:00Z"},"updatedAt":"` + ts + `"}`, true}, // the client's own key inside trackData
		{`{"updatedAt":"` + strings.Replace(ts, "T", `\u0054`, 1) + `"}`, true},               // escaped: encoding/json reads it
		{`{"state":"SEEN"}`, false},
		{`{"updatedAt":"yesterday"}`, false},
		{``, false},
	} {
		got, ok := updatedAt([]byte(tc.body))
		if ok != tc.ok || ok && got != want {
			t.Errorf("updatedAt(%s) = %d, %v; want %d, %v", tc.body, got, ok, want, tc.ok)
		}
	}
}
