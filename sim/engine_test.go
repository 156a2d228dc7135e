package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
)

// fakeRT receives the simulator's calls without a network, on fake time.
type fakeRT struct {
	mu     sync.Mutex
	calls  []fakeCall
	answer func(n int, path string) int // status for the n-th call (from 1)
	// retryAfter, when set, goes as Retry-After with every non-2xx answer.
	retryAfter string
}

type fakeCall struct {
	raw    []byte
	at     time.Time
	path   string
	body   map[string]any
	header http.Header
	status int
}

func (f *fakeRT) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	f.mu.Lock()
	n := len(f.calls) + 1
	st := 200
	if f.answer != nil {
		st = f.answer(n, r.URL.Path)
	}
	f.calls = append(f.calls, fakeCall{raw: b, at: time.Now(), path: r.URL.Path, body: m, header: r.Header.Clone(), status: st})
	f.mu.Unlock()
	h := http.Header{}
	if f.retryAfter != "" && st/100 != 2 {
		h.Set("Retry-After", f.retryAfter)
	}
	return &http.Response{StatusCode: st, Body: io.NopCloser(strings.NewReader("")), Header: h, Request: r}, nil
}

func (f *fakeRT) rawBodies() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out [][]byte
	for _, c := range f.calls {
		out = append(out, c.raw)
	}
	return out
}

func (f *fakeRT) got() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// newFakeSim builds a simulator whose calls go to a fakeRT; call inside a bubble.
func newFakeSim(t testing.TB, cfg Config) (*Server, *fakeRT) {
	t.Helper()
	rt := &fakeRT{}
	cfg.HTTPClient = &http.Client{Transport: rt}
	s, err := New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, rt
}

