package attack

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// slowService answers every send after delay and keeps the largest number of
// requests it held at once.
type slowService struct {
	delay     time.Duration
	mu        sync.Mutex
	now, peak int
	n         int
}

func (s *slowService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.now++
	s.n++
	s.peak = max(s.peak, s.now)
	s.mu.Unlock()
	time.Sleep(s.delay)
	s.mu.Lock()
	s.now--
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"txId":"00000000-0000-4000-8000-000000000001","state":"ACCEPTED"}`))
}

// TestMaxInFlight: against a target that answers in 1 s, 100/s would keep
// 100 messages in flight; a cap of 10 holds them at 10 (the rate falls to
// 10/s) and every send due while the cap was full is counted as capped and
// late; without a cap nothing is capped.
func TestMaxInFlight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cap    int
		peak   int  // most requests the service held at once (the one due as another's answer comes adds one)
		capped bool // some sends were capped
	}{
		{"cap 10", 10, 10, true},
		{"no cap", -1, 101, false},
		{"default cap", 0, 101, false}, // 1024: not reached
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &slowService{delay: time.Second}
				rec := &memRecorder{}
				res, err := Run(context.Background(), Options{
					API: rundir.APIMessaging, BaseURL: "http://svc.test", Clients: clients("a"),
					Pacer: Constant(vegeta.Rate{Freq: 100, Per: time.Second}), Duration: 3 * time.Second,
					Body: messagingBody, RunID: "cap", Out: rec, Transport: handlerTransport{s}, MaxInFlight: tc.cap,
				})
				if err != nil {
					t.Fatal(err)
				}
				if s.peak != tc.peak {
					t.Errorf("the service held %d requests at once, want %d", s.peak, tc.peak)
				}
				var capped int64
				for _, a := range rec.ops(OpSend) {
					// However late the pacer got to it, a send keeps its planned time: hit n at n/100 s.
					if want := res.Start.Add(time.Duration(a.Seq) * 10 * time.Millisecond); !a.Intended.Equal(want) {
						t.Errorf("seq %d intended %v after the start, want %v", a.Seq, a.Intended.Sub(res.Start), want.Sub(res.Start))
					}
					if a.Capped {
						capped++
						if a.Late() <= 10*time.Millisecond {
							t.Errorf("seq %d capped but %v late", a.Seq, a.Late())
						}
					}
				}
				if (capped > 0) != tc.capped || res.Capped != capped {
					t.Errorf("capped %d recorded, %d counted; want some: %v", capped, res.Capped, tc.capped)
				}
				if tc.capped && (res.Sent < 25 || res.Sent > 40) {
					t.Errorf("sent %d in 3 s at 10 in flight and 1 s per answer, want about 30", res.Sent)
				}
			})
		})
	}
}

// TestCountPlanSendsEveryMessage: a count plan (Requests) sends all its
// messages, late if it must. Against a target that answers in 1 s, a cap of 2
// in flight lets 2 a second leave while the plan asks 8 a second for 3 s (the
// Duration the harness gives a count plan, N / rate): the plan still sends its
// 24, each keeping its planned time, the ones held by the cap marked capped.
func TestCountPlanSendsEveryMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"constant", Options{Pacer: Constant(vegeta.Rate{Freq: 8, Per: time.Second}), Requests: 24, Duration: 3 * time.Second}},
		{"steps", Options{Pacer: Steps{{Rate: vegeta.Rate{Freq: 4, Per: time.Second}, For: time.Second}, {Rate: vegeta.Rate{Freq: 10, Per: time.Second}, For: 2 * time.Second}},
			Requests: 24, Duration: 3 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &slowService{delay: time.Second}
				rec := &memRecorder{}
				o := tc.o
				o.API, o.BaseURL, o.Clients, o.Body, o.RunID, o.Out = rundir.APIMessaging, "http://svc.test", clients("a"), messagingBody, "count", rec
				o.Transport, o.MaxInFlight, o.Grace = handlerTransport{s}, 2, time.Second
				res, err := Run(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				sends := rec.ops(OpSend)
				if res.Sent != 24 || len(sends) != 24 || s.n != 24 {
					t.Fatalf("sent %d, recorded %d, the service got %d; a count plan of 24 sends 24", res.Sent, len(sends), s.n)
				}
				if res.Capped == 0 {
					t.Errorf("no send was capped at 2 in flight and 1 s per answer")
				}
				for _, a := range sends {
					if a.GaveUp != "" || a.Outcome != rundir.OutcomeOK {
						t.Errorf("seq %d: %s %s", a.Seq, a.Outcome, a.GaveUp)
					}
					if a.Intended.Sub(res.Start) > o.Duration { // hit n is due at n / rate: the last at the end
						t.Errorf("seq %d planned %v after the start, past the plan's %v", a.Seq, a.Intended.Sub(res.Start), o.Duration)
					}
				}
			})
		})
	}
}
