package sim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgload/msgload/rundir"
)

func TestWhereCallsGo(t *testing.T) {
	tests := []struct {
		name      string
		account   func(*Account)
		callback  string // the send's callback field
		wantPaths []string
	}{
		// The send's callback wins over the static URL.
		{"send callback", func(a *Account) { a.CallbackURL = "http://static.test/static" }, "http://cb.test/mine", []string{"/mine"}},
		// Without one, the account's static URL is used.
		{"static callback", func(a *Account) { a.CallbackURL = "http://static.test/static" }, "", []string{"/static"}},
		// Neither: no call.
		{"none", func(a *Account) {}, "", nil},
		// With a partner URL and incoming share 1, a delivered sms gets a reply at {partner}/incoming.
		{"incoming", func(a *Account) { a.PartnerURL = "http://partner.test/base/" }, "http://cb.test/c", []string{"/c", "/base/incoming"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := engineConfig()
				cfg.Messaging.IncomingShare = 1
				cfg.Messaging.ReplyOnShare = 1
				cfg.Messaging.IncomingDelay = fixed(2 * time.Second)
				tt.account(&cfg.Messaging.Accounts[0])
				s, rt := newFakeSim(t, cfg)
				cb := ""
				if tt.callback != "" {
					cb = `"callback":"` + tt.callback + `",`
				}
				w := sendAs(s, "demo", "demo", `{`+cb+`"scenario":[`+itemJSON("recipient", `{"type":"MSISDN","value":"+79991234567"}`, "sender", `"Shop"`)+`]}`)
				var sr sendResponse
				_ = json.Unmarshal(w.Body.Bytes(), &sr)
				time.Sleep(time.Minute)
				synctest.Wait()
				calls := rt.got()
				if len(calls) != len(tt.wantPaths) {
					t.Fatalf("calls %+v, want paths %v", calls, tt.wantPaths)
				}
				for i, c := range calls {
					if c.path != tt.wantPaths[i] {
						t.Fatalf("call %d to %s, want %s", i, c.path, tt.wantPaths[i])
					}
				}
				if tt.name == "incoming" {
					in := calls[1]
					if in.body["outgoingTxId"] != sr.TxID || in.body["channel"] != "sms" || in.body["sender"] != "Shop" ||
						in.body["recipient"].(map[string]any)["value"] != "+79991234567" || in.body["replyOn"].(map[string]any)["txId"] != sr.TxID {
						t.Fatalf("incoming body %v", in.body)
					}
					if got := in.at.Sub(calls[0].at); got != 2*time.Second {
						t.Fatalf("incoming %v after delivery, want 2s", got)
					}
				}
			})
		})
	}
}

// TestWebhookReplaced: the webhook in force at the terminal status gets the
// event; a second registration replaces the first.
func TestWebhookReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engineConfig()
		cfg.Notify.Delay = fixed(time.Second)
		cfg.Notify.Outcomes = []Outcome{{State: rundir.NotifyUndelivered, Code: 6, Weight: 1}}
		s, rt := newFakeSim(t, cfg)
		tok := "Bearer " + token(t, s, "demo-3")
		do(s, http.MethodPost, "/api/v1/webhooks", `{"url":"http://one.test/first"}`, "Authorization", tok)
		w := do(s, http.MethodPost, "/api/v1/notifications", `{"recipient":{"value":"+79991234567"},"notificationText":"x","externalId":"ext-1"}`, "Authorization", tok)
		var nr notificationResponse
		_ = json.Unmarshal(w.Body.Bytes(), &nr)
		do(s, http.MethodPost, "/api/v1/webhooks", `{"url":"http://two.test/second"}`, "Authorization", tok)
		if g := do(s, http.MethodGet, "/api/v1/webhooks", "", "Authorization", tok); !bytes.Contains(g.Body.Bytes(), []byte("two.test")) {
			t.Fatalf("GET webhook: %s", g.Body)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		calls := rt.got()
		if len(calls) != 1 || calls[0].path != "/second" {
			t.Fatalf("calls %+v", calls)
		}
		b := calls[0].body
		if b["notificationId"] != nr.NotificationID || b["externalId"] != "ext-1" || b["status"] != rundir.NotifyUndelivered || b["errorCode"] != float64(6) || b["updatedAt"] == "" {
			t.Fatalf("event %v", b)
		}
	})
}