func do(s *Server, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

func sendAs(s *Server, login, pass, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/messaging/v1/send", strings.NewReader(body))
	r.SetBasicAuth(login, pass)
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	return w
}

func fixed(d time.Duration) Delay { return Delay{Dist: "fixed", Median: d} }

// engineConfig: every channel delivers after a fixed delay, no SEEN, no incoming.
func engineConfig() Config {
	cfg := DefaultConfig()
	cfg.Seed = 7
	cfg.Messaging.IncomingShare = 0
	for _, ch := range allChannels {
		cfg.Messaging.Profiles[ch] = channelProfile{Delay: fixed(time.Second), Outcomes: []Outcome{{State: rundir.StateDelivered, Weight: 1}}, SeenDelay: fixed(0)}
	}
	cfg.Messaging.Accounts[0].Channels = allChannels
	return cfg
}

type step struct {
	at    time.Duration // after acceptance
	state string
	ch    string
}

func TestFailoverTiming(t *testing.T) {
	viber := func(d time.Duration, state string, seenShare float64, seenDelay time.Duration) channelProfile {
		return channelProfile{Delay: fixed(d), Outcomes: []Outcome{{State: state, Code: map[bool]int{true: 0, false: 6}[state == rundir.StateDelivered], Weight: 1}}, SeenShare: seenShare, SeenDelay: fixed(seenDelay)}
	}
	tests := []struct {
		name     string
		viber    channelProfile
		failover string
		last     bool // viber is the only item
		want     []step
	}{
		// The awaited DELIVERED comes after the ttl: EXPIRED at ttl (code 245), sms starts then.
		{"delivered too late", viber(5*time.Second, rundir.StateDelivered, 0, 0), `{"ttl":2,"condition_status":"DELIVERED"}`, false,
			[]step{{2 * time.Second, rundir.StateExpired, "viber"}, {3 * time.Second, rundir.StateDelivered, "sms"}}},
		// One second before the ttl boundary (delay = ttl exactly) counts as in time.
		{"delivered at ttl", viber(2*time.Second, rundir.StateDelivered, 0, 0), `{"ttl":2,"condition_status":"DELIVERED"}`, false,
			[]step{{2 * time.Second, rundir.StateDelivered, "viber"}}},
		// DELIVERED in time ends the cascade: sms is never used.
		{"delivered in time", viber(time.Second, rundir.StateDelivered, 0, 0), `{"ttl":2,"condition_status":"DELIVERED"}`, false,
			[]step{{time.Second, rundir.StateDelivered, "viber"}}},
		// A definite failure in time is reported and the next item starts at once.
		{"not delivered", viber(time.Second, rundir.StateNotDelivered, 0, 0), `{"ttl":2}`, false,
			[]step{{time.Second, rundir.StateNotDelivered, "viber"}, {2 * time.Second, rundir.StateDelivered, "sms"}}},
		// Awaiting SEEN: DELIVERED is reported, SEEN comes too late, EXPIRED at ttl, then sms.
		{"seen too late", viber(time.Second, rundir.StateDelivered, 1, 5*time.Second), `{"ttl":2,"condition_status":"SEEN"}`, false,
			[]step{{time.Second, rundir.StateDelivered, "viber"}, {2 * time.Second, rundir.StateExpired, "viber"}, {3 * time.Second, rundir.StateDelivered, "sms"}}},
		// Awaiting SEEN and it comes in time: DELIVERED then SEEN, no sms.
		{"seen in time", viber(time.Second, rundir.StateDelivered, 1, 500*time.Millisecond), `{"ttl":2,"condition_status":"SEEN"}`, false,
			[]step{{time.Second, rundir.StateDelivered, "viber"}, {1500 * time.Millisecond, rundir.StateSeen, "viber"}}},
		// Awaiting SEEN when the channel never draws SEEN: EXPIRED at ttl.
		{"never seen", viber(time.Second, rundir.StateDelivered, 0, 0), `{"ttl":2,"condition_status":"SEEN"}`, false,
			[]step{{time.Second, rundir.StateDelivered, "viber"}, {2 * time.Second, rundir.StateExpired, "viber"}, {3 * time.Second, rundir.StateDelivered, "sms"}}},
		// Failover on the last item: EXPIRED is final.
		{"last item expires", viber(5*time.Second, rundir.StateDelivered, 0, 0), `{"ttl":2}`, true,
			[]step{{2 * time.Second, rundir.StateExpired, "viber"}}},
		// Without failover, SEEN follows DELIVERED for messengers.
		{"seen after delivered", viber(time.Second, rundir.StateDelivered, 1, 3*time.Second), ``, true,
			[]step{{time.Second, rundir.StateDelivered, "viber"}, {4 * time.Second, rundir.StateSeen, "viber"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := engineConfig()
				cfg.Messaging.Profiles[rundir.ChannelViber] = tt.viber
				s, rt := newFakeSim(t, cfg)
				fo := ""
				if tt.failover != "" {
					fo = tt.failover
				}
				items := itemJSON("channel", `"viber"`, "failover", fo)
				if !tt.last {
					items += "," + itemJSON()
				}
				body := `{"callback":"http://cb.test/callback","trackData":{"k":"v"},"scenario":[` + items + `]}`
				start := time.Now()
				w := sendAs(s, "demo", "demo", body)
				if w.Code != 200 {
					t.Fatalf("send: %d %s", w.Code, w.Body)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				calls := rt.got()
				if len(calls) != len(tt.want) {
					t.Fatalf("want %d callbacks, got %d: %+v", len(tt.want), len(calls), calls)
				}
				for i, c := range calls {
					w := tt.want[i]
					if got := c.at.Sub(start); got != w.at || c.body["state"] != w.state || c.body["channel"] != w.ch {
						t.Errorf("callback %d: got %v %v %v, want %v %v %v", i, got, c.body["state"], c.body["channel"], w.at, w.state, w.ch)
					}
					if td, _ := c.body["trackData"].(map[string]any); td["k"] != "v" {
						t.Errorf("callback %d: trackData not echoed: %v", i, c.body["trackData"])
					}
					if w.state == rundir.StateExpired {
						if e, _ := c.body["error"].(map[string]any); e["code"] != float64(245) {
							t.Errorf("EXPIRED code: %v", c.body["error"])
						}
					}
				}
				if s.Pending() != 0 {
					t.Errorf("pending %d after the last status", s.Pending())
				}
				tr := s.Truth()
				if len(tr.Messages) != 1 || len(tr.Messages[0].Steps) != len(tt.want) || tr.Messages[0].Final != tt.want[len(tt.want)-1].state {
					t.Errorf("truth: %+v", tr.Messages)
				}
			})
		})
	}
}

func TestScheduleTiming(t *testing.T) {
	// The bubble's clock starts at 2000-01-01T00:00:00Z. Delivery takes 0s,
	// so the first callback comes when sending may start.
	tests := []struct {
		name     string
		schedule string
		number   string
		want     time.Duration
	}{
		// sendAfter in the future defers the send to it.
		{"sendAfter", `{"sendAfter":"2000-01-01T00:00:10Z"}`, "+79991234567", 10 * time.Second},
		// sendAfter in the past sends at once.
		{"sendAfter past", `{"sendAfter":"1999-12-31T00:00:00Z"}`, "+79991234567", 0},
		// A window that has not opened yet today starts at its start.
		{"window later today", `{"startTime":"01:00:00","stopTime":"02:00:00"}`, "+79991234567", time.Hour},
		// Inside the window (start boundary included) sends at once.
		{"window open at start", `{"startTime":"00:00:00","stopTime":"02:00:00"}`, "+79991234567", 0},
		// A window across midnight that is open now sends at once.
		{"window across midnight", `{"startTime":"23:00:00","stopTime":"00:30:00"}`, "+79991234567", 0},
		// sendAfter past today's stopTime: postponed to the next day's start.
		{"postponed to next day", `{"sendAfter":"2000-01-01T19:00:00Z","startTime":"09:00:00","stopTime":"18:00:00"}`, "+79991234567", 33 * time.Hour},
		// stopTime itself is outside the window (half-open): next day.
		{"at stop boundary", `{"sendAfter":"2000-01-01T18:00:00Z","startTime":"09:00:00","stopTime":"18:00:00"}`, "+79991234567", 33 * time.Hour},
		// Recipient's zone: a Moscow number (UTC+3 in 2000): 09:00 local is 06:00 UTC.
		{"recipient zone window", `{"startTime":"09:00:00","stopTime":"18:00:00","useRecipientTimeZone":true}`, "+74951234567", 6 * time.Hour},
		// Recipient's zone for sendAfter: 05:00 Moscow wall clock is 02:00 UTC.
		{"recipient zone sendAfter", `{"sendAfter":"2000-01-01T05:00:00Z","useRecipientTimeZone":true}`, "+74951234567", 2 * time.Hour},
		// Same window, UTC when useRecipientTimeZone is absent.
		{"utc window", `{"startTime":"09:00:00","stopTime":"18:00:00"}`, "+74951234567", 9 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := engineConfig()
				cfg.Messaging.Profiles[rundir.ChannelSMS] = channelProfile{Delay: fixed(0), Outcomes: []Outcome{{State: rundir.StateDelivered, Weight: 1}}}
				s, rt := newFakeSim(t, cfg)
				start := time.Now()
				body := `{"callback":"http://cb.test/c","schedule":` + tt.schedule + `,"scenario":[` +
					itemJSON("recipient", `{"type":"MSISDN","value":"`+tt.number+`"}`) + `]}`
				if w := sendAs(s, "demo", "demo", body); w.Code != 200 {
					t.Fatalf("send: %d %s", w.Code, w.Body)
				}
				time.Sleep(72 * time.Hour)
				synctest.Wait()
				calls := rt.got()
				if len(calls) != 1 {
					t.Fatalf("want 1 callback, got %d", len(calls))
				}
				if got := calls[0].at.Sub(start); got != tt.want {
					t.Fatalf("sent after %v, want %v", got, tt.want)
				}
			})
		})
	}
}

