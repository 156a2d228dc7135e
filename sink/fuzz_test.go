package sink

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
)

// The decoders take bodies from outside: they must never panic, and what they
// accept must satisfy the schema they claim to check.

func FuzzParseStatusRecord(f *testing.F) {
	f.Add([]byte(`{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"DELIVERED","channel":"sms","trackData":{"msgload_run":"r","msgload_seq":"1","msgload_sent":"5"},"error":{"code":0,"message":"ok"}}`))
	f.Add([]byte(`{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"EXPIRED","channel":null}`))
	f.Add([]byte(`{"txId":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseStatusRecord(body)
		if err != nil {
			return
		}
		if !rundir.IsUUID(r.TxID) || stateIndex(r.State) < 0 || r.UpdatedAt.IsZero() {
			t.Fatalf("accepted an invalid record: %+v", r)
		}
		if r.Channel != "" && !statusChannels[r.Channel] {
			t.Fatalf("accepted channel %q", r.Channel)
		}
		if !json.Valid(body) {
			t.Fatal("accepted a body that is not JSON")
		}
		// trackData decodes as encoding/json decodes it.
		var ref struct {
			TrackData map[string]any `json:"trackData"`
		}
		var raw map[string]json.RawMessage
		json.Unmarshal(body, &raw)
		if td, ok := raw["trackData"]; ok {
			json.Unmarshal(td, &ref.TrackData)
		}
		if len(ref.TrackData) != len(r.TrackData) || (len(r.TrackData) > 0 && !reflect.DeepEqual(ref.TrackData, r.TrackData)) {
			t.Fatalf("trackData %v, encoding/json says %v", r.TrackData, ref.TrackData)
		}
	})
}

func FuzzParseIncoming(f *testing.F) {
	f.Add([]byte(`{"txId":"` + uuid1 + `","channel":"sms","recipient":{"type":"MSISDN","value":"7"},"sender":"s","text":"hi","replyOn":{"txId":"` + uuid2 + `","type":"OUTGOING"},"attachments":[{"type":"FILE","url":"u"}]}`))
	f.Add([]byte(`{"txId":"` + uuid1 + `","channel":"viber","recipient":{},"sender":""}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := ParseIncoming(body)
		if err != nil {
			return
		}
		if !rundir.IsUUID(in.TxID) || !incomingChannels[in.Channel] || len([]rune(in.Sender)) > 21 {
			t.Fatalf("accepted an invalid incoming message: %+v", in)
		}
		if in.OutgoingTxID != "" && !rundir.IsUUID(in.OutgoingTxID) {
			t.Fatalf("accepted outgoingTxId %q", in.OutgoingTxID)
		}
	})
}

func FuzzParseWebhook(f *testing.F) {
	f.Add([]byte(`{"externalId":"ml.r.1.5","notificationId":"n","status":"DELIVERED"}`))
	f.Add([]byte(`{"notificationId":"","state":"X"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		w, err := parseWebhook(body)
		if err != nil {
			return
		}
		if w.ExternalID == "" && w.NotificationID == "" {
			t.Fatalf("accepted a webhook without an id: %+v", w)
		}
		// The string fast path decodes exactly as encoding/json does.
		var ref map[string]any
		if err := json.Unmarshal(body, &ref); err != nil {
			t.Fatalf("accepted what encoding/json refuses: %v", err)
		}
		for k, got := range map[string]string{"notificationId": w.NotificationID, "externalId": w.ExternalID} {
			if want, _ := ref[k].(string); want != got {
				t.Fatalf("%s = %q, encoding/json says %q", k, got, want)
			}
		}
	})
}

// FuzzHandler posts any body to any route: the answer is 200 or 400 (never a
// crash or a 5xx), and exactly one line that decodes is added to the log.
func FuzzHandler(f *testing.F) {
	f.Add(uint8(0), []byte(`{"txId":"`+uuid1+`","updatedAt":"2026-11-23T02:00:00Z","state":"SEEN","trackData":{"msgload_run":"r","msgload_seq":"1","msgload_sent":"5","msgload_chain":"sms,sms,bogus"}}`))
	f.Add(uint8(1), []byte(`{"txId":"`+uuid1+`","channel":"sms","recipient":{"type":"MSISDN","value":"7"},"sender":"s"}`))
	f.Add(uint8(2), []byte(`{"externalId":"ml.r.1.5","status":"DELIVERED"}`))
	f.Add(uint8(0), []byte("\xff\xfe not utf-8"))
	path := filepath.Join(f.TempDir(), rundir.EventsFile)
	s, err := New(Options{LogPath: path, Fsync: fsyncNone, Now: func() time.Time { return fixedNow }}, prometheus.NewRegistry())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	h := s.Handler()
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		before := s.Stats().Events
		rt := routes[int(route)%len(routes)]
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, rt, bytes.NewReader(body)))
		if rec.Code != 200 && rec.Code != 400 {
			t.Fatalf("%s answered %d", rt, rec.Code)
		}
		if s.Stats().Events != before+1 {
			t.Fatalf("%s: %d events written, want 1", rt, s.Stats().Events-before)
		}
	})
}

// FuzzSplitObject: for any input, splitObject agrees with encoding/json's
// map[string]json.RawMessage on whether it is one object, on its keys and on
// each value (compared compacted).
func FuzzSplitObject(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":"x\"}","c":{"d":[1,{"e":"]"}]},"a":true}`))
	f.Add([]byte(` { "k\u00e9y" : null , "" : [ ] } `))
	f.Add([]byte(`{"a":1}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := splitObject(b)
		var m map[string]json.RawMessage
		merr := json.Unmarshal(b, &m)
		trimmed := bytes.TrimSpace(b)
		isObj := merr == nil && len(trimmed) > 0 && trimmed[0] == '{'
		if (err == nil) != isObj {
			t.Fatalf("splitObject err=%v, encoding/json err=%v", err, merr)
		}
		if err != nil {
			return
		}
		for k, want := range m {
			got, ok := o.get(k)
			if !ok {
				t.Fatalf("key %q missing", k)
			}
			var gc, wc bytes.Buffer
			if json.Compact(&gc, got) != nil || json.Compact(&wc, want) != nil || gc.String() != wc.String() {
				t.Fatalf("key %q: %s, want %s", k, got, want)
			}
		}
		keys := map[string]bool{}
		for _, fl := range o {
			keys[fl.key] = true
		}
		if len(keys) != len(m) {
			t.Fatalf("%d distinct keys, encoding/json has %d", len(keys), len(m))
		}
	})
}