// TestSigning: with a secret, every call carries Standard Webhooks headers
// that the library verifies; a retry keeps the webhook-id.
func TestSigning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		cfg := engineConfig()
		cfg.Callbacks.SigningSecret = secret
		s, rt := newFakeSim(t, cfg)
		rt.answer = func(n int, _ string) int { return map[bool]int{true: 500, false: 200}[n == 1] }
		sendAs(s, "demo", "demo", `{"callback":"http://cb.test/c","scenario":[`+itemJSON()+`]}`)
		time.Sleep(time.Minute)
		synctest.Wait()
		calls := rt.got()
		if len(calls) != 2 {
			t.Fatalf("%d calls", len(calls))
		}
		wh, _ := standardwebhooks.NewWebhook(secret)
		for i, c := range calls {
			if c.header.Get("webhook-id") == "" || c.header.Get("webhook-signature") == "" || c.header.Get("webhook-timestamp") == "" {
				t.Fatalf("call %d: headers %v", i, c.header)
			}
		}
		if calls[0].header.Get("webhook-id") != calls[1].header.Get("webhook-id") {
			t.Fatal("retry changed webhook-id")
		}
		// Verify against the exact bytes sent.
		raw := rt.rawBodies()
		if err := wh.VerifyIgnoringTimestamp(raw[1], calls[1].header); err != nil {
			t.Fatalf("signature: %v", err)
		}
		if err := wh.VerifyIgnoringTimestamp(append(raw[1], ' '), calls[1].header); err == nil {
			t.Fatal("a changed body verified")
		}
	})
}

// TestCloseWithFullQueue: Close returns even when the scheduler is blocked on
// a full senders' queue behind a receiver that never answers.
func TestCloseWithFullQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engineConfig()
		cfg.Callbacks.Senders = 1
		cfg.Callbacks.Timeout = 10 * time.Second
		block := make(chan struct{})
		cfg.HTTPClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			select {
			case <-block:
			case <-r.Context().Done():
			}
			return nil, r.Context().Err()
		})}
		s, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 { // 1 in flight, 4 queued, the scheduler blocked on the 6th
			sendAs(s, "demo", "demo", `{"callback":"http://cb.test/c","scenario":[`+itemJSON()+`]}`)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		start := time.Now()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Fatalf("Close took %v, want the callback timeout (10s) for the call in flight", d)
		}
		close(block)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCallbackTimeoutRetried: a receiver that never answers is given up on
// after callbacks.timeout and the call is retried (real loopback HTTP).
func TestCallbackTimeoutRetried(t *testing.T) {
	var n atomic.Int32
	release := make(chan struct{})
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			select { // never answer the first call (until the test ends)
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
	}))
	defer rcv.Close()
	defer close(release)
	cfg := engineConfig()
	cfg.Messaging.Profiles[rundir.ChannelSMS] = channelProfile{Delay: fixed(0), Outcomes: []Outcome{{State: rundir.StateDelivered, Weight: 1}}}
	cfg.Callbacks.Timeout = 200 * time.Millisecond
	cfg.Callbacks.Backoff = 10 * time.Millisecond
	cfg.Callbacks.Attempts = 2
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sendAs(s, "demo", "demo", `{"callback":"`+rcv.URL+`/c","scenario":[`+itemJSON()+`]}`)
	waitFor(t, "the retry", func() bool { return len(s.Truth().Callbacks) >= 2 })
	cbs := s.Truth().Callbacks
	if cbs[0].Action != "sent" || cbs[0].Status != 0 || cbs[1].Action != "retried" || cbs[1].Status != 200 {
		t.Fatalf("callbacks %+v", cbs)
	}
}