// token gets a bearer token for client through the handler.
func token(t *testing.T, s *Server, client string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {client}, "client_secret": {"demo"}}
	w := do(s, http.MethodPost, "/oauth/token", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &tok)
	if w.Code != 200 || tok.AccessToken == "" {
		t.Fatalf("token for %s: %d %s", client, w.Code, w.Body)
	}
	return tok.AccessToken
}

func TestRateLimitOnset(t *testing.T) {
	// Limit 5 per 10s. Each row: requests at offsets from the start, and which are refused.
	type req struct {
		at      time.Duration
		refused bool
	}
	five := []req{{0, false}, {0, false}, {0, false}, {0, false}, {0, false}}
	tests := []struct {
		alg        string
		reqs       []req
		retryAfter string // Retry-After of the first refusal
	}{
		// fixed: the 6th in the window is refused, still at window-1ns; the next window accepts 5 again.
		{AlgFixed, append(append([]req{}, five...), req{0, true}, req{10*time.Second - 1, true}, req{10 * time.Second, false},
			req{10 * time.Second, false}, req{10 * time.Second, false}, req{10 * time.Second, false}, req{10 * time.Second, false}, req{10 * time.Second, true}), "10"},
		// sliding: refused until the first accepted request leaves the window.
		{AlgSliding, append(append([]req{}, five...), req{0, true}, req{10*time.Second - 1, true}, req{10 * time.Second, false},
			req{10 * time.Second, false}, req{10 * time.Second, false}, req{10 * time.Second, false}, req{10 * time.Second, false}, req{10 * time.Second, true}), "10"},
		// token bucket: 5 of burst, then one token every 2s.
		{AlgTokenBucket, append(append([]req{}, five...), req{0, true}, req{2*time.Second - 1, true}, req{2 * time.Second, false}, req{2 * time.Second, true},
			req{12 * time.Second, false}, req{12 * time.Second, false}, req{12 * time.Second, false}, req{12 * time.Second, false}, req{12 * time.Second, false}, req{12 * time.Second, true}), "2"},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := engineConfig()
				cfg.RateLimit = RateLimit{Requests: 5, Window: 10 * time.Second, Algorithm: tt.alg, RetryAfter: true, Headers: true}
				s, _ := newFakeSim(t, cfg)
				tok := token(t, s, "demo-1")
				start := time.Now()
				first := true
				for i, r := range tt.reqs {
					time.Sleep(start.Add(r.at).Sub(time.Now()))
					w := do(s, http.MethodPost, "/api/v1/webhooks", `{"url":"http://cb.test/webhook"}`, "Authorization", "Bearer "+tok)
					if got := w.Code == http.StatusTooManyRequests; got != r.refused {
						t.Fatalf("request %d at %v: code %d, want refused=%v", i, r.at, w.Code, r.refused)
					}
					if r.refused && first {
						first = false
						if ra := w.Header().Get("Retry-After"); ra != tt.retryAfter {
							t.Errorf("Retry-After %q, want %q", ra, tt.retryAfter)
						}
						if w.Header().Get("RateLimit-Policy") != `"default";q=5;w=10` {
							t.Errorf("RateLimit-Policy %q", w.Header().Get("RateLimit-Policy"))
						}
					}
				}
				// Another client has its own quota.
				if w := do(s, http.MethodPost, "/api/v1/webhooks", `{"url":"http://cb.test/w"}`, "Authorization", "Bearer "+token(t, s, "demo-2")); w.Code != 200 {
					t.Fatalf("second client refused: %d", w.Code)
				}
				tr := s.Truth()
				acc, ref := 0, 0
				for _, w := range tr.Windows {
					if w.Client == "demo-1" {
						acc += w.Accepted
						ref += w.Refused
					}
				}
				wantRef := 0
				for _, r := range tt.reqs {
					if r.refused {
						wantRef++
					}
				}
				if ref != wantRef || acc != len(tt.reqs)-wantRef {
					t.Fatalf("truth windows: accepted %d refused %d, want %d %d", acc, ref, len(tt.reqs)-wantRef, wantRef)
				}
			})
		})
	}
}

