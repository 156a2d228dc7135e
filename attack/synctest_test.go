package attack

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// handlerTransport serves requests in process, so a whole run can go on fake time.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { defer close(done); t.h.ServeHTTP(rec, r) }()
	select {
	case <-done:
	case <-r.Context().Done():
		return nil, r.Context().Err() // as a real transport: the request's deadline wins
	}
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

// maxInWindow returns the largest number of times in any window [t, t+w).
func maxInWindow(times []time.Time, w time.Duration) int {
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	best := 0
	j := 0
	for i := range times {
		for times[i].Sub(times[j]) >= w {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

func TestLimitModes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mode       string
		wantWithin bool // every client at or under the limit in any window
		wantLate   bool // sends left later than planned
		wantAtPlan bool // every send left exactly at its intended time
	}{
		// respect: 10/s per client planned against 5/s allowed; sends are delayed (late), never dropped.
		{"respect keeps the limit", modeRespect, true, true, false},
		// exceed: the plan goes out as is, twice the limit, on time.
		{"exceed sends the plan", ModeExceed, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakeService(t)
				rec := &memRecorder{}
				res, err := Run(context.Background(), Options{
					API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a", "b"),
					Pacer: Constant(vegeta.Rate{Freq: 20, Per: time.Second}), Requests: 40,
					Body: messagingBody, RunID: "lim", Out: rec, Transport: handlerTransport{f},
					Limit: Limit{Requests: 5, Window: time.Second, Mode: tc.mode},
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Sent != 40 || len(f.sends) != 40 {
					t.Fatalf("sent %d, service got %d; want 40", res.Sent, len(f.sends))
				}
				per := map[string][]time.Time{}
				for _, s := range f.sends {
					per[s.client] = append(per[s.client], s.at)
				}
				within := true
				for c, ts := range per {
					if n := maxInWindow(ts, time.Second); n > 5 {
						within = false
						t.Logf("client %s: %d sends in one window", c, n)
					}
				}
				if within != tc.wantWithin {
					t.Errorf("within limit = %v, want %v", within, tc.wantWithin)
				}
				if (res.Late > 0) != tc.wantLate {
					t.Errorf("late %d, want late: %v", res.Late, tc.wantLate)
				}
				onPlan := true
				for _, a := range rec.ops(OpSend) {
					// The pacer plans hit n at start + n/20 s.
					want := res.Start.Add(time.Duration(a.Seq) * 50 * time.Millisecond)
					if !a.Intended.Equal(want) {
						t.Errorf("seq %d intended %v after start, want %v", a.Seq, a.Intended.Sub(res.Start), want.Sub(res.Start))
					}
					if !a.Sent.Equal(a.Intended) {
						onPlan = false
					}
				}
				if onPlan != tc.wantAtPlan {
					t.Errorf("all on plan = %v, want %v", onPlan, tc.wantAtPlan)
				}
			})
		})
	}
}

// TestRespectRetryAfter: in respect mode a 429 with Retry-After keeps the
// client away for that long; the retried message waits for it too.
func TestRespectRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeService(t)
		var first time.Time
		srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/messaging/v1/send" && first.IsZero() {
				first = time.Now()
				w.Header().Set("Retry-After", "3")
				w.WriteHeader(429)
				return
			}
			f.ServeHTTP(w, r)
		})
		rec := &memRecorder{}
		res, err := Run(context.Background(), Options{
			API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
			Pacer: Constant(vegeta.Rate{Freq: 10, Per: time.Second}), Requests: 10,
			Body: messagingBody, RunID: "ra", Out: rec, Transport: handlerTransport{srv},
			Limit: Limit{Requests: 100, Window: time.Minute, Mode: modeRespect},
			Retry: Retry{On: []int{429}, Max: 1, Backoff: time.Millisecond},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Accepted != 10 || res.RateLimited != 1 {
			t.Fatalf("%+v: want 10 accepted, one 429", res.Snapshot)
		}
		for _, s := range f.sends {
			if s.at.Sub(first) < 3*time.Second {
				t.Errorf("send at %v after the 429, want ≥ 3s", s.at.Sub(first))
			}
		}
		// An attempt is recorded once its retry leaves: find the message's first.
		as := rec.ops(OpSend)
		i := slices.IndexFunc(as, func(a rundir.Attempt) bool { return a.Seq == 1 && a.Attempt == 1 })
		if i < 0 || as[i].RetryAfter != "3" || as[i].Class != "http_429" {
			t.Errorf("first attempt of message 1: %+v", as)
		}
	})
}

