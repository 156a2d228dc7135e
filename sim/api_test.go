package sim

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/msgload/msgload/rundir"
)

func TestMessagingAuth(t *testing.T) {
	basic := func(l, p string) string { return base64.StdEncoding.EncodeToString([]byte(l + ":" + p)) }
	body := `{"scenario":[` + itemJSON() + `]}`
	tests := []struct {
		name     string
		header   string // Authorization
		query    string // raw query
		remote   string
		wantCode int
		wantErr  string // error.code
	}{
		// Header Basic with good credentials: accepted.
		{"header ok", "Basic " + basic("demo", "demo"), "", "", 200, ""},
		// The same value in the query parameter "authorization": accepted.
		{"query ok", "", "authorization=" + url.QueryEscape("Basic "+basic("demo", "demo")), "", 200, ""},
		// The bare base64 value in the query is accepted too.
		{"query bare", "", "authorization=" + url.QueryEscape(basic("demo", "demo")), "", 200, ""},
		// Wrong password: 401 unauthorized.
		{"wrong password", "Basic " + basic("demo", "nope"), "", "", 401, "unauthorized"},
		// Unknown login: 401.
		{"unknown login", "Basic " + basic("who", "demo"), "", "", 401, "unauthorized"},
		// No credentials at all: 401.
		{"none", "", "", "", 401, "unauthorized"},
		// Garbage in the query: 401.
		{"query garbage", "", "authorization=%%%", "", 401, "unauthorized"},
		// Valid credentials without API right: 403 forbidden.
		{"blocked", "Basic " + basic("blocked", "blocked"), "", "", 403, "forbidden"},
		// Allowlisted account from an allowed address: accepted.
		{"ip allowed", "Basic " + basic("fenced", "pw"), "", "10.1.2.3:5555", 200, ""},
		// Allowlisted account from another address: 403.
		{"ip refused", "Basic " + basic("fenced", "pw"), "", "192.0.2.9:5555", 403, "forbidden"},
	}
	cfg := engineConfig()
	cfg.Messaging.Accounts = append(cfg.Messaging.Accounts, Account{Login: "fenced", Password: "pw", Channels: []string{rundir.ChannelSMS}, AllowIPs: []string{"10.0.0.0/8"}})
	s, _ := newFakeSim(t, cfg)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/messaging/v1/send?"+tt.query, strings.NewReader(body))
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			if tt.remote != "" {
				r.RemoteAddr = tt.remote
			}
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, r)
			if w.Code != tt.wantCode {
				t.Fatalf("code %d, want %d: %s", w.Code, tt.wantCode, w.Body)
			}
			if tt.wantErr == "" {
				return
			}
			var eb errorBody
			if err := json.Unmarshal(w.Body.Bytes(), &eb); err != nil {
				t.Fatal(err)
			}
			if eb.Error.Code != tt.wantErr || eb.Error.Status != tt.wantCode || len(eb.Error.ID) != 36 || eb.Error.Errors == nil {
				t.Fatalf("error body %+v", eb)
			}
		})
	}
}

