package reports

import (
	"testing"

	"github.com/msgload/msgload/rundir"
)

// deliveryRun is a messaging run whose delivery figures are known by construction.
func deliveryRun() *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Thresholds = []string{"delivery.latency.p95 < 30s", "delivery.lost / delivery.expected < 1%", `requests.codes["429"] == 0`}
	r.send(1, "c1", 1, 200, 0.010)      // delivered after 2 s
	r.send(2, "c1", 2, 200, 0.020)      // SEEN arrives before DELIVERED: final SEEN, latency to the first terminal
	r.send(3, "c1", 3, 200, 0.030)      // no callback at all: lost
	r.send(4, "c1", 4, 200, 0.040)      // terminal only after the grace period: lost and late
	r.send(5, "c1", 5, 500, 0.050)      // refused: not expected
	r.send(6, "c1", 6, 200, 0.060)      // the same callback twice: one duplicate, not a second delivery
	r.send(7, "c1", 7, 0, 5.0)          // timed out; a retry is accepted
	a := r.send(7, "c1", 9, 200, 0.010) // the retry
	a.Attempt, a.FirstSent = 2, at(7)
	r.callback(1, 3, "DELIVERED", "sms", true, false)
	r.callback(2, 5, "SEEN", "sms", true, false)
	r.callback(2, 6, "DELIVERED", "sms", true, false)
	r.callback(4, 75, "DELIVERED", "sms", true, false) // deadline is 60 s + 10 s
	r.callback(6, 7, "DELIVERED", "sms", true, false)
	r.callback(6, 8, "DELIVERED", "sms", true, true)
	r.callback(7, 17, "DELIVERED", "sms", true, false) // 10 s from the FIRST attempt
	r.send(8, "c1", 8, 0, 5.0)                         // timed out, never retried, yet the service sent it
	r.callback(8, 12, "DELIVERED", "sms", true, false)
	// Message 10: the service processed the first attempt but the answer was
	// lost (tx-10a); the retry made a second message (tx-10b); both were
	// delivered: one duplicate delivery, no duplicate callback.
	r.send(10, "c1", 9, 0, 5.0)
	a = r.send(10, "c1", 15, 200, 0.010)
	a.Attempt, a.FirstSent, a.TxID = 2, at(9), "tx-10b"
	r.callback(10, 12, "DELIVERED", "sms", true, false)
	r.events[len(r.events)-1].Corr.Key = "tx-10a"
	r.callback(10, 17, "DELIVERED", "sms", true, false)
	r.events[len(r.events)-1].Corr.Key = "tx-10b"
	r.events = append(r.events,
		rundir.Event{Kind: rundir.KindMalformed, Route: "/callback", ReceivedAt: at(10), Reason: "state: not in enum"},
		rundir.Event{Kind: rundir.KindCallback, Route: "/callback", ReceivedAt: at(11), Corr: &rundir.Correlation{Key: "other", Matched: false}})
	return r
}

func TestDeliveryFigures(t *testing.T) {
	s, err := Analyze(deliveryRun().write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"expected: every message with a 2xx on some attempt", d.Expected, 7},
		{"received: expected messages with a terminal state, even late", d.Received, 6},
		{"lost: no terminal before attack end + grace (includes late)", d.Lost, 2},
		{"late: terminal only after the deadline", d.Late, 1},
		{"duplicates: a second arrival of the same state for the same txId and channel", d.Duplicates, 1},
		{"unmatched: a callback that matches no send", d.Unmatched, 1},
		{"malformed: kept and counted", d.Malformed, 1},
		{"duplicate deliveries: one message ended under two txIds", s.Idempotency.DuplicateDeliveries, 1},
		{"retries: attempts after the first", s.Idempotency.Retries, 2},
		{"requests: every attempt", s.Requests.Total, 11},
		{"messages: first attempts", s.Requests.Messages, 9},
		{"unconfirmed: delivered without a 2xx", d.Unconfirmed, 1},
		{"codes: one 500", s.Requests.Codes["500"], 1},
		{"codes: three no-answers", s.Requests.Codes["0"], 3},
		{"errors by class", s.Requests.Errors["timeout"], 3},
		{"by_state SEEN: first arrival per message and state", s.Delivery.ByState["SEEN"].Count, 1},
		{"by_state DELIVERED: first arrival per txId and state, confirmed or not", s.Delivery.ByState["DELIVERED"].Count, 8},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
	// Latencies from the first attempt: 2, 3, 71, 1, 10 seconds; of the
	// delivered alone, the late one's 71 s is the max.
	if p := d.LatencyDelivered; p.Max < 70.9 || p.Max > 71.1 || p.Censored != 0 {
		t.Errorf("delivered alone %+v, want the max 71 s (message 4, late)", p)
	}
	// Over every accepted message, 3 (none) and 4 (late) are censored at the
	// deadline (70 s): the max is only at least 67 s (message 3, sent at 3 s).
	if p := d.Latency; p.Censored != 2 || p.MaxAtLeast == nil || *p.MaxAtLeast != 67 {
		t.Errorf("delivery latency %+v, want 2 censored and max at least 67 s", p)
	}
	if p := d.ByChannel["sms"]; p.Count != 6 || p.Censored != 1 {
		t.Errorf("by_channel sms %+v, want 6 of which 1 censored (message 4, late, on sms)", p)
	}
	if p := d.ByChannel["none"]; p.Count != 1 || p.Censored != 1 {
		t.Errorf("by_channel none %+v, want message 3 censored (no record, no chain)", p)
	}
	if p := d.ByState["SEEN"].P50; p < 2.99 || p > 3.01 {
		t.Errorf("SEEN latency %v, want 3 s", p)
	}
	// Eight messages sent from 1 s to 8 s: seven intervals in seven seconds.
	if s.Requests.AchievedRate != 1 {
		t.Errorf("achieved rate %v, want 1/s", s.Requests.AchievedRate)
	}
}
