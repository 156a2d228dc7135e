package grafana

import (
	"bytes"
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/scenarios"
)

// e2eScenario is a short two-part run, as `msgload run` would do it: a
// messaging part cascading viber → sms with a 1 s ttl (failover steps,
// incoming replies, duplicates) and a notify part from two clients over a
// limit of 15 per 5 s (429 with Retry-After, retries of injected 5xx,
// idempotency probes, tokens).
const e2eScenario = `
name: e2e-grafana
parts:
  - name: msg
    api: messaging
    target: embedded
    load: { profile: constant, rate: 6/s, duration: 8s }
    message:
      recipient: "+7999{0000000-9999999}"
      scenario:
        - channel: viber
          sender: msgload
          failover: { ttl: 1, condition_status: DELIVERED }
        - channel: sms
          sender: msgload
    delivery: { via: sink, grace: 15s }
    sim:
      profiles:
        viber: { median: 800ms, p95: 3s, outcomes: { DELIVERED: 60%, NOT_DELIVERED: 40% } }
      incomingShare: 50%
      callbacks: { duplicate: 20% }
      faults: { error500: 3%, error503: 3% }
    retry: { on: [500, 503], max: 2, backoff: 100ms }
  - name: ntf
    api: notify
    target: embedded
    clients: 2
    load: { profile: constant, rate: 8/s, duration: 8s }
    limit: { rate: 15/5s, mode: exceed }
    message: { recipient: "+7999{0000000-9999999}" }
    idempotency: { probes: 20% }
    retry: { on: [500, 503], max: 2, backoff: 100ms }
    delivery: { via: sink, grace: 15s }
    sim:
      rateLimit: { rate: 15/5s, algorithm: sliding }
      callbacks: { duplicate: 20% }
      faults: { error500: 3%, error503: 3% }
`

// startHarnessRun runs e2eScenario through harness.Run with /metrics on a
// free loopback address: one process, one job, as `msgload run
// --metrics-addr` serves it. drive returns once the run has ended and the
// harness has let its last scrape happen.
func startHarnessRun(t *testing.T) *testRun {
	t.Helper()
	s, err := scenarios.Parse("e2e-grafana.yaml", t.TempDir(), []byte(e2eScenario), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	addr := testnet.FreeAddr(t)
	u := &url.URL{Scheme: "http", Host: addr}
	run := &testRun{
		sources:       []source{{job: "msgload-attack", url: u.String()}},
		upDuringDrive: true,
	}
	run.drive = func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var stderr bytes.Buffer
		res, err := harness.Run(ctx, harness.Options{
			Scenario: s, Out: t.TempDir(), Stdout: &bytes.Buffer{}, Stderr: &stderr,
			MetricsAddr: addr, MetricsLinger: 30 * time.Second, Version: "test",
		})
		if err != nil {
			t.Fatalf("harness.Run: %v\n%s", err, stderr.String())
		}
		for _, p := range res.Parts {
			if p.Err != nil {
				t.Errorf("part %s: %v\n%s", p.Name, p.Err, stderr.String())
			}
		}
	}
	return run
}