func TestSendAnswers(t *testing.T) {
	s, _ := newFakeSim(t, engineConfig())
	// Accepted: txId, updatedAt with fractional seconds in UTC, trackData echoed, error code 0.
	w := sendAs(s, "demo", "demo", `{"trackData":{"a":[1,2],"b":"x"},"scenario":[`+itemJSON()+`]}`)
	var ok map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &ok)
	if w.Code != 200 || ok["state"] != rundir.StateAccepted || len(ok["txId"].(string)) != 36 {
		t.Fatalf("accepted: %d %s", w.Code, w.Body)
	}
	if ua, _ := ok["updatedAt"].(string); !strings.HasSuffix(ua, "Z") || !strings.Contains(ua, ".") {
		t.Errorf("updatedAt %q: want UTC with fractional seconds", ua)
	}
	if td, _ := json.Marshal(ok["trackData"]); string(td) != `{"a":[1,2],"b":"x"}` {
		t.Errorf("trackData %s", td)
	}
	if e := ok["error"].(map[string]any); e["code"] != float64(0) || e["message"] == "" {
		t.Errorf("error %v", e)
	}
	// Format error: 400, state FAILED, error code 400 naming the field.
	w = sendAs(s, "demo", "demo", `{"scenario":[`+itemJSON("sender", `"ABCDEFGHIJKL"`)+`]}`)
	var bad sendResponse
	_ = json.Unmarshal(w.Body.Bytes(), &bad)
	if w.Code != 400 || bad.State != rundir.StateFailed || bad.Error == nil || bad.Error.Code != 400 ||
		bad.Error.Message != "scenario[0].sender: at most 11 characters for channel sms" {
		t.Fatalf("format error: %d %s", w.Code, w.Body)
	}
	// Oversized body: 400, not a crash.
	big := `{"scenario":[` + itemJSON("text", q(strings.Repeat("a", 2<<20))) + `]}`
	if w = sendAs(s, "demo", "demo", big); w.Code != 400 || !strings.Contains(w.Body.String(), "too large") {
		t.Fatalf("oversized: %d %s", w.Code, w.Body)
	}
}

func TestCheckStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engineConfig()
		cfg.Messaging.StatusRetention = time.Hour
		s, _ := newFakeSim(t, cfg)
		w := sendAs(s, "demo", "demo", `{"trackData":{"k":1},"scenario":[`+itemJSON()+`]}`)
		var sr sendResponse
		_ = json.Unmarshal(w.Body.Bytes(), &sr)
		get := func(id, login string) (int, map[string]any) {
			r := httptest.NewRequest(http.MethodGet, "/messaging/v1/check-status/"+id, nil)
			r.SetBasicAuth(login, map[string]string{"demo": "demo", "blocked": "blocked"}[login])
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, r)
			var m map[string]any
			_ = json.Unmarshal(w.Body.Bytes(), &m)
			return w.Code, m
		}
		// Before the first change: the acceptance record.
		if code, m := get(sr.TxID, "demo"); code != 200 || m["state"] != rundir.StateAccepted {
			t.Fatalf("before delivery: %d %v", code, m)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		// After: the latest status record, trackData echoed.
		if code, m := get(sr.TxID, "demo"); code != 200 || m["state"] != rundir.StateDelivered || m["channel"] != "sms" || m["trackData"] == nil {
			t.Fatalf("after delivery: %d %v", code, m)
		}
		// Unknown id and malformed id: 404 with an error body.
		if code, m := get("00000000-0000-0000-0000-000000000000", "demo"); code != 404 || m["error"] == nil {
			t.Fatalf("unknown: %d %v", code, m)
		}
		if code, _ := get("nope", "demo"); code != 404 {
			t.Fatalf("malformed id: %d", code)
		}
		// Still there one nanosecond before the retention ends (the change was at 1s)…
		time.Sleep(time.Hour - time.Second - 1)
		synctest.Wait()
		if code, _ := get(sr.TxID, "demo"); code != 200 {
			t.Fatalf("before retention end: %d", code)
		}
		// …and gone at it.
		time.Sleep(1)
		synctest.Wait()
		if code, _ := get(sr.TxID, "demo"); code != 404 {
			t.Fatalf("after retention: %d", code)
		}
	})
}