func TestCallbackRetriesAndFaults(t *testing.T) {
	tests := []struct {
		name    string
		cb      func(*Callbacks)
		answer  func(n int, path string) int
		ra      string          // Retry-After of the answers
		wantAt  []time.Duration // call times after the status change (at 1s)
		actions []string        // truth actions in order
	}{
		// 500, 500, then 200: two retries with doubling backoff.
		{"retry then ok", func(c *Callbacks) { c.Attempts = 3; c.Backoff = 100 * time.Millisecond },
			func(n int, _ string) int { return map[bool]int{true: 500, false: 200}[n < 3] }, "",
			[]time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}, []string{"sent", "retried", "retried"}},
		// Every attempt fails: given up after the last.
		{"give up", func(c *Callbacks) { c.Attempts = 2; c.Backoff = time.Second },
			func(int, string) int { return 503 }, "",
			[]time.Duration{0, time.Second}, []string{"sent", "retried", "failed"}},
		// A fixed schedule (factor 1): the same delay between every two tries.
		{"fixed", func(c *Callbacks) { c.Attempts, c.Backoff, c.BackoffFactor = 4, 100*time.Millisecond, 1 },
			func(int, string) int { return 503 }, "",
			[]time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}, []string{"sent", "retried", "retried", "retried", "failed"}},
		// Tripled, capped at 500ms: 100, 300, 500, 500.
		{"capped", func(c *Callbacks) {
			c.Attempts, c.Backoff, c.BackoffFactor, c.BackoffMax = 5, 100*time.Millisecond, 3, 500*time.Millisecond
		},
			func(int, string) int { return 503 }, "",
			[]time.Duration{0, 100 * time.Millisecond, 400 * time.Millisecond, 900 * time.Millisecond, 1400 * time.Millisecond}, []string{"sent", "retried", "retried", "retried", "retried", "failed"}},
		// A 429 with Retry-After 2 honoured: the next try 2 s later, not the backoff's.
		{"retry-after honoured", func(c *Callbacks) { c.Attempts, c.Backoff, c.HonourRetryAfter = 3, 100*time.Millisecond, true },
			func(n int, _ string) int { return map[bool]int{true: 429, false: 200}[n < 3] }, "2",
			[]time.Duration{0, 2 * time.Second, 4 * time.Second}, []string{"sent", "retried", "retried"}},
		// Not honoured (the default): the backoff's schedule whatever it says.
		{"retry-after ignored", func(c *Callbacks) { c.Attempts, c.Backoff = 3, 100*time.Millisecond },
			func(n int, _ string) int { return map[bool]int{true: 429, false: 200}[n < 3] }, "2",
			[]time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}, []string{"sent", "retried", "retried"}},
		// A 410 Gone with goneStops: no further try.
		{"gone stops", func(c *Callbacks) { c.Attempts, c.Backoff, c.GoneStops = 3, 100*time.Millisecond, true },
			func(int, string) int { return 410 }, "",
			[]time.Duration{0}, []string{"sent", "failed"}},
		// Without it (the default): retried as any refusal.
		{"gone retried", func(c *Callbacks) { c.Attempts, c.Backoff = 3, 100*time.Millisecond },
			func(int, string) int { return 410 }, "",
			[]time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond}, []string{"sent", "retried", "retried", "failed"}},
		// Dropped: never sent.
		{"drop", func(c *Callbacks) { c.Drop = 1 }, nil, "", nil, []string{"dropped"}},
		// Duplicated: sent twice.
		{"duplicate", func(c *Callbacks) { c.Duplicate = 1 }, nil, "", []time.Duration{0, 0}, []string{"duplicated", "sent", "sent"}},
		// Delayed by DelayBy.
		{"delay", func(c *Callbacks) { c.Delay = 1; c.DelayBy = 3 * time.Second }, nil, "", []time.Duration{3 * time.Second}, []string{"sent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := engineConfig()
				tt.cb(&cfg.Callbacks)
				s, rt := newFakeSim(t, cfg)
				rt.answer, rt.retryAfter = tt.answer, tt.ra
				start := time.Now()
				if w := sendAs(s, "demo", "demo", `{"callback":"http://cb.test/c","scenario":[`+itemJSON()+`]}`); w.Code != 200 {
					t.Fatal(w.Code)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				calls := rt.got()
				if len(calls) != len(tt.wantAt) {
					t.Fatalf("want %d calls, got %d", len(tt.wantAt), len(calls))
				}
				for i, c := range calls {
					if got := c.at.Sub(start) - time.Second; got != tt.wantAt[i] {
						t.Errorf("call %d at +%v, want +%v", i, got, tt.wantAt[i])
					}
				}
				var actions []string
				for _, c := range s.Truth().Callbacks {
					actions = append(actions, c.Action)
				}
				if strings.Join(actions, ",") != strings.Join(tt.actions, ",") {
					t.Fatalf("truth actions %v, want %v", actions, tt.actions)
				}
			})
		})
	}
}

