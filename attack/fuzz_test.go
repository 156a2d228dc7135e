package attack

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// FuzzParseAnswer: any body the service sends is read without panic, and a
// well-formed answer gives back exactly its ids.
func FuzzParseAnswer(f *testing.F) {
	f.Add([]byte(`{"txId":"8c1f","state":"ACCEPTED","updatedAt":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"notificationId":"n-1"}`))
	f.Add([]byte(`<html>502</html>`))
	f.Add([]byte(`{"txId":7}`))
	f.Add([]byte(``))
	f.Add([]byte(` { "TXID" : "a", "state":"X", "txid":"b" , "channel":"sms"} `))
	f.Add([]byte(`{"txId":"a","n":1}`))
	f.Add([]byte(`{"txId":"a\u0041"}`))
	f.Add([]byte(`{"txId":"a",}`))
	f.Add([]byte(`{"txId":"a"}x`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a := parseAnswer(body)
		var want answer
		if err := json.Unmarshal(body, &want); err == nil && a != want {
			t.Fatalf("parseAnswer(%q) = %+v, json says %+v", body, a, want)
		}
		// What encoding/json refuses gives nothing; the fast path takes
		// only what encoding/json reads the same.
		trimmed := bytes.TrimSpace(body)
		var got answer
		if err := json.Unmarshal(trimmed, &got); err != nil && a != (answer{}) {
			t.Fatalf("parseAnswer(%q) = %+v from what encoding/json refuses: %v", body, a, err)
		}
		if len(trimmed) > 0 && trimmed[0] == '{' {
			if fast, ok := fastAnswer(trimmed); ok {
				var ref answer
				if err := json.Unmarshal(trimmed, &ref); err != nil || fast != ref {
					t.Fatalf("fastAnswer(%q) = %+v, encoding/json says %+v (%v)", trimmed, fast, ref, err)
				}
			}
		}
		// Re-encoding what was read parses to the same answer.
		b, _ := json.Marshal(a)
		if parseAnswer(b) != a {
			t.Fatalf("round trip of %+v", a)
		}
		// An answer taken as the API's send answer came from valid JSON with
		// the seed's fields; anything else (HTML, invalid JSON, random bytes)
		// is a bad answer, never an acceptance.
		for _, api := range []string{rundir.APIMessaging, rundir.APINotify} {
			if badSendAnswer(api, a) == "" && (!json.Valid(body) || (a.TxID == "" && a.NotificationID == "")) {
				t.Fatalf("%s: %q taken as a send answer", api, body)
			}
		}
	})
}

func TestExternalID(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{`{"externalId":"ml.r.1.2"}`, "ml.r.1.2"}, // plain
		{`{"a":1, "externalId" : "x y"}`, "x y"},  // spaces around the colon
		{`{"externalId":"a\"b\u00e9"}`, `a"bé`},   // escapes decoded
		{`{"externalId":null}`, ""},               // not a string
		{`{"text":"hello"}`, ""},                  // absent
		{`{"externalId":"unterminated`, ""},       // broken
	} {
		if got := externalID([]byte(tc.body)); got != tc.want {
			t.Errorf("externalID(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

// FuzzExternalID: agrees with encoding/json whenever the body is an object
// whose only string-keyed "externalId" is at the top level.
func FuzzExternalID(f *testing.F) {
	f.Add(`ml.run.1.1700000000000000000`)
	f.Add(`quote"inside`)
	f.Add("é\u2028")
	f.Fuzz(func(t *testing.T, id string) {
		body, _ := json.Marshal(map[string]any{"recipient": map[string]string{"value": "+7999"}, "externalId": id})
		var want struct{ ExternalID string }
		json.Unmarshal(body, &want)
		if got := externalID(body); got != want.ExternalID {
			t.Fatalf("externalID(%s) = %q, want %q", body, got, want.ExternalID)
		}
	})
}