func TestNotifyAuth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engineConfig()
		cfg.Notify.TokenLifetime = time.Minute
		s, _ := newFakeSim(t, cfg)
		good := token(t, s, "demo-1")
		only := token(t, s, "notify-only")
		other, _ := New(engineConfig(), prometheus.NewRegistry()) // another process key
		defer other.Close()
		foreign := token(t, other, "demo-1")
		nbody := `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"e1"}`
		tests := []struct {
			name, path, auth string
			wait             time.Duration
			want             int
			wantErr          string
		}{
			// A valid token with the scope: accepted.
			{"ok", "/api/v1/notifications", "Bearer " + good, 0, 200, ""},
			// No header: 401.
			{"missing", "/api/v1/notifications", "", 0, 401, "unauthorized"},
			// Not a JWT: 401 invalid_token.
			{"garbage", "/api/v1/notifications", "Bearer abc.def.ghi", 0, 401, "invalid_token"},
			// Signed by another key: 401.
			{"foreign key", "/api/v1/notifications", "Bearer " + foreign, 0, 401, "invalid_token"},
			// Basic instead of Bearer: 401.
			{"basic", "/api/v1/notifications", "Basic ZGVtbzpkZW1v", 0, 401, "unauthorized"},
			// notify-only may send…
			{"scope ok", "/api/v1/notifications", "Bearer " + only, 0, 200, ""},
			// …but not manage the webhook: 403.
			{"scope missing", "/api/v1/webhooks", "Bearer " + only, 0, 403, "insufficient_scope"},
			// One second before expiry the token still works (lifetime 1m, issued at 0).
			{"before expiry", "/api/v1/notifications", "Bearer " + good, 59 * time.Second, 200, ""},
			// At expiry: 401 token expired.
			{"expired", "/api/v1/notifications", "Bearer " + good, time.Second, 401, "invalid_token"},
		}
		for _, tt := range tests {
			time.Sleep(tt.wait)
			body := nbody
			if strings.Contains(tt.path, "webhooks") {
				body = `{"url":"http://x.test/w"}`
			}
			w := do(s, http.MethodPost, tt.path, body, "Authorization", tt.auth)
			if w.Code != tt.want {
				t.Fatalf("%s: code %d, want %d: %s", tt.name, w.Code, tt.want, w.Body)
			}
			if tt.wantErr != "" {
				var e notifyError
				_ = json.Unmarshal(w.Body.Bytes(), &e)
				if e.Error != tt.wantErr || e.Status != tt.want {
					t.Fatalf("%s: error body %s", tt.name, w.Body)
				}
			}
		}
	})
}

func TestTokenEndpoint(t *testing.T) {
	s, _ := newFakeSim(t, engineConfig())
	tests := []struct {
		name    string
		form    url.Values
		want    int
		wantErr string
	}{
		// Good client and secret: a token.
		{"ok", url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-10"}, "client_secret": {"demo"}}, 200, ""},
		// Bad secret: RFC 6749 invalid_client.
		{"bad secret", url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-1"}, "client_secret": {"x"}}, 401, "invalid_client"},
		// Unknown client (demo-11 is past the built-in ten).
		{"unknown client", url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-11"}, "client_secret": {"demo"}}, 401, "invalid_client"},
		// Another grant type: unsupported_grant_type.
		{"grant", url.Values{"grant_type": {"password"}, "client_id": {"demo-1"}, "client_secret": {"demo"}}, 400, "unsupported_grant_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(s, http.MethodPost, "/oauth/token", tt.form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
			var m map[string]any
			_ = json.Unmarshal(w.Body.Bytes(), &m)
			if w.Code != tt.want || (tt.wantErr != "" && m["error"] != tt.wantErr) {
				t.Fatalf("code %d body %s", w.Code, w.Body)
			}
			if tt.want == 200 && (m["access_token"] == "" || m["token_type"] != "Bearer" || m["expires_in"] != float64(3600)) {
				t.Fatalf("token answer %v", m)
			}
		})
	}
}

func TestNotificationValidation(t *testing.T) {
	tests := []struct {
		name, body, wantErr string
	}{
		// Valid.
		{"ok", `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"x"}`, ""},
		// externalId is optional.
		{"no externalId", `{"recipient":{"value":"+79991234567"},"notificationText":"hi"}`, ""},
		{"no recipient", `{"notificationText":"hi"}`, "recipient: required"},
		{"no value", `{"recipient":{},"notificationText":"hi"}`, "recipient.value: required"},
		{"not e164", `{"recipient":{"value":"8999"},"notificationText":"hi"}`, "recipient.value: not an E.164"},
		{"no text", `{"recipient":{"value":"+79991234567"}}`, "notificationText: required"},
		// Text: 4096 characters pass, 4097 fail.
		{"text 4096", `{"recipient":{"value":"+79991234567"},"notificationText":` + q(strings.Repeat("я", 4096)) + `}`, ""},
		{"text 4097", `{"recipient":{"value":"+79991234567"},"notificationText":` + q(strings.Repeat("a", 4097)) + `}`, "notificationText: at most 4096"},
		// externalId: 256 pass, 257 fail, empty fails.
		{"ext 256", `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":` + q(strings.Repeat("e", 256)) + `}`, ""},
		{"ext 257", `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":` + q(strings.Repeat("e", 257)) + `}`, "externalId: "},
		{"ext empty", `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":""}`, "externalId: "},
		{"wrong type", `{"recipient":{"value":79991234567},"notificationText":"hi"}`, "recipient.value: want string"},
		{"malformed", `{"recipient":`, "body: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeNotification([]byte(tt.body))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("want %q…, got %v", tt.wantErr, err)
			}
		})
	}
}