// TestReorder: a held-back callback is overtaken by the next status change
// of the same message, and nothing is lost.
func TestReorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engineConfig()
		cfg.Messaging.Profiles[rundir.ChannelViber] = channelProfile{Delay: fixed(time.Second), Outcomes: []Outcome{{State: rundir.StateDelivered, Weight: 1}}, SeenShare: 1, SeenDelay: fixed(100 * time.Millisecond)}
		cfg.Callbacks.Reorder = 0.5
		cfg.Callbacks.ReorderBy = 200 * time.Millisecond
		s, rt := newFakeSim(t, cfg)
		const n = 20
		for range n {
			sendAs(s, "demo", "demo", `{"callback":"http://cb.test/c","scenario":[`+itemJSON("channel", `"viber"`)+`]}`)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		calls := rt.got()
		if len(calls) != 2*n {
			t.Fatalf("want %d calls, got %d", 2*n, len(calls))
		}
		first := map[any]any{}
		overtaken := 0
		for _, c := range calls {
			if _, ok := first[c.body["txId"]]; !ok {
				first[c.body["txId"]] = c.body["state"]
				if c.body["state"] == rundir.StateSeen {
					overtaken++
				}
			}
		}
		if overtaken == 0 || overtaken == n {
			t.Fatalf("SEEN arrived first for %d of %d messages; want some but not all", overtaken, n)
		}
	})
}
