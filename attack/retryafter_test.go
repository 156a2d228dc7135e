package attack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// retryAfterService answers the first arrival of every message 429 with
// Retry-After after (with onlyOne, only the run's very first send),
// then as fakeService does; it keeps the send times per message.
type retryAfterService struct {
	f        *fakeService
	after    string
	onlyOne  bool
	mu       sync.Mutex
	arrivals map[string][]time.Time // message seq → arrival times
	refused  int
}

func newRetryAfterService(t *testing.T, after string, onlyOne bool) *retryAfterService {
	return &retryAfterService{f: newFakeService(t), after: after, onlyOne: onlyOne, arrivals: map[string][]time.Time{}}
}

func (s *retryAfterService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/messaging/v1/send" {
		s.f.ServeHTTP(w, r)
		return
	}
	key := fmt.Sprint(s.f.record(r, "")["seq"])
	s.mu.Lock()
	s.arrivals[key] = append(s.arrivals[key], time.Now())
	first := len(s.arrivals[key]) == 1 && (!s.onlyOne || s.refused == 0)
	if first {
		s.refused++
	}
	s.mu.Unlock()
	if first {
		w.Header().Set("Retry-After", s.after)
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"txId":"00000000-0000-4000-8000-000000000001","state":"ACCEPTED"}`))
}

// TestRetryAfterPastRunEnd: a Retry-After of an hour in a 10 s run with 5 s of
// grace ends by the run's end (fake time): the retry is not made and is
// recorded as given up; in respect mode the client's later messages cannot
// leave either and are recorded as given up, not sent.
func TestRetryAfterPastRunEnd(t *testing.T) {
	for _, mode := range []string{ModeExceed, modeRespect} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newRetryAfterService(t, "3600", true)
				rec := &memRecorder{}
				start := time.Now()
				res, err := Run(context.Background(), Options{
					API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
					Pacer: Constant(vegeta.Rate{Freq: 1, Per: time.Second}), Duration: 10 * time.Second, Grace: 5 * time.Second,
					Body: messagingBody, RunID: "ra", Out: rec, Transport: handlerTransport{s},
					Limit: Limit{Requests: 100, Window: time.Minute, Mode: mode},
					Retry: Retry{On: []int{429}, Max: 3, Backoff: 100 * time.Millisecond, MaxWait: 10 * time.Second, Jitter: 0.2},
				})
				if err != nil {
					t.Fatal(err)
				}
				if took := time.Since(start); took > 15*time.Second {
					t.Fatalf("the run took %v, past its end at 15s", took)
				}
				as := rec.ops(OpSend)
				if as[0].Code != 429 || as[0].GaveUp != gaveUpRetryAfter {
					t.Errorf("first attempt code %d gave up %q; want 429, %s", as[0].Code, as[0].GaveUp, gaveUpRetryAfter)
				}
				var notSent int
				for _, a := range as[1:] {
					switch {
					case mode == ModeExceed && (a.Code != 200 || a.GaveUp != ""):
						t.Errorf("exceed: seq %d code %d gave up %q; want sent and accepted", a.Seq, a.Code, a.GaveUp)
					case mode == modeRespect && (a.Code != 0 || a.GaveUp != gaveUpRetryAfter || !strings.HasPrefix(a.Error, "not sent:")):
						t.Errorf("respect: seq %d code %d gave up %q error %q; want not sent, %s", a.Seq, a.Code, a.GaveUp, a.Error, gaveUpRetryAfter)
					case a.Code == 0:
						notSent++
					}
				}
				if mode == modeRespect && (notSent < 9 || len(s.arrivals) != 1) {
					t.Errorf("respect: %d not sent, service saw %d messages; want 9 or more and 1", notSent, len(s.arrivals))
				}
				if res.GaveUp != int64(1+notSent) {
					t.Errorf("Progress.GaveUp %d, want %d", res.GaveUp, 1+notSent)
				}
			})
		})
	}
}

// TestStopCancelsRetryAfter: the first stop (ctx, not abort) ends a pending
// Retry-After wait at once, in both modes; the retry is given up as stopped.
// In respect mode the second message waits in the limiter (the 429 blocked
// the client for 600 s): the stop ends that wait too, and it is not sent.
func TestStopCancelsRetryAfter(t *testing.T) {
	for _, mode := range []string{ModeExceed, modeRespect} {
		t.Run(mode, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newRetryAfterService(t, "600", false)
				rec := &memRecorder{}
				ctx, stop := context.WithCancel(context.Background())
				time.AfterFunc(2500*time.Millisecond, stop)
				start := time.Now()
				_, err := RunWithAbort(ctx, context.Background(), Options{
					API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
					Pacer: Constant(vegeta.Rate{Freq: 1, Per: time.Second}), Requests: 3,
					Body: messagingBody, RunID: "stop", Out: rec, Transport: handlerTransport{s},
					Limit: Limit{Requests: 100, Window: time.Minute, Mode: mode},
					Retry: Retry{On: []int{429}, Max: 1, Backoff: time.Millisecond},
				})
				if err != nil {
					t.Fatal(err)
				}
				if took := time.Since(start); took != 2500*time.Millisecond {
					t.Fatalf("returned after %v, want 2.5s (the stop)", took)
				}
				want := 2 // exceed: messages 1 and 2 refused, both waiting for their retry
				if mode == modeRespect {
					want = 1 // message 2 still in the limiter: not sent, not recorded
				}
				as := rec.ops(OpSend)
				if len(as) != want || len(s.arrivals) != want {
					t.Fatalf("%d attempts, service saw %d messages; want %d", len(as), len(s.arrivals), want)
				}
				for _, a := range as {
					if a.Code != 429 || a.GaveUp != gaveUpStopped {
						t.Errorf("seq %d: code %d gave up %q; want 429, stopped", a.Seq, a.Code, a.GaveUp)
					}
				}
			})
		})
	}
	// The limiter's wait (a retry held by a full window) ends on stop too.
	synctest.Test(t, func(t *testing.T) {
		l := newWindowLimiter(1, time.Hour)
		l.wait(context.Background(), nil)
		ctx, stop := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, stop)
		start := time.Now()
		if _, err := l.wait(ctx, nil); err == nil || time.Since(start) != time.Second {
			t.Fatalf("wait: %v after %v; want an error after 1s", err, time.Since(start))
		}
	})
}

// TestRetryAfterOverMaxBackoff: a Retry-After longer than MaxWait is honoured
// in full when the retry still leaves before the run's end, and given up at
// once when it would not.
func TestRetryAfterOverMaxBackoff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		grace  time.Duration
		gap    time.Duration // between the 429 and the retry; 0 = no retry
		gaveUp string
	}{
		// 3 s asked, 1 s MaxWait, the run ends 10 s after the load: waited 3 s.
		{"within the run", 10 * time.Second, 3 * time.Second, ""},
		// The run ends 2 s after the load (a request count: when the pacer stops).
		{"past the end", 2 * time.Second, 0, gaveUpRetryAfter},
		// No end known (Grace 0): honoured in full.
		{"no end", 0, 3 * time.Second, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newRetryAfterService(t, "3", false)
				rec := &memRecorder{}
				_, err := Run(context.Background(), Options{
					API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
					Pacer: Constant(vegeta.Rate{Freq: 1, Per: time.Second}), Requests: 1, Grace: tc.grace,
					Body: messagingBody, RunID: "cap", Out: rec, Transport: handlerTransport{s},
					Retry: Retry{On: []int{429}, Max: 1, Backoff: time.Millisecond, MaxWait: time.Second},
				})
				if err != nil {
					t.Fatal(err)
				}
				ts := s.arrivals["1"]
				var gap time.Duration
				if len(ts) == 2 {
					gap = ts[1].Sub(ts[0])
				}
				if gap != tc.gap {
					t.Errorf("retry %v after the 429, want %v (0: none)", gap, tc.gap)
				}
				if as := rec.ops(OpSend); as[0].GaveUp != tc.gaveUp {
					t.Errorf("gave up %q, want %q", as[0].GaveUp, tc.gaveUp)
				}
				if end := time.Now(); tc.gaveUp != "" && !end.Equal(ts[0]) {
					t.Errorf("a retry past the end was waited for: the run ended %v after the 429", end.Sub(ts[0]))
				}
			})
		})
	}
}

// TestRetryAfterJitter: 200 messages refused at the same moment with
// Retry-After: 1 do not all come back in the same instant: with 20 % jitter
// their retries spread over [1 s, 1.2 s] after each 429, never earlier.
func TestRetryAfterJitter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		jitter   float64
		distinct int           // at least this many distinct retry delays
		spread   time.Duration // at least this spread between the first and the last
	}{
		{"jitter", 0.2, 190, 150 * time.Millisecond},
		{"none", 0, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newRetryAfterService(t, "1", false)
				_, err := Run(context.Background(), Options{
					API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
					Pacer: Constant(vegeta.Rate{Freq: 200, Per: time.Millisecond}), Requests: 200, Grace: time.Minute,
					Body: messagingBody, RunID: "jit", Transport: handlerTransport{s},
					Retry: Retry{On: []int{429}, Max: 1, Backoff: time.Millisecond, Jitter: tc.jitter},
				})
				if err != nil {
					t.Fatal(err)
				}
				var delays []time.Duration
				for k, ts := range s.arrivals {
					if len(ts) != 2 {
						t.Fatalf("message %s arrived %d times, want 2", k, len(ts))
					}
					d := ts[1].Sub(ts[0])
					if d < time.Second || d > 1200*time.Millisecond {
						t.Errorf("message %s retried %v after its 429, want within [1s, 1.2s]", k, d)
					}
					delays = append(delays, d)
				}
				slices.Sort(delays)
				if n := len(slices.Compact(slices.Clone(delays))); n < tc.distinct {
					t.Errorf("%d distinct retry delays of 200, want at least %d", n, tc.distinct)
				}
				if sp := delays[len(delays)-1] - delays[0]; sp < tc.spread || (tc.jitter == 0 && sp != 0) {
					t.Errorf("retry delays spread over %v, want at least %v", sp, tc.spread)
				}
			})
		})
	}
}

// TestWindowLimiterPastEnd: a grant that could come only after the run's end
// fails at once, naming the cause.
func TestWindowLimiterPastEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		end := newRunEnd()
		end.set(time.Now().Add(10 * time.Second))
		l := newWindowLimiter(1, time.Minute)
		slot, _ := l.wait(context.Background(), end)
		l.answered(slot)
		start := time.Now()
		if _, err := l.wait(context.Background(), end); gaveUpReason(err) != gaveUpLimit || time.Since(start) != 0 {
			t.Fatalf("full window: %v after %v; want %s at once", err, time.Since(start), gaveUpLimit)
		}
		l = newWindowLimiter(10, time.Minute)
		l.block(time.Now().Add(time.Hour))
		if _, err := l.wait(context.Background(), end); gaveUpReason(err) != gaveUpRetryAfter {
			t.Fatalf("blocked: %v; want %s", err, gaveUpRetryAfter)
		}
		// An end that moves nearer wakes a waiter that could leave before the old one.
		end = newRunEnd()
		l = newWindowLimiter(1, 5*time.Second)
		slot, _ = l.wait(context.Background(), end)
		l.answered(slot)
		time.AfterFunc(time.Second, func() { end.loadEnded(time.Now().Add(time.Second)) })
		start = time.Now()
		if _, err := l.wait(context.Background(), end); gaveUpReason(err) != gaveUpLimit || time.Since(start) != time.Second {
			t.Fatalf("moved end: %v after %v; want %s after 1s", err, time.Since(start), gaveUpLimit)
		}
	})
}

// TestBadAnswer: a 200 whose body is HTML (from a fault server on loopback),
// invalid JSON or random bytes is class bad_answer, outcome unknown, and not an
// acceptance; notify retries it when timeouts are retried (the externalId makes
// it safe), messaging never does.
func TestBadAnswer(t *testing.T) {
	bodies := map[string]string{
		"html":    "<html><body>200 OK from a captive portal</body></html>",
		"invalid": `{"txId":"00000000-0000-4000-8000-000000000001","state":`,
		"random":  "\x8f\x00\xffq\x13\x9b{",
		"no ids":  `{"status":"ok"}`,
	}
	for _, api := range []string{rundir.APIMessaging, rundir.APINotify} {
		for name, body := range bodies {
			t.Run(api+"/"+name, func(t *testing.T) {
				var mu sync.Mutex
				arrivals := 0
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/token" {
						w.Header().Set("Content-Type", "application/json")
						w.Write([]byte(`{"access_token":"tok","token_type":"bearer","expires_in":3600}`))
						return
					}
					mu.Lock()
					arrivals++
					mu.Unlock()
					w.Header().Set("Content-Type", "text/html")
					w.Write([]byte(body))
				}))
				defer srv.Close()
				rec := &memRecorder{}
				b := messagingBody
				if api == rundir.APINotify {
					b = notifyBody
				}
				res, err := Run(context.Background(), Options{
					API: api, BaseURL: srv.URL, TokenURL: srv.URL + "/token", Clients: clients("c"),
					Pacer: Constant(vegeta.Rate{Freq: 100, Per: time.Second}), Requests: 1,
					Body: b, RunID: "bad", Out: rec,
					Retry: Retry{On: []int{503}, OnTimeout: true, Max: 1, Backoff: time.Millisecond},
				})
				if err != nil {
					t.Fatal(err)
				}
				as := rec.ops(OpSend)
				for _, a := range as {
					if a.Code != 200 || a.Class != rundir.ClassBadAnswer || a.Outcome != rundir.OutcomeUnknown || a.Error == "" {
						t.Errorf("attempt code %d class %q outcome %q error %q; want 200 %s unknown", a.Code, a.Class, a.Outcome, a.Error, rundir.ClassBadAnswer)
					}
				}
				want := 1 // messaging: a resend would be a new message
				if api == rundir.APINotify {
					want = 2
				}
				if len(as) != want || arrivals != want {
					t.Errorf("%d attempts, %d arrivals; want %d", len(as), arrivals, want)
				}
				if res.Accepted != 0 || res.Errors != int64(want) {
					t.Errorf("accepted %d errors %d; want 0 and %d", res.Accepted, res.Errors, want)
				}
			})
		}
	}
}

func TestBadSendAnswer(t *testing.T) {
	for _, tc := range []struct {
		api, body string
		bad       bool
	}{
		{rundir.APIMessaging, `{"txId":"3fa85f64-5717-4562-b3fc-2c963f66afa6","state":"ACCEPTED"}`, false},
		{rundir.APIMessaging, `{"txId":"3FA85F64-5717-4562-B3FC-2C963F66AFA6","state":"FAILED"}`, false},
		{rundir.APIMessaging, `{"txId":"tx-1","state":"ACCEPTED"}`, true},                             // not a uuid
		{rundir.APIMessaging, `{"txId":"3fa85f64-5717-4562-b3fc-2c963f66afa6"}`, true},                // no state
		{rundir.APIMessaging, `{"txId":"3fa85f64-5717-4562-b3fc-2c963f66afa6","state":"SENT"}`, true}, // not a send state
		{rundir.APIMessaging, `{"txId":"3fa85f64x5717-4562-b3fc-2c963f66afa6","state":"ACCEPTED"}`, true},
		{rundir.APINotify, `{"notificationId":"n-1"}`, false},
		{rundir.APINotify, `{"notificationId":""}`, true},
		{rundir.APINotify, `<html></html>`, true},
		{rundir.APINotify, `{"notificationId":"n-1"} trailing`, true},
	} {
		if got := badSendAnswer(tc.api, parseAnswer([]byte(tc.body))); (got != "") != tc.bad {
			t.Errorf("%s %s: %q, want bad %v", tc.api, tc.body, got, tc.bad)
		}
	}
}