// TestTokenRefreshMidRun: tokens live 20 s (or 2 s), the run lasts a minute
// (or 6 s); the token is fetched again before it expires, so no send meets an
// expired token, and no more often than its life asks.
func TestTokenRefreshMidRun(t *testing.T) {
	for _, tc := range []struct {
		name          string
		ttl           int
		every         time.Duration
		sends         int
		minTok, maxTk int64
	}{
		// Renewed 5 s (a quarter of its life) before expiry: a token serves 15 s.
		{"20s tokens", 20, time.Second, 60, 4, 5},
		// Renewed 0.5 s before expiry: a token serves 1.5 s, not one send.
		{"2s tokens", 2, 100 * time.Millisecond, 60, 4, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakeService(t)
				f.ttl = tc.ttl
				rec := &memRecorder{}
				res, err := Run(context.Background(), Options{
					API: rundir.APINotify, BaseURL: "http://svc.test", TokenURL: "http://idp.test/token", Clients: clients("c"),
					Pacer: Constant(vegeta.Rate{Freq: 1, Per: tc.every}), Requests: int64(tc.sends),
					Body: notifyBody, RunID: "tok", Out: rec, Transport: handlerTransport{f},
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Accepted != int64(tc.sends) || f.expired.Load() != 0 {
					t.Fatalf("accepted %d, refused as expired %d; want %d and 0", res.Accepted, f.expired.Load(), tc.sends)
				}
				if n := f.tokens.Load(); n < tc.minTok || n > tc.maxTk {
					t.Errorf("%d tokens, want %d to %d", n, tc.minTok, tc.maxTk)
				}
				for _, a := range rec.ops(opToken) {
					if a.Code != 200 || a.Client != "c" || a.Seq != 0 {
						t.Errorf("token attempt %+v", a)
					}
				}
			})
		})
	}
}

// TestWindowLimiter drives the limiter alone on fake time.
func TestWindowLimiter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		w       time.Duration
		calls   int
		blockAt int           // call index after which a Retry-After block is set (-1 none)
		block   time.Duration // its length
		want    []time.Duration
	}{
		// 3 per second: the 4th waits for the 1st to leave the window.
		{"window", 3, time.Second, 7, -1, 0, []time.Duration{0, 0, 0, time.Second, time.Second, time.Second, 2 * time.Second}},
		// A Retry-After of 5 s after the 2nd call holds the 3rd back even with room in the window.
		{"retry-after", 10, time.Second, 3, 1, 5 * time.Second, []time.Duration{0, 0, 5 * time.Second}},
		// 1 per 100 ms: evenly spaced.
		{"one per window", 1, 100 * time.Millisecond, 4, -1, 0, []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newWindowLimiter(tc.n, tc.w)
				start := time.Now()
				var got []time.Duration
				for i := range tc.calls {
					slot, err := l.wait(context.Background(), nil)
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, time.Since(start))
					l.answered(slot) // answered at once

					if i == tc.blockAt {
						l.block(time.Now().Add(tc.block))
					}
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("grants %v, want %v", got, tc.want)
				}
			})
		})
	}
	// The window counts from the answer: a request answered 400 ms after it
	// left holds the next one (over a limit of 1 per second) until 1.4 s, and a
	// request still unanswered holds it until the answer comes.
	synctest.Test(t, func(t *testing.T) {
		l := newWindowLimiter(1, time.Second)
		start := time.Now()
		slot, _ := l.wait(context.Background(), nil)
		go func() {
			time.Sleep(400 * time.Millisecond)
			l.answered(slot)
		}()
		slot, _ = l.wait(context.Background(), nil)
		if got := time.Since(start); got != 1400*time.Millisecond {
			t.Fatalf("second grant at %v, want 1.4s (a window after the first answer)", got)
		}
		go func() {
			time.Sleep(5 * time.Second) // a slow answer: longer than the window
			l.answered(slot)
		}()
		l.wait(context.Background(), nil)
		if got := time.Since(start); got != 7400*time.Millisecond {
			t.Fatalf("third grant at %v, want 7.4s (a window after the second answer at 6.4s)", got)
		}
	})
	// A waiter gives up when its context ends; the slot is not used.
	synctest.Test(t, func(t *testing.T) {
		l := newWindowLimiter(1, time.Minute)
		l.wait(context.Background(), nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := l.wait(ctx, nil); err == nil {
			t.Fatal("wait beyond the context succeeded")
		}
		if l.fill != 1 {
			t.Fatalf("fill %d after a cancelled wait, want 1", l.fill)
		}
	})
}

// TestStopOnCancel: cancelling the context stops new sends; the run returns.
func TestStopOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeService(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer cancel()
		res, err := Run(ctx, Options{
			API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
			Pacer: Constant(vegeta.Rate{Freq: 10, Per: time.Second}), Duration: time.Hour,
			Body: messagingBody, RunID: "stop", Transport: handlerTransport{f},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Stopped || res.Sent < 24 || res.Sent > 26 {
			t.Fatalf("stopped %v after %d sends; want about 25", res.Stopped, res.Sent)
		}
	})
}

