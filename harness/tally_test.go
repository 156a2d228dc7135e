package harness

import (
	"testing"

	"github.com/msgload/msgload/rundir"
)

// TestTallyCountsMessages: the grace wait against a real target counts
// messages (sequences), not the ids the service gave them.
func TestTallyCountsMessages(t *testing.T) {
	tl := newTally("r1", "a")
	tl.chain = rundir.Chain{{Channel: "viber", Until: rundir.StateDelivered}, {Channel: "sms"}}
	send := func(seq int64, code int, tx, ext string) {
		tl.attempt(&rundir.Attempt{Seq: seq, Op: "send", Code: code, TxID: tx, ExternalID: ext})
	}
	final := func(run string, seq int64, key string, kind string, terminal bool) {
		// The tally judges the end by the chain, not by the sink's Terminal:
		// a final status is DELIVERED on sms, a step NOT_DELIVERED on viber.
		state, channel := rundir.StateDelivered, "sms"
		if !terminal {
			state, channel = rundir.StateNotDelivered, "viber"
		}
		part := ""
		if run == "r1" {
			part = "a"
		}
		e := rundir.Event{Kind: kind, Corr: &rundir.Correlation{Run: run, Part: part, Seq: seq, Key: key, State: state, Channel: channel}}
		if kind == rundir.KindWebhook {
			e.Payload = []byte(`{"notificationId":"` + key + `","externalId":"order-1"}`)
		}
		tl.event(&e)
	}
	want := func(step string, accepted, done int64, complete bool) {
		t.Helper()
		a, d := tl.counts()
		if a != accepted || d != done || tl.complete() != complete {
			t.Fatalf("%s: accepted %d done %d complete %v, want %d %d %v", step, a, d, tl.complete(), accepted, done, complete)
		}
	}
	send(1, 0, "", "")                                                               // processed, then reset: no answer
	send(1, 200, "tx-1b", "")                                                        // the retry: a second txId for message 1
	send(2, 200, "tx-2", "")                                                         //
	send(3, 200, "tx-3", "")                                                         //
	send(4, 503, "", "")                                                             // never accepted
	tl.attempt(&rundir.Attempt{Seq: 3, Op: "check_status", Code: 200, TxID: "tx-9"}) // not a send
	want("after the attack", 3, 0, false)
	final("r1", 1, "tx-1a", rundir.KindCallback, true) // the first txId's final status (tagged)
	final("r1", 1, "tx-1b", rundir.KindCallback, true) // and the retry's: still one message
	want("two txIds of one message", 3, 1, false)
	final("r1", 2, "tx-2", rundir.KindCallback, false)    // not final: a failover step
	final("r1", 4, "tx-4", rundir.KindCallback, true)     // final, but never accepted
	final("other", 2, "tx-2o", rundir.KindCallback, true) // another run's tag and message
	tl.event(&rundir.Event{Kind: rundir.KindCallback, Corr: &rundir.Correlation{Run: "r1", Part: "b", Seq: 2, Key: "tx-2b",
		State: rundir.StateDelivered, Channel: "sms"}}) // another part's message 2
	final("", 0, "tx-9", rundir.KindCallback, true) // untagged, joins nothing of ours
	final("", 0, "tx-3", rundir.KindIncoming, true) // not a status
	want("nothing that counts", 3, 1, false)
	final("", 0, "tx-2", rundir.KindCallback, false) // untagged step: the sink alone, knowing no chain, would call it final
	want("an untagged failover step", 3, 1, false)
	final("", 0, "tx-2", rundir.KindCallback, true) // untagged (trackData dropped): joined by txId
	want("joined by txId", 3, 2, false)
	final("", 0, "tx-3", rundir.KindWebhook, true)
	want("all", 3, 3, true)
}

