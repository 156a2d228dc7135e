package attack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

// End-to-end against the real simulator (package sim) on a loopback port.

func startSim(t *testing.T, cfg sim.Config) *httptest.Server {
	t.Helper()
	s, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv
}

func simMessagingBody(seq int64, client string, tag rundir.Tag) ([]byte, error) {
	td := tag.TrackData()
	return fmt.Appendf(nil, `{"trackData":{%q:%q,%q:%q,%q:%q},"scenario":[{"channel":"sms","recipient":{"type":"MSISDN","value":"+7999%07d"},"sender":"Acme","text":"hello %d"}]}`,
		rundir.TrackRun, td[rundir.TrackRun], rundir.TrackSeq, td[rundir.TrackSeq], rundir.TrackSent, td[rundir.TrackSent], seq, seq), nil
}

func simNotifyBody(seq int64, client string, tag rundir.Tag) ([]byte, error) {
	return fmt.Appendf(nil, `{"recipient":{"value":"+7999%07d"},"notificationText":"hello %d","externalId":%q}`, seq, seq, tag.ExternalID()), nil
}

func TestSimMessagingPoll(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed = 1
	p := cfg.Messaging.Profiles[rundir.ChannelSMS]
	p.Delay = sim.Delay{Dist: "fixed", Median: 30 * time.Millisecond}
	cfg.Messaging.Profiles[rundir.ChannelSMS] = p
	srv := startSim(t, cfg)
	rec := &memRecorder{}
	res, err := Run(context.Background(), Options{
		API: rundir.APIMessaging, BaseURL: srv.URL, Clients: []Client{{ID: "demo", Secret: "demo"}},
		Pacer: Constant(vegeta.Rate{Freq: 200, Per: time.Second}), Requests: 20,
		Body: simMessagingBody, Chain: []string{"sms"}, RunID: "e2e", Out: rec,
		Poll: &Poll{Interval: 20 * time.Millisecond, Until: 20 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 20 || res.Accepted != 20 {
		t.Fatalf("%+v: want 20 sent and accepted", res.Snapshot)
	}
	// Every message is polled to a terminal state.
	done := map[int64]string{}
	for _, a := range rec.ops(opCheckStatus) {
		if a.Code != 200 {
			t.Errorf("poll %+v", a)
		}
		done[a.Seq] = a.State
	}
	for seq := int64(1); seq <= 20; seq++ {
		switch done[seq] {
		case "DELIVERED", "NOT_DELIVERED", "FAILED", "SEEN":
		default:
			t.Errorf("seq %d ended polling at %q", seq, done[seq])
		}
	}
}

func TestSimNotifyFaults(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed = 2
	cfg.Faults.Error503 = 0.1
	cfg.Faults.ProcessedThen500 = 0.1
	var hooks atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hooks.Add(1) }))
	defer sink.Close()
	srv := startSim(t, cfg)
	rec := &memRecorder{}
	res, err := Run(context.Background(), Options{
		API: rundir.APINotify, BaseURL: srv.URL, TokenURL: srv.URL + "/oauth/token",
		Clients: []Client{{ID: "demo-1", Secret: "demo"}, {ID: "demo-2", Secret: "demo"}},
		Pacer:   Constant(vegeta.Rate{Freq: 100, Per: time.Second}), Requests: 40,
		Body: simNotifyBody, RunID: "e2en", Out: rec, WebhookURL: sink.URL + "/webhook",
		Retry:  Retry{On: []int{500, 503}, OnTimeout: true, Max: 5, Backoff: 5 * time.Millisecond, Jitter: 0.2},
		Probes: 0.25, ProbeConcurrency: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 40 || res.Accepted != 40 || res.Retries == 0 {
		t.Fatalf("%+v: want 40 sent and accepted after some retries", res.Snapshot)
	}
	// Retries under processed-then-500 must return the same notificationId:
	// the probes and retries agree with the simulator's idempotency.
	if res.Mismatches != 0 || res.Probes == 0 {
		t.Errorf("probes %d mismatches %d", res.Probes, res.Mismatches)
	}
	ids := map[int64]map[string]bool{}
	for _, a := range rec.ops(OpSend) {
		if a.Outcome == rundir.OutcomeOK {
			if ids[a.Seq] == nil {
				ids[a.Seq] = map[string]bool{}
			}
			ids[a.Seq][a.NotificationID] = true
		}
	}
	for seq, m := range ids {
		if len(m) != 1 {
			t.Errorf("seq %d: notificationIds %v", seq, m)
		}
	}
	if n := len(rec.ops(opWebhook)); n < 2 {
		t.Errorf("%d webhook registrations, want one per client", n)
	}
}

// TestTokenTimeoutRetried: a token request that gets no answer within the
// attempt's timeout is retried under retry.on timeout, like a send without an
// answer — before the webhook registration as before a send — instead of
// ending the run before its first send.
func TestTokenTimeoutRetried(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed = 1
	s, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var tokens atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/token" && tokens.Add(1) == 1 {
			select { // the first token request never gets an answer in time
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		s.Handler().ServeHTTP(w, r)
	}))
	defer srv.Close()
	defer close(release)
	rec := &memRecorder{}
	res, err := Run(context.Background(), Options{
		API: rundir.APINotify, BaseURL: srv.URL, TokenURL: srv.URL + "/oauth/token", Clients: []Client{{ID: "demo-1", Secret: "demo"}},
		Pacer: Constant(vegeta.Rate{Freq: 100, Per: time.Second}), Requests: 3,
		Body: simNotifyBody, RunID: "toktimeout", Out: rec, WebhookURL: "http://127.0.0.1:1/webhook",
		Timeout: 300 * time.Millisecond,
		Retry:   Retry{OnTimeout: true, Max: 2, Backoff: 10 * time.Millisecond},
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Accepted != 3 {
		t.Fatalf("%+v: want 3 accepted", res.Snapshot)
	}
	hooks := rec.ops(opWebhook)
	if len(hooks) != 2 || hooks[0].Class != "timeout" || hooks[0].Outcome != rundir.OutcomeFail || hooks[1].Outcome != rundir.OutcomeOK {
		t.Fatalf("webhook attempts %+v: want a timed-out token, then the registration", hooks)
	}
}