// TestMaxMessagesCaps: the hard cap wins over the planned count.
func TestMaxMessagesCaps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeService(t)
		res, err := Run(context.Background(), Options{
			API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
			Pacer: Constant(vegeta.Rate{Freq: 10, Per: time.Second}), Requests: 100, MaxMessages: 7,
			Body: messagingBody, RunID: "cap", Transport: handlerTransport{f},
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 7 || len(f.sends) != 7 || !res.Stopped {
			t.Fatalf("sent %d, service got %d, stopped %v; want 7, 7, true", res.Sent, len(f.sends), res.Stopped)
		}
	})
}

func TestRetries(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name   string
		api    string
		answer []int // status per arrival of the message; 0 = hang past the timeout; past the end: 200
		retry  Retry
		after  string          // Retry-After sent with failures
		codes  []int           // codes of the attempts recorded
		gaps   []time.Duration // waits between attempts (fake time, no jitter)
		ok     bool
	}{
		// 503 twice then accepted: backoff doubles (10 ms, 20 ms).
		{"backoff doubles", rundir.APIMessaging, []int{503, 503}, Retry{On: []int{503}, Max: 3, Backoff: 10 * ms}, "", []int{503, 503, 200}, []time.Duration{10 * ms, 20 * ms}, true},
		// Max reached: three attempts, the message fails.
		{"max reached", rundir.APIMessaging, []int{503, 503, 503, 503}, Retry{On: []int{503}, Max: 2, Backoff: ms}, "", []int{503, 503, 503}, []time.Duration{ms, 2 * ms}, false},
		// A code not in On is not retried.
		{"400 not retried", rundir.APIMessaging, []int{400}, Retry{On: []int{503}, Max: 3, Backoff: ms}, "", []int{400}, nil, false},
		// No answer within the timeout: retried when OnTimeout (code 0, outcome unknown).
		{"timeout retried", rundir.APIMessaging, []int{0}, Retry{OnTimeout: true, Max: 1, Backoff: 5 * ms}, "", []int{0, 200}, []time.Duration{time.Second + 5*ms}, true},
		// ... and not retried without OnTimeout.
		{"timeout not retried", rundir.APIMessaging, []int{0}, Retry{Max: 1, Backoff: 5 * ms}, "", []int{0}, nil, false},
		// Retry-After longer than the backoff wins.
		{"retry-after wins", rundir.APIMessaging, []int{429}, Retry{On: []int{429}, Max: 1, Backoff: ms}, "2", []int{429, 200}, []time.Duration{2 * time.Second}, true},
		// A refused token: one retry at once with a new token, even with no retries configured.
		{"401 refresh without policy", rundir.APINotify, []int{401}, Retry{}, "", []int{401, 200}, []time.Duration{0}, true},
		// ... only once: a second 401 ends the message.
		{"401 only once", rundir.APINotify, []int{401, 401}, Retry{}, "", []int{401, 401}, []time.Duration{0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var times []time.Time
				f := newFakeService(t)
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/token" {
						f.ServeHTTP(w, r)
						return
					}
					mu.Lock()
					times = append(times, time.Now())
					arrivals := len(times)
					mu.Unlock()
					if arrivals <= len(tc.answer) {
						switch code := tc.answer[arrivals-1]; code {
						case 0:
							<-r.Context().Done() // hang until the attacker gives up
							return
						default:
							if tc.after != "" {
								w.Header().Set("Retry-After", tc.after)
							}
							w.WriteHeader(code)
							return
						}
					}
					w.Write([]byte(`{"txId":"00000000-0000-4000-8000-000000000001","state":"ACCEPTED","notificationId":"n"}`))
				})
				rec := &memRecorder{}
				body := messagingBody
				if tc.api == rundir.APINotify {
					body = notifyBody
				}
				res, err := Run(context.Background(), Options{
					API: tc.api, BaseURL: "http://svc.test", TokenURL: "http://idp.test/token", Clients: clients("c"),
					Pacer: Constant(vegeta.Rate{Freq: 1, Per: time.Second}), Requests: 1, Timeout: time.Second,
					Body: body, RunID: "rt", Out: rec, Transport: handlerTransport{h}, Retry: tc.retry,
				})
				if err != nil {
					t.Fatal(err)
				}
				var codes []int
				for i, a := range rec.ops(OpSend) {
					codes = append(codes, a.Code)
					if a.Attempt != i+1 {
						t.Errorf("attempt %d numbered %d", i+1, a.Attempt)
					}
					if a.Code == 0 && (a.Outcome != rundir.OutcomeUnknown || a.Class != "timeout") {
						t.Errorf("timeout recorded as %s/%s", a.Outcome, a.Class)
					}
				}
				if !slices.Equal(codes, tc.codes) {
					t.Errorf("codes %v, want %v", codes, tc.codes)
				}
				mu.Lock()
				defer mu.Unlock()
				var gaps []time.Duration
				for i := 1; i < len(times); i++ {
					gaps = append(gaps, times[i].Sub(times[i-1]))
				}
				// An attempt that times out ends the timeout after it was sent,
				// plus at most a tick of the shared deadlines (deadlines).
				var slack time.Duration
				if slices.Contains(tc.answer, 0) {
					slack = time.Duration(newDeadlines(context.Background(), time.Second).tick)
				}
				ok := len(gaps) == len(tc.gaps)
				for i := 0; ok && i < len(gaps); i++ {
					ok = gaps[i] >= tc.gaps[i] && gaps[i] <= tc.gaps[i]+slack
				}
				if !ok {
					t.Errorf("gaps %v, want %v (+ up to %v)", gaps, tc.gaps, slack)
				}
				if (res.Accepted == 1) != tc.ok {
					t.Errorf("accepted %d, want ok %v", res.Accepted, tc.ok)
				}
			})
		})
	}
}