// TestIdempotencyConcurrent: 50 requests with one externalId at the same
// moment get one notificationId, one send and one webhook.
func TestIdempotencyConcurrent(t *testing.T) {
	cfg := engineConfig()
	cfg.RateLimit.Requests = 0
	cfg.Notify.Delay = fixed(10 * time.Millisecond)
	cfg.Notify.Clients[0].WebhookURL = "http://cb.test/webhook"
	s, rt := newFakeSim(t, cfg)
	tok := token(t, s, "demo-1")
	const n = 50
	ids := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			w := do(s, http.MethodPost, "/api/v1/notifications", `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"same"}`, "Authorization", "Bearer "+tok)
			var r notificationResponse
			_ = json.Unmarshal(w.Body.Bytes(), &r)
			ids[i], codes[i] = r.NotificationID, w.Code
		}()
	}
	close(gate)
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || ids[i] != ids[0] || ids[0] == "" {
			t.Fatalf("request %d: %d %q, first %q", i, codes[i], ids[i], ids[0])
		}
	}
	waitFor(t, "the webhook", func() bool { return s.Pending() == 0 && len(rt.got()) >= 1 })
	time.Sleep(50 * time.Millisecond)
	tr := s.Truth()
	if len(tr.Messages) != 1 || tr.Messages[0].Sends != 1 || tr.Messages[0].ID != ids[0] {
		t.Fatalf("truth: %+v", tr.Messages)
	}
	if got := len(rt.got()); got != 1 {
		t.Fatalf("%d webhooks, want 1", got)
	}
	if v := testutil.ToFloat64(s.met.replays.WithLabelValues("demo-1")); v != n-1 {
		t.Fatalf("replays %v, want %d", v, n-1)
	}
	// The same externalId from another client is another notification.
	w := do(s, http.MethodPost, "/api/v1/notifications", `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"same"}`, "Authorization", "Bearer "+token(t, s, "demo-2"))
	var r notificationResponse
	_ = json.Unmarshal(w.Body.Bytes(), &r)
	if r.NotificationID == ids[0] || r.NotificationID == "" {
		t.Fatalf("other client got %q", r.NotificationID)
	}
}

