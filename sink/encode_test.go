package sink

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// sameAsJSON checks that appendEvent decodes to the same Event as json.Marshal.
func sameAsJSON(t *testing.T, ev rundir.Event) {
	t.Helper()
	line := appendEvent(nil, &ev)
	if n := len(line); n == 0 || line[n-1] != '\n' {
		t.Fatalf("line does not end in a newline: %q", line)
	}
	for _, c := range line[:len(line)-1] {
		if c == '\n' {
			t.Fatalf("newline inside the line: %q", line)
		}
	}
	var got, want rundir.Event
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("line %q does not decode: %v", line, err)
	}
	ref, err := json.Marshal(ev)
	if err != nil {
		t.Skip("json.Marshal refuses it too")
	}
	if err := json.Unmarshal(ref, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(compactEvent(got), compactEvent(want)) {
		t.Fatalf("appendEvent:\n%s\njson.Marshal:\n%s", line, ref)
	}
}

// compactEvent makes Payload comparable (RawMessage keeps bytes as written).
func compactEvent(e rundir.Event) rundir.Event {
	if e.Payload != nil {
		var v any
		json.Unmarshal(e.Payload, &v)
		e.Payload, _ = json.Marshal(v)
	}
	return e
}

func TestAppendEvent(t *testing.T) {
	at := time.Date(2026, 11, 23, 2, 0, 0, 123456789, time.UTC)
	rows := []struct {
		name string
		ev   rundir.Event
	}{
		// A full callback event: every Corr field set.
		{"full", rundir.Event{Kind: "callback", Route: "/callback", ReceivedAt: at, API: "messaging",
			Payload: json.RawMessage(`{"a":[1,2,{"b":"c"}]}`),
			Corr: &rundir.Correlation{Key: "k", Run: "r", Part: "p", Seq: 9, FirstSent: at.Add(-time.Second), State: "DELIVERED",
				Channel: "sms", Terminal: true, Matched: true, Duplicate: true, Redelivered: true, Latency: 1.000000001, FailoverStep: true, OutgoingTxID: "o"}}},
		// Matched false is written (no omitempty), everything else omitted.
		{"empty corr", rundir.Event{Kind: "webhook", Route: "/webhook", ReceivedAt: at, Corr: &rundir.Correlation{}}},
		// Raw text with quotes, control characters, invalid UTF-8 and line separators.
		{"raw oddities", rundir.Event{Kind: "malformed", Route: "/incoming", ReceivedAt: at, Raw: "a\"b\\c\n\r\t\x00\x1f\xff\xfe<>&\u2028\u2029й😀", Reason: "x\ty"}},
		// Tiny, huge and negative latencies use encoding/json's float format.
		{"tiny latency", rundir.Event{Kind: "callback", Route: "/callback", ReceivedAt: at, Corr: &rundir.Correlation{Latency: 1e-9}}},
		{"huge latency", rundir.Event{Kind: "callback", Route: "/callback", ReceivedAt: at, Corr: &rundir.Correlation{Latency: 3e21}}},
		{"negative latency", rundir.Event{Kind: "callback", Route: "/callback", ReceivedAt: at, Corr: &rundir.Correlation{Latency: -0.5}}},
		// A call refused on purpose records the status given.
		{"answered", rundir.Event{Kind: "callback", Route: "/callback", ReceivedAt: at, Answered: 503}},
		{"delayed", rundir.Event{Kind: "callback", Route: "/callback", ReceivedAt: at, Answered: 503, Delayed: 2.5}},
		{"signed", rundir.Event{Kind: "webhook", Route: "/webhook", ReceivedAt: at, Sig: &rundir.Signature{Scheme: rundir.SignatureStandardWebhooks, Skew: -0.25, Verified: "yes"}}},
		{"signature problem", rundir.Event{Kind: "webhook", Route: "/webhook", ReceivedAt: at, Sig: &rundir.Signature{Scheme: rundir.SignatureStandardWebhooks, Problem: "webhook-id: \"x\""}}},
		// A time zone other than UTC keeps its offset.
		{"offset time", rundir.Event{Kind: "callback", Route: "/callback", ReceivedAt: at.In(time.FixedZone("x", 3*3600))}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) { sameAsJSON(t, r.ev) })
	}
}

func FuzzAppendEvent(f *testing.F) {
	f.Add("callback", "raw\xff\n", "reason", "key", int64(5), 1.5, true)
	f.Add("", "", "", "", int64(-1), -1e-7, false)
	f.Fuzz(func(t *testing.T, kind, raw, reason, key string, seq int64, lat float64, dup bool) {
		ev := rundir.Event{Kind: kind, Route: "/callback", ReceivedAt: time.Unix(0, seq).UTC(), Raw: raw, Reason: reason,
			Corr: &rundir.Correlation{Key: key, Seq: seq, Latency: lat, Duplicate: dup, State: raw}}
		sameAsJSON(t, ev)
	})
}