// TestDurationPlanSendsItsCount: a plan of a duration sends the hits its
// schedule has due within it — rate × duration, as the plan counts them
// (scenarios.Plan) — and not one more due just after the end. vegeta's loop
// checks the clock before it asks the pacer, so a hit due a tick after the
// duration left when the check ran on time: 180,001 sends of 180,000
// planned in a 60 s run at 3,000/s that kept its plan.
func TestDurationPlanSendsItsCount(t *testing.T) {
	sec := time.Second
	for _, tc := range []struct {
		name string
		p    vegeta.Pacer
		du   time.Duration
		want int64
	}{
		{"constant", Constant(vegeta.Rate{Freq: 20, Per: sec}), 2 * sec, 40},
		{"constant, a rate the nanosecond does not divide", Constant(vegeta.Rate{Freq: 30, Per: sec}), 2 * sec, 60},
		{"ramp", NewRamp(vegeta.Rate{}, vegeta.Rate{Freq: 40, Per: sec}, 2*sec), 2 * sec, 40},
		{"steps", Steps{{vegeta.Rate{Freq: 10, Per: sec}, sec}, {vegeta.Rate{Freq: 30, Per: sec}, sec}}, 2 * sec, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakeService(t)
				rec := &memRecorder{}
				res, err := Run(context.Background(), Options{
					API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
					Pacer: tc.p, Duration: tc.du,
					Body: messagingBody, RunID: "du", Out: rec, Transport: handlerTransport{f},
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Sent != tc.want || int64(len(f.sends)) != tc.want {
					t.Errorf("sent %d, service got %d; want %d", res.Sent, len(f.sends), tc.want)
				}
				for _, a := range rec.ops(OpSend) {
					if at := a.Intended.Sub(res.Start); at > tc.du {
						t.Errorf("seq %d intended %v after the start, after the plan's %v", a.Seq, at, tc.du)
					}
				}
			})
		})
	}
}

// failingRecorder records its first n attempts, then fails every record as
// a full disk does.
type failingRecorder struct {
	memRecorder
	n int
}

var errDiskFull = errors.New("write attempt log: no space left on device")

func (f *failingRecorder) Record(a *rundir.Attempt, r *vegeta.Result) error {
	f.mu.Lock()
	full := len(f.attempts) >= f.n
	f.mu.Unlock()
	if full {
		return errDiskFull
	}
	return f.memRecorder.Record(a, r)
}

// TestRecordFailureStopsTheSends: an attempt that cannot be recorded (a full
// disk) stops the sends — the rest of the plan is not sent blind, unmeasured
// — and the run returns the failure. A soak whose disk fills at hour 20 of 24
// does not load the service four more hours with nothing recorded.
func TestRecordFailureStopsTheSends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeService(t)
		rec := &failingRecorder{n: 10}
		res, err := Run(context.Background(), Options{
			API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
			Pacer: Constant(vegeta.Rate{Freq: 20, Per: time.Second}), Duration: 10 * time.Second,
			Body: messagingBody, RunID: "full", Out: rec, Transport: handlerTransport{f},
		})
		if !errors.Is(err, errDiskFull) {
			t.Fatalf("run returned %v, want the record's failure", err)
		}
		// The message whose record failed was sent; at most the sends
		// already under way when it failed follow it.
		if res.Sent > 12 || len(f.sends) > 12 || !res.Stopped {
			t.Fatalf("sent %d (the service got %d) of 200 planned, stopped %v, after the 11th record failed: want the sends stopped", res.Sent, len(f.sends), res.Stopped)
		}
	})
}