func TestIdempotencyMismatchAndRetention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, mode := range []string{"first", "422", "409"} {
			cfg := engineConfig()
			cfg.Notify.IdempotencyMismatch = mode
			cfg.Notify.IdempotencyRetention = time.Hour
			cfg.Notify.TokenLifetime = 3 * time.Hour
			s, _ := newFakeSim(t, cfg)
			tok := token(t, s, "demo-1")
			send := func(text string) (int, string) {
				w := do(s, http.MethodPost, "/api/v1/notifications", `{"recipient":{"value":"+79991234567"},"notificationText":"`+text+`","externalId":"k"}`, "Authorization", "Bearer "+tok)
				var r notificationResponse
				_ = json.Unmarshal(w.Body.Bytes(), &r)
				return w.Code, r.NotificationID
			}
			_, first := send("a")
			// A different body under the same key: the first result, or 422.
			code, id := send("b")
			if mode == "first" && (code != 200 || id != first) || mode != "first" && code != atoi(mode) {
				t.Fatalf("%s: different body answered %d %q (first %q)", mode, code, id, first)
			}
			// Within retention the same body replays; one nanosecond before the end too.
			time.Sleep(time.Hour - 1)
			if _, id := send("a"); id != first {
				t.Fatalf("%s: replay before retention end got %q", mode, id)
			}
			// At the end of retention the key is forgotten: a new notification.
			time.Sleep(1)
			synctest.Wait()
			if _, id := send("a"); id == first || id == "" {
				t.Fatalf("%s: after retention got %q", mode, id)
			}
		}
	})
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// A duplicate of a request still in flight (the first holds its externalId
// idempotencyProcessing before its answer) waits and gets the first result,
// or 409 (idempotencyInFlight); after the first answered, the first result.
// One notification either way.
func TestIdempotencyInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, mode := range []string{"first", "409"} {
			cfg := engineConfig()
			cfg.Notify.IdempotencyInFlight = mode
			cfg.Notify.IdempotencyProcessing = time.Second
			s, _ := newFakeSim(t, cfg)
			tok := token(t, s, "demo-1")
			send := func() (int, string) {
				w := do(s, http.MethodPost, "/api/v1/notifications", `{"recipient":{"value":"+79991234567"},"notificationText":"a","externalId":"`+mode+`"}`, "Authorization", "Bearer "+tok)
				var r notificationResponse
				_ = json.Unmarshal(w.Body.Bytes(), &r)
				return w.Code, r.NotificationID
			}
			var first string
			done := make(chan struct{})
			go func() { defer close(done); _, first = send() }()
			synctest.Wait() // the first holds the key
			code, id := send()
			<-done
			if mode == "first" && (code != 200 || id != first) || mode == "409" && code != 409 || first == "" {
				t.Fatalf("%s: the duplicate in flight got %d %q (first %q)", mode, code, id, first)
			}
			if code, id := send(); code != 200 || id != first {
				t.Fatalf("%s: after the first answered: %d %q (first %q)", mode, code, id, first)
			}
			if n := len(s.Truth().Messages); n != 1 {
				t.Fatalf("%s: %d notifications, want 1", mode, n)
			}
		}
	})
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name      string
		faults    Faults
		wantCode  int
		processed bool // the notification exists despite the answer
	}{
		// Every request a 500: nothing processed.
		{"500", Faults{Error500: 1}, 500, false},
		// Every request a 503: nothing processed.
		{"503", Faults{Error503: 1}, 503, false},
		// Processed, then 500: the notification exists.
		{"processed then 500", Faults{ProcessedThen500: 1}, 500, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := engineConfig()
			cfg.Faults = tt.faults
			s, _ := newFakeSim(t, cfg)
			tok := token(t, s, "demo-1")
			w := do(s, http.MethodPost, "/api/v1/notifications", `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"f"}`, "Authorization", "Bearer "+tok)
			if w.Code != tt.wantCode {
				t.Fatalf("notify code %d, want %d", w.Code, tt.wantCode)
			}
			if got := len(s.Truth().Messages) == 1; got != tt.processed {
				t.Fatalf("processed %v, want %v", got, tt.processed)
			}
			if ws := sendAs(s, "demo", "demo", `{"scenario":[`+itemJSON()+`]}`); ws.Code != tt.wantCode {
				t.Fatalf("messaging code %d, want %d", ws.Code, tt.wantCode)
			}
		})
	}
}

// TestProcessedThenReset: over a real connection the client sees no answer,
// yet the notification exists; a retry with the same externalId gets its id.
func TestProcessedThenReset(t *testing.T) {
	cfg := engineConfig()
	cfg.Faults.ProcessedThenReset = 1
	s, _ := newFakeSim(t, cfg)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	tok := token(t, s, "demo-1")
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/notifications", strings.NewReader(`{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"r"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("want a transport error, got %d", resp.StatusCode)
	}
	tr := s.Truth()
	if len(tr.Messages) != 1 || tr.Messages[0].ExternalID != "r" {
		t.Fatalf("truth %+v", tr.Messages)
	}
}

