package sim

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzSend feeds arbitrary bodies to the send decoder, the validator and the
// whole handler: no panic, only 200 or 400, and every refusal names a field.
func FuzzSend(f *testing.F) {
	f.Add(`{"scenario":[` + itemJSON() + `]}`)
	f.Add(`{"scenario":[` + itemJSON("channel", `"viber"`, "failover", `{"ttl":5,"condition_status":"SEEN"}`) + `,` + itemJSON() + `],"trackData":{"msgload_run":"r","msgload_seq":"1","msgload_sent":"1"}}`)
	f.Add(`{"schedule":{"sendAfter":"2030-01-01T10:00:00Z","startTime":"23:00:00","stopTime":"01:00:00","useRecipientTimeZone":true},"scenario":[` + itemJSON() + `]}`)
	f.Add(`{"urlOptions":{"shortenUrl":true},"scenario":[` + itemJSON("text", `"see https://example.com/a/very/long/link"`) + `]}`)
	f.Add(`{"scenario":[{"channel":null}]}`)
	f.Add(`[]`)
	cfg := engineConfig()
	cfg.Messaging.Accounts[0].Channels = allChannels
	for ch, p := range cfg.Messaging.Profiles {
		p.Delay = fixed(time.Hour) // nothing is delivered while fuzzing
		cfg.Messaging.Profiles[ch] = p
	}
	s, _ := newFakeSim(f, cfg)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := DecodeSend(strings.NewReader(body))
		if err == nil {
			err = ValidateSend(req, nil)
		}
		var fe *fieldError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("not a FieldError: %v", err)
		}
		w := sendAs(s, "demo", "demo", body)
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("code %d for %q", w.Code, body)
		}
		if (w.Code == http.StatusOK) != (err == nil) {
			t.Fatalf("handler %d, validator %v", w.Code, err)
		}
		// invalid UTF-8 can only be inside strings of valid JSON: what is
		// accepted is UTF-8 throughout
		if err == nil && !utf8.ValidString(body) {
			t.Fatalf("accepted invalid UTF-8: %q", body)
		}
	})
}

// FuzzNotification: the notification decoder never panics and refuses with a
// fieldError; what it accepts has a recipient and a text.
func FuzzNotification(f *testing.F) {
	f.Add(`{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"ml.r.1.2"}`)
	f.Add(`{"recipient":{"value":null}}`)
	f.Add(`{"recipient":[],"notificationText":1}`)
	f.Fuzz(func(t *testing.T, body string) {
		req, err := decodeNotification([]byte(body))
		if err != nil {
			var fe *fieldError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FieldError: %v", err)
			}
			return
		}
		if req.Recipient == nil || req.Recipient.Value == nil || req.NotificationText == nil {
			t.Fatalf("accepted without required fields: %q", body)
		}
		if !utf8.ValidString(body) {
			t.Fatalf("accepted invalid UTF-8: %q", body)
		}
	})
}

// FuzzParseRate: no panic; what parses is a positive window and a
// non-negative count.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"100/1m", "5/s", "0/1h", "1/", "/", "9999999999999999999/1m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, w, err := ParseRate(s)
		if err == nil && (n < 0 || w <= 0) {
			t.Fatalf("ParseRate(%q) = %d, %v", s, n, w)
		}
	})
}

// FuzzParseConfig: a YAML file never panics the loader, and what loads validates.
func FuzzParseConfig(f *testing.F) {
	f.Add("rateLimit:\n  requests: 10\n  window: 1s\n  algorithm: token-bucket\n")
	f.Add("messaging:\n  accounts:\n    - login: a\n      password: b\n      channels: [sms, viber]\n      allowIps: [127.0.0.1, 10.0.0.0/8]\n")
	f.Add("faults: {error500: 0.1, processedThenReset: 0.05, latency: 20ms}\ncallbacks: {attempts: 5, backoff: 1s}\n")
	f.Add("notify:\n  outcomes:\n    - {state: DELIVERED, weight: 1}\n")
	f.Fuzz(func(t *testing.T, doc string) {
		cfg, err := ParseConfig("fuzz.yaml", []byte(doc))
		if err != nil {
			return
		}
		if errs := cfg.Validate(); len(errs) > 0 {
			t.Fatalf("loaded but invalid: %v", errs)
		}
	})
}

// FuzzParseBasic: the Basic value from the query parameter never panics.
func FuzzParseBasic(f *testing.F) {
	f.Add("Basic ZGVtbzpkZW1v")
	f.Add("ZGVtbzpkZW1v")
	f.Add("basic %%%")
	f.Fuzz(func(t *testing.T, v string) {
		login, pass, ok := parseBasic(v)
		if !ok && (login != "" || pass != "") {
			t.Fatalf("refused but returned %q %q", login, pass)
		}
	})
}
