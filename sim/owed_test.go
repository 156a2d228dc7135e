package sim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// TestOwed follows Owed through what holds a final callback back after the
// final status: it stays owed until the last attempt of every copy, and a
// message with nowhere to call owes nothing once final.
func TestOwed(t *testing.T) {
	type probe struct {
		at            time.Duration // after the send
		pending, owed int
	}
	tests := []struct {
		name   string
		setup  func(*Config)
		notify bool   // a notification (webhook) instead of a messaging send
		cb     string // messaging: the send's callback ("" none); notify: the webhook ("" none)
		answer func(n int, path string) int
		probes []probe
	}{
		// Delivered at 1 s, the callback held 2 s (callbacks.delay): owed until 3 s.
		{"delayed callback", func(c *Config) { c.Callbacks.Delay, c.Callbacks.DelayBy = 1, 2*time.Second }, false, "http://cb.test/c", nil,
			[]probe{{0, 1, 1}, {1500 * time.Millisecond, 0, 1}, {3100 * time.Millisecond, 0, 0}}},
		// Held back by reorderBy the same way.
		{"reordered callback", func(c *Config) { c.Callbacks.Reorder, c.Callbacks.ReorderBy = 1, 500*time.Millisecond }, false, "http://cb.test/c", nil,
			[]probe{{1200 * time.Millisecond, 0, 1}, {1600 * time.Millisecond, 0, 0}}},
		// Answered 500 twice: retried after 100 ms and 200 ms backoff; owed until the third try at 1.3 s.
		{"retried callback", func(c *Config) { c.Callbacks.Attempts, c.Callbacks.Backoff = 3, 100*time.Millisecond }, false, "http://cb.test/c",
			func(n int, _ string) int {
				if n <= 2 {
					return 500
				}
				return 200
			},
			[]probe{{1050 * time.Millisecond, 0, 1}, {1150 * time.Millisecond, 0, 1}, {1350 * time.Millisecond, 0, 0}}},
		// Always refused: given up after the last attempt, then nothing is owed.
		{"given up", func(c *Config) { c.Callbacks.Attempts, c.Callbacks.Backoff = 2, 100*time.Millisecond }, false, "http://cb.test/c",
			func(int, string) int { return 503 },
			[]probe{{1050 * time.Millisecond, 0, 1}, {1150 * time.Millisecond, 0, 0}}},
		// A duplicate held back: owed until both copies are made.
		{"duplicate", func(c *Config) {
			c.Callbacks.Duplicate = 1
			c.Callbacks.Attempts, c.Callbacks.Backoff = 2, time.Second
		}, false, "http://cb.test/c",
			func(n int, _ string) int {
				if n == 2 {
					return 500 // the second copy is retried a second later
				}
				return 200
			},
			[]probe{{1500 * time.Millisecond, 0, 1}, {2100 * time.Millisecond, 0, 0}}},
		// Dropped: never made, so not owed.
		{"dropped", func(c *Config) { c.Callbacks.Drop = 1 }, false, "http://cb.test/c", nil,
			[]probe{{500 * time.Millisecond, 1, 1}, {1100 * time.Millisecond, 0, 0}}},
		// No callback address: owed until final, then nothing.
		{"no callback", func(c *Config) {}, false, "", nil,
			[]probe{{500 * time.Millisecond, 1, 1}, {1100 * time.Millisecond, 0, 0}}},
		// Notification: the webhook held 2 s after the terminal status at 1 s.
		{"webhook delayed", func(c *Config) { c.Callbacks.Delay, c.Callbacks.DelayBy = 1, 2*time.Second }, true, "http://wh.test/w", nil,
			[]probe{{500 * time.Millisecond, 1, 1}, {1500 * time.Millisecond, 0, 1}, {3100 * time.Millisecond, 0, 0}}},
		// Notification without a webhook: nothing owed once terminal.
		{"no webhook", func(c *Config) {}, true, "", nil,
			[]probe{{500 * time.Millisecond, 1, 1}, {1100 * time.Millisecond, 0, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := engineConfig()
				cfg.Notify.Delay = fixed(time.Second)
				tt.setup(&cfg)
				s, rt := newFakeSim(t, cfg)
				rt.answer = tt.answer
				start := time.Now()
				if tt.notify {
					tok := "Bearer " + token(t, s, "demo-3")
					if tt.cb != "" {
						do(s, http.MethodPost, "/api/v1/webhooks", `{"url":"`+tt.cb+`"}`, "Authorization", tok)
					}
					w := do(s, http.MethodPost, "/api/v1/notifications", `{"recipient":{"value":"+79991234567"},"notificationText":"x"}`, "Authorization", tok)
					if w.Code != http.StatusOK {
						t.Fatalf("notification: %d %s", w.Code, w.Body)
					}
				} else {
					cb := ""
					if tt.cb != "" {
						cb = `"callback":"` + tt.cb + `",`
					}
					if w := sendAs(s, "demo", "demo", `{`+cb+`"scenario":[`+itemJSON()+`]}`); w.Code != http.StatusOK {
						t.Fatalf("send: %d %s", w.Code, w.Body)
					}
				}
				for _, p := range tt.probes {
					time.Sleep(p.at - time.Since(start))
					synctest.Wait()
					if got, owed := s.Pending(), s.Owed(); got != p.pending || owed != p.owed {
						t.Fatalf("at %v: pending %d owed %d, want %d and %d (calls %d)", p.at, got, owed, p.pending, p.owed, len(rt.got()))
					}
				}
				// The same count in GET /sim/v1/pending.
				w := httptest.NewRecorder()
				s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/sim/v1/pending", nil))
				var body map[string]int
				if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body["owed"] != s.Owed() || body["pending"] != s.Pending() {
					t.Fatalf("/sim/v1/pending = %s (%v)", w.Body, err)
				}
			})
		})
	}
}