// TestTallyJoinsWebhooksByNotificationID: an untagged webhook counts for the
// send the service answered with its notificationId, never for a send with
// the same externalId alone (another client's, or another run's, order-1).
func TestTallyJoinsWebhooksByNotificationID(t *testing.T) {
	tl := newTally("r1", "")
	tl.attempt(&rundir.Attempt{Seq: 1, Op: "send", Code: 200, NotificationID: "n-1", ExternalID: "order-1"})
	webhook := func(nid string) {
		tl.event(&rundir.Event{Kind: rundir.KindWebhook, Payload: []byte(`{"notificationId":"` + nid + `","externalId":"order-1","status":"DELIVERED"}`),
			Corr: &rundir.Correlation{Key: "order-1", State: rundir.StateDelivered, Terminal: true}})
	}
	webhook("n-9") // another client's order-1
	if tl.complete() {
		t.Fatal("a webhook of another notification with the same externalId ended the wait")
	}
	webhook("n-1")
	if !tl.complete() {
		t.Fatal("the webhook of the notification answered was not counted")
	}
}

// TestTallyPlacesChannellessRecords: sms(SEEN)→vkok, vkok's DELIVERED (its
// record names no channel) overtaking sms's EXPIRED: it is vkok's, the last
// item's, and ends the message — the grace wait no longer waits for an end
// that came (the item the message was on when the record arrived was sms,
// where a DELIVERED under condition SEEN ends nothing).
func TestTallyPlacesChannellessRecords(t *testing.T) {
	tl := newTally("r1", "")
	tl.chain = rundir.Chain{{Channel: rundir.ChannelSMS, Until: rundir.StateSeen}, {Channel: rundir.ChannelVKOK}}
	tl.attempt(&rundir.Attempt{Seq: 1, Op: "send", Code: 200, TxID: "tx-1"})
	tl.event(&rundir.Event{Kind: rundir.KindCallback, Corr: &rundir.Correlation{Run: "r1", Seq: 1, Key: "tx-1", State: rundir.StateDelivered}})
	if !tl.complete() {
		t.Fatal("vkok's DELIVERED, without a channel and before sms's EXPIRED, did not end the message")
	}
}

// counts returns the accepted messages and those of them with a final status.
func (t *tally) counts() (accepted, done int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.accepted, t.done
}

// A send whose outcome is unknown (a timeout, a reset) may have made a
// message under an id the run never got: its callbacks — a second delivery,
// a failover step — come after the final status of the id the retry got, so
// the wait is not ended early (it ended at the first final status and missed
// them: a duplicate delivery read 0, a step the truth showed read absent).
func TestTallyWaitsOutAnUnknownOutcome(t *testing.T) {
	tl := newTally("r1", "")
	tl.chain = rundir.Chain{{Channel: "sms"}}
	final := func(seq int64) {
		tl.event(&rundir.Event{Kind: rundir.KindCallback, Corr: &rundir.Correlation{Run: "r1", Seq: seq, State: rundir.StateDelivered, Channel: "sms"}})
	}
	tl.attempt(&rundir.Attempt{Seq: 1, Op: "send", Code: 200, Class: rundir.ClassOK, Outcome: rundir.OutcomeOK, TxID: "tx-1"})
	final(1)
	if !tl.complete() {
		t.Fatal("every send answered and every message final: not complete")
	}
	tl.attempt(&rundir.Attempt{Seq: 2, Op: "send", Code: 0, Class: rundir.ClassTimeout, Outcome: rundir.OutcomeUnknown})
	tl.attempt(&rundir.Attempt{Seq: 2, Attempt: 2, Op: "send", Code: 200, Class: rundir.ClassOK, Outcome: rundir.OutcomeOK, TxID: "tx-2b"})
	final(2)
	if tl.complete() {
		t.Error("message 2's first send timed out (its outcome unknown), yet the wait would end at the retry's final status")
	}
	// A send that reached nothing (no connection) made no message: no doubt.
	tl2 := newTally("r1", "")
	tl2.chain = tl.chain
	tl2.attempt(&rundir.Attempt{Seq: 1, Op: "send", Code: 0, Class: "conn", Outcome: rundir.OutcomeFail})
	tl2.attempt(&rundir.Attempt{Seq: 1, Attempt: 2, Op: "send", Code: 200, Class: rundir.ClassOK, Outcome: rundir.OutcomeOK, TxID: "tx-1"})
	tl2.event(&rundir.Event{Kind: rundir.KindCallback, Corr: &rundir.Correlation{Run: "r1", Seq: 1, State: rundir.StateDelivered, Channel: "sms"}})
	if !tl2.complete() {
		t.Error("a send that never connected made the wait last the whole grace period")
	}
}
