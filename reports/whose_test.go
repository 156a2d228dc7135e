package reports

import (
	"testing"

	"github.com/msgload/msgload/rundir"
)

// TestWhoseEvents: the report of one part of a run with parts counts only
// that part's tagged events (the other part numbers its messages from 1 too,
// under the same run id); an untagged webhook joins a send by the
// notificationId answered, never by an externalId alone; another run's tag
// (a replay that kept a recording's externalIds) joins by id as well, with
// the latency from this run's send, not the tag's.
func TestWhoseEvents(t *testing.T) {
	r := newRun(rundir.APINotify)
	r.meta.Part = "n"
	for seq := int64(1); seq <= 4; seq++ {
		a := r.send(seq, "c1", float64(seq), 200, 0.01)
		a.ExternalID = "order-" + itoa(seq)
	}
	webhook := func(sec float64, corr rundir.Correlation, payload string) {
		corr.State, corr.Terminal = "DELIVERED", true
		r.events = append(r.events, rundir.Event{Kind: rundir.KindWebhook, Route: "/webhook", ReceivedAt: at(sec), API: rundir.APINotify,
			Payload: []byte(payload), Corr: &corr})
	}
	// Message 1: this part's tag.
	webhook(3, rundir.Correlation{Key: "k1", Run: r.meta.ID, Part: "n", Seq: 1, FirstSent: at(1), Matched: true}, `{"notificationId":"n-1"}`)
	// The other part's messages 2 and 3: not this part's.
	webhook(4, rundir.Correlation{Key: "k2", Run: r.meta.ID, Part: "m", Seq: 2, FirstSent: at(2), Matched: true}, `{"notificationId":"x-2"}`)
	webhook(4, rundir.Correlation{Key: "k3", Run: r.meta.ID, Part: "m", Seq: 3, FirstSent: at(3), Matched: true}, `{"notificationId":"x-3"}`)
	// order-3 of another client: same externalId, another notification.
	webhook(5, rundir.Correlation{Key: "order-3"}, `{"notificationId":"z-3","externalId":"order-3"}`)
	// Message 4 under a recorded run's tag, joined by its notificationId.
	webhook(6, rundir.Correlation{Key: "ml.old.9.5", Run: "old", Seq: 9, FirstSent: at(-1000)}, `{"notificationId":"n-4","externalId":"ml.old.9.5"}`)
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if d.Expected != 4 || d.Received != 2 || d.Lost != 2 || d.Unmatched != 3 || d.Duplicates != 0 {
		t.Errorf("expected %d received %d lost %d unmatched %d duplicates %d: want 4, 2 (messages 1 and 4), 2, 3, 0",
			d.Expected, d.Received, d.Lost, d.Unmatched, d.Duplicates)
	}
	if p := d.LatencyDelivered.Max; p < 1.99 || p > 2.01 {
		t.Errorf("latency max %v s, want 2 s (message 4 from this run's send)", p)
	}
}

// TestHeldOnPurpose: a call the sink held past the service's timeout
// (Event.Delayed) makes the service send it again: redelivered on request,
// not a duplicate; a refusal of the redelivery is the sink's, not a
// redelivery.
func TestHeldOnPurpose(t *testing.T) {
	r := newRun(rundir.APINotify)
	r.send(1, "c1", 1, 200, 0.01)
	r.send(2, "c1", 2, 200, 0.01)
	r.callback(1, 3, "DELIVERED", "", true, false)
	r.events[len(r.events)-1].Delayed = 5
	r.callback(1, 4, "DELIVERED", "", true, true) // the service timed out and sent it again
	r.callback(2, 4, "DELIVERED", "", true, false)
	r.events[len(r.events)-1].Answered = 503
	r.callback(2, 5, "DELIVERED", "", true, true)
	r.events[len(r.events)-1].Answered = 503 // refused again
	r.callback(2, 6, "DELIVERED", "", true, true)
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	d := s.Delivery
	if d.Duplicates != 0 || d.Redelivered != 2 || d.Refused != 2 {
		t.Errorf("duplicates %d redelivered %d refused %d: want 0, 2, 2", d.Duplicates, d.Redelivered, d.Refused)
	}
}