func TestMetricsLint(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := New(engineConfig(), reg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sendAs(s, "demo", "demo", `{"scenario":[`+itemJSON()+`]}`)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if n := testutil.ToFloat64(s.met.accepted.WithLabelValues("messaging", "sms")); n != 1 {
		t.Fatalf("accepted %v", n)
	}
	// The client label is bounded: the 21st distinct client is "other".
	for i := range 25 {
		s.met.client(strings.Repeat("c", i+1))
	}
	if got := s.met.client("new-one"); got != "other" {
		t.Fatalf("client label %q, want other", got)
	}
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestShorten(t *testing.T) {
	s, _ := newFakeSim(t, engineConfig())
	tests := []struct {
		in   string
		keep bool
	}{
		{"see http://a.b/cdefghijk now", true},       // 20 characters: kept
		{"see http://a.b/cdefghijkl now", false},     // 21 characters: replaced
		{"see https://example.com/long/path", false}, // https too
		{"no link here", true},
	}
	for _, tt := range tests {
		out := s.shorten(tt.in)
		if (out == tt.in) != tt.keep {
			t.Errorf("shorten(%q) = %q", tt.in, out)
		}
		if !tt.keep && !strings.Contains(out, s.cfg.Messaging.ShortLinkDomain+"/") {
			t.Errorf("shorten(%q) = %q: no short link", tt.in, out)
		}
	}
}

// TestShortenURLApplied: with urlOptions.shortenUrl the long links of a text are
// replaced before its size is checked (the spec: shortening "shortens the
// message"), so a text over the limit only by its long links is accepted; the
// same text without shortenUrl is refused.
func TestShortenURLApplied(t *testing.T) {
	s, _ := newFakeSim(t, engineConfig())
	link := "https://example.com/" + strings.Repeat("x", 80)
	var words []string
	for n := 0; n <= rundir.MaxTextBytes; n += len(link) + 1 {
		words = append(words, link)
	}
	text := q(strings.Join(words, " "))
	if w := sendAs(s, "demo", "demo", `{"scenario":[`+itemJSON("text", text)+`]}`); w.Code != 400 {
		t.Fatalf("without shortenUrl: %d %s, want 400", w.Code, w.Body)
	}
	body := `{"urlOptions":{"shortenUrl":true},"scenario":[` + itemJSON("text", text) + `]}`
	if w := sendAs(s, "demo", "demo", body); w.Code != 200 {
		t.Fatalf("with shortenUrl: %d %s, want 200", w.Code, w.Body)
	}
	body = `{"urlOptions":{"shortenUrl":false},"scenario":[` + itemJSON("text", text) + `]}`
	if w := sendAs(s, "demo", "demo", body); w.Code != 400 {
		t.Fatalf("shortenUrl false: %d %s, want 400", w.Code, w.Body)
	}
}

// TestMessagingRateLimit: off by default; with rateLimit.messaging the same
// limit applies per login, answered with the messaging error body.
func TestMessagingRateLimit(t *testing.T) {
	for _, on := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			cfg := engineConfig()
			cfg.RateLimit = RateLimit{Requests: 3, Window: time.Second, Algorithm: AlgFixed, RetryAfter: true, Messaging: on}
			s, _ := newFakeSim(t, cfg)
			var codes []int
			for range 4 {
				codes = append(codes, sendAs(s, "demo", "demo", `{"scenario":[`+itemJSON()+`]}`).Code)
			}
			w := sendAs(s, "demo", "demo", `{"scenario":[`+itemJSON()+`]}`)
			if !on {
				if codes[3] != 200 || w.Code != 200 {
					t.Fatalf("limit off: codes %v %d", codes, w.Code)
				}
				return
			}
			var eb errorBody
			_ = json.Unmarshal(w.Body.Bytes(), &eb)
			if codes[2] != 200 || codes[3] != 429 || eb.Error.Code != "too_many_requests" || w.Header().Get("Retry-After") != "1" {
				t.Fatalf("limit on: codes %v, body %s", codes, w.Body)
			}
			time.Sleep(time.Second)
			if c := sendAs(s, "demo", "demo", `{"scenario":[`+itemJSON()+`]}`).Code; c != 200 {
				t.Fatalf("next window: %d", c)
			}
		})
	}
}

