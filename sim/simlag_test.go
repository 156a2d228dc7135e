package sim

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestTruthDueTimes: every call the truth records carries when it was due by
// the delays the simulator drew — the drawn step delay, a delay drawn on
// purpose, a retry's backoff after the last answer — so that on fake time,
// where nothing runs late, each call starts exactly when due: the drawn
// lateness is the (simulated) service's, never counted as the machine's.
func TestTruthDueTimes(t *testing.T) {
	for name, cb := range map[string]func(*Callbacks){
		"plain":      func(*Callbacks) {},
		"delayed":    func(c *Callbacks) { c.Delay, c.DelayBy = 1, 3*time.Second },
		"reordered":  func(c *Callbacks) { c.Reorder, c.ReorderBy = 1, 2*time.Second },
		"retried":    func(c *Callbacks) { c.Attempts, c.Backoff = 3, 100*time.Millisecond },
		"duplicated": func(c *Callbacks) { c.Duplicate = 1 },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := engineConfig()
				cb(&cfg.Callbacks)
				s, rt := newFakeSim(t, cfg)
				rt.answer = func(n int, _ string) int { return map[bool]int{true: 500, false: 200}[name == "retried" && n < 3] }
				if w := sendAs(s, "demo", "demo", `{"callback":"http://cb.test/c","scenario":[`+itemJSON()+`]}`); w.Code != 200 {
					t.Fatal(w.Code)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				calls := 0
				for _, c := range s.Truth().Callbacks {
					if c.Action != rundir.CallbackSent && c.Action != rundir.CallbackRetried {
						continue
					}
					calls++
					if c.Due.IsZero() || !c.Due.Equal(c.At) {
						t.Errorf("%s call %d: at %v, due %v: want due = at (nothing ran late)", c.Action, c.Attempt, c.At, c.Due)
					}
				}
				if calls == 0 {
					t.Fatal("no call in the truth")
				}
			})
		})
	}
}

// TestTruthDueLagged: with one sender busy for 10 s on a slow receiver, the
// second message's call, due at the same time as the first, starts 10 s
// after its due time: the simulator's own lag, which the truth shows.
func TestTruthDueLagged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := engineConfig()
		cfg.Callbacks.Senders = 1
		s, rt := newFakeSim(t, cfg)
		rt.answer = func(n int, _ string) int {
			if n == 1 {
				time.Sleep(10 * time.Second)
			}
			return 200
		}
		for range 2 {
			if w := sendAs(s, "demo", "demo", `{"callback":"http://cb.test/c","scenario":[`+itemJSON()+`]}`); w.Code != 200 {
				t.Fatal(w.Code)
			}
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		var lags []time.Duration
		for _, c := range s.Truth().Callbacks {
			if c.Action == rundir.CallbackSent {
				lags = append(lags, c.At.Sub(c.Due))
			}
		}
		if len(lags) != 2 || lags[0] != 0 || lags[1] != 10*time.Second {
			t.Errorf("lags %v, want [0s 10s]: the second call waited for the only sender", lags)
		}
	})
}

// TestTruthPendingAtClose: a message still in flight when the simulator
// closes carries when its next step or call was due by the drawn delays —
// a step waiting in the engine (due 1 s after acceptance), and a call
// waiting in the senders' queue behind a slow one (due at 1 s, not made by
// the close at 5 s) — so that the report can tell an end the simulator's
// lag kept from the run from one the service drew late.
func TestTruthPendingAtClose(t *testing.T) {
	for _, tc := range []struct {
		name    string
		senders int
		wait    time.Duration
	}{{"step in the engine", 0, 0}, {"call in the queue", 1, 5 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := engineConfig()
				if tc.senders > 0 {
					cfg.Callbacks.Senders = tc.senders
				}
				cfg.Callbacks.Timeout = time.Second
				s, rt := newFakeSim(t, cfg)
				rt.answer = func(n int, _ string) int {
					if n == 1 {
						time.Sleep(10 * time.Second)
					}
					return 200
				}
				for range 2 {
					if w := sendAs(s, "demo", "demo", `{"callback":"http://cb.test/c","scenario":[`+itemJSON()+`]}`); w.Code != 200 {
						t.Fatal(w.Code)
					}
				}
				synctest.Wait()
				time.Sleep(tc.wait)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				var pending []time.Duration
				for _, m := range s.Truth().Messages {
					if !m.Pending.IsZero() {
						pending = append(pending, m.Pending.Sub(m.AcceptedAt))
					}
				}
				want := map[string]int{"step in the engine": 2, "call in the queue": 1}[tc.name]
				if len(pending) != want {
					t.Fatalf("%d messages pending at the close, want %d: %v", len(pending), want, pending)
				}
				for _, p := range pending {
					if p != time.Second {
						t.Errorf("pending %v after acceptance, want 1s (the drawn delay)", p)
					}
				}
			})
		})
	}
}
