package grafana

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/attack/message"
	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// testRun is the short run the end-to-end test scrapes: the servers exposing
// /metrics, their registries, and drive, which sends the run's traffic and
// returns when it is over.
type testRun struct {
	sources []source
	drive   func(t *testing.T)
	// upDuringDrive: the sources start serving only once drive runs.
	upDuringDrive bool
}

// The two scenarios of the run, each a few seconds long. Messaging cascades
// viber → sms with a 1 s ttl so failover steps happen; notify sends from two
// clients over a limit of 15 per 5 s so 429 answers and Retry-After come back.
const (
	e2eMessaging = `
name: e2e-messaging
api: messaging
load: { profile: constant, rate: 6/s, duration: 8s }
message:
  recipient: "+7999{0000000-9999999}"
  scenario:
    - channel: viber
      sender: msgload
      failover: { ttl: 1, condition_status: DELIVERED }
    - channel: sms
      sender: msgload
`
	e2eNotify = `
name: e2e-notify
api: notify
clients: 2
load: { profile: constant, rate: 8/s, duration: 8s }
message:
  recipient: "+7999{0000000-9999999}"
`
	e2eRunID = "e2e-grafana"
)

// startRun wires a short run from the real packages, each on its own loopback
// server and registry as three processes would be: the simulator (messaging
// and notify), the sink receiving its callbacks, webhooks and incoming
// messages, and the attacker driving both APIs at once.
// TODO(lead): once harness exposes a smoke run, drive that instead.
func startRun(t *testing.T) *testRun {
	t.Helper()
	sinkReg := prometheus.NewRegistry()
	sk, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl")}, sinkReg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sk.Close() })
	sinkSrc := serve(t, "msgload-sink", sinkReg, sk.Handler())

	cfg := sim.DefaultConfig()
	cfg.Seed = 42
	for i := range cfg.Messaging.Accounts {
		cfg.Messaging.Accounts[i].CallbackURL = sinkSrc.url + "/callback"
		cfg.Messaging.Accounts[i].PartnerURL = sinkSrc.url
	}
	cfg.Messaging.IncomingShare = 0.5
	viber := cfg.Messaging.Profiles[rundir.ChannelViber]
	viber.Delay = sim.Delay{Dist: "lognormal", Median: 800 * time.Millisecond, P95: 3 * time.Second}
	cfg.Messaging.Profiles[rundir.ChannelViber] = viber
	cfg.RateLimit = sim.RateLimit{Requests: 15, Window: 5 * time.Second, Algorithm: sim.AlgSliding, RetryAfter: true}
	cfg.Faults = sim.Faults{Error500: 0.03, Error503: 0.03}
	// Webhooks registered in advance: with faults on, a registration call of
	// the attacker could draw a 503 and end the notify attack before it began.
	for i := range cfg.Notify.Clients {
		cfg.Notify.Clients[i].WebhookURL = sinkSrc.url + "/webhook"
	}
	cfg.Callbacks.Duplicate = 0.2
	cfg.Callbacks.Drop = 0.02
	simReg := prometheus.NewRegistry()
	sm, err := sim.New(cfg, simReg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sm.Close() })
	simSrc := serve(t, "msgload-sim", simReg, sm.Handler())

	attackReg := prometheus.NewRegistry()
	met, err := attack.NewMetrics(attackReg, 20)
	if err != nil {
		t.Fatal(err)
	}
	// The run directory's disk, served by the run's process with its run_id
	// as harness serves it.
	if err := harness.DiskMetrics(prometheus.WrapRegistererWith(prometheus.Labels{"run_id": e2eRunID}, attackReg), t.TempDir(), 256<<20, nil); err != nil {
		t.Fatal(err)
	}
	attackSrc := serve(t, "msgload-attack", attackReg, nil)

	var opts []attack.Options
	for _, src := range []string{e2eMessaging, e2eNotify} {
		sc, err := scenarios.Parse("e2e.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		gen, err := message.New(sc.API, sc.ResolvedMessage(), sc.Sim.Seed)
		if err != nil {
			t.Fatal(err)
		}
		o := attack.Options{
			API:      sc.API,
			BaseURL:  simSrc.url,
			TokenURL: simSrc.url + "/oauth/token",
			Pacer:    vegeta.ConstantPacer{Freq: 6, Per: time.Second},
			Duration: 8 * time.Second,
			Body: func(seq int64, client string, tag rundir.Tag) ([]byte, error) {
				b, _, err := gen.Body(seq, client, tag)
				return b, err
			},
			Chain:    gen.Channels(),
			RunID:    e2eRunID,
			Scenario: sc.Name,
			Retry:    attack.Retry{On: []int{500, 503}, Max: 2, Backoff: 100 * time.Millisecond},
			Timeout:  5 * time.Second,
			Metrics:  met,
		}
		if sc.API == rundir.APIMessaging {
			o.Clients = []attack.Client{{ID: "demo", Secret: "demo"}}
		} else {
			o.Clients = []attack.Client{{ID: "demo-1", Secret: "demo"}, {ID: "demo-2", Secret: "demo"}}
			o.Pacer = vegeta.ConstantPacer{Freq: 8, Per: time.Second}
			o.Probes = 0.2
		}
		opts = append(opts, o)
	}

	return &testRun{
		sources: []source{attackSrc, sinkSrc, simSrc},
		drive: func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var wg sync.WaitGroup
			for _, o := range opts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := attack.Run(ctx, o); err != nil {
						t.Errorf("attack %s: %v", o.API, err)
					}
				}()
			}
			wg.Wait()
			// The grace period: wait (bounded) for the simulator's deliveries
			// to end so their callbacks reach the sink while it is scraped.
			deadline := time.Now().Add(20 * time.Second)
			for sm.Pending() > 0 && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
			}
		},
	}
}