func TestTagKey(t *testing.T) {
	tests := []struct{ td, want string }{
		{`{"msgload_run":"r1","msgload_seq":"7","msgload_sent":"1700000000000000000"}`, "r1.7"},                      // strings, as the attacker sends
		{`{"msgload_run":"r1","msgload_seq":7,"msgload_sent":1700000000000000000}`, "r1.7"},                          // numbers too
		{`{"msgload_run":"r1","msgload_part":"m","msgload_seq":"7","msgload_sent":"1700000000000000000"}`, "r1.m.7"}, // a part of a run with parts
		{`{"other":1}`, ""},                // no tag
		{`{"msgload_run":"bad run!"}`, ""}, // invalid tag
		{``, ""},                           // no trackData
	}
	for _, tt := range tests {
		if got := tagKey(json.RawMessage(tt.td)); got != tt.want {
			t.Errorf("tagKey(%s) = %q, want %q", tt.td, got, tt.want)
		}
	}
}

// TestTruthCap: beyond truthCap messages the truth is marked truncated and
// stops growing.
func TestTruthCap(t *testing.T) {
	cfg := engineConfig()
	cfg.TruthCap = 2
	s, _ := newFakeSim(t, cfg)
	for range 3 {
		sendAs(s, "demo", "demo", `{"trackData":{"msgload_run":"r","msgload_seq":"1","msgload_sent":"5"},"scenario":[`+itemJSON()+`]}`)
	}
	tr := s.Truth()
	if len(tr.Messages) != 2 || !tr.Truncated || tr.Messages[0].ExternalID != "r.1" {
		t.Fatalf("messages %d truncated %v: %+v", len(tr.Messages), tr.Truncated, tr.Messages)
	}
	if s.Pending() != 3 {
		t.Fatalf("pending %d: untracked messages must still be delivered", s.Pending())
	}
}

// TestTokenLivesItsExpiresIn: a token issued at a fraction of a second still
// works until expires_in has passed. The JWT's exp is whole seconds: rounded
// down, a token issued at 0.9 s with a 2 s lifetime said expires_in 2 but
// died at 2 s, and a client that trusted expires_in got 401s.
func TestTokenLivesItsExpiresIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engineConfig()
		cfg.Notify.TokenLifetime = 2 * time.Second
		s, _ := newFakeSim(t, cfg)
		for _, frac := range []time.Duration{0, 100 * time.Millisecond, 900 * time.Millisecond} {
			time.Sleep(time.Second - time.Duration(time.Now().Nanosecond()) + frac)
			form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-1"}, "client_secret": {"demo"}}
			w := do(s, http.MethodPost, "/oauth/token", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
			var tok struct {
				AccessToken string  `json:"access_token"`
				ExpiresIn   float64 `json:"expires_in"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &tok); err != nil || w.Code != 200 {
				t.Fatalf("token: %d %s", w.Code, w.Body)
			}
			// The last instant the answer promised, a millisecond before it.
			time.Sleep(time.Duration(tok.ExpiresIn*float64(time.Second)) - time.Millisecond)
			w = do(s, http.MethodPost, "/api/v1/notifications", `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"e`+frac.String()+`"}`,
				"Authorization", "Bearer "+tok.AccessToken)
			if w.Code != 200 {
				t.Fatalf("issued at +%v, expires_in %v: used %v later: %d %s", frac, tok.ExpiresIn, time.Duration(tok.ExpiresIn*float64(time.Second))-time.Millisecond, w.Code, w.Body)
			}
		}
	})
}
