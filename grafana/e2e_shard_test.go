package grafana

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/scenarios"
)

// e2eSharded is the scenario of TestShardBreakdown: two clients, so each of
// two shards has one.
// e2eSharded lasts 12 s: Prometheus scrapes each shard every second with a
// 900 ms timeout, and on a busy machine its first scrapes of a new target
// can come late or time out — a 5 s run was once over before one landed
// (run_id listed nothing). The shards' counts need only a few scrapes.
const e2eSharded = `
name: e2e-sharded
api: messaging
target: embedded
clients: 2
load: { profile: constant, rate: 3/s, duration: 12s }
message: { recipient: "+7999{0000000-9999999}", text: "shard {{.Seq}}" }
delivery: { via: sink, grace: 5s }
`

// TestShardBreakdown runs both shards of one sharded run (one run id), each
// serving /metrics on its own address, scraped by a real Prometheus. The
// run_id variable lists the run once, and Overview's shard panel, with the
// variables substituted as Grafana would, answers one series per shard,
// labelled by the shard's I/N, each with the shard's own first sends.
func TestShardBreakdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two shards and a real Prometheus; not in -short")
	}
	needProgram(t, "/usr/bin/prometheus")
	addrs := []string{testnet.FreeAddr(t), testnet.FreeAddr(t)}
	var sources []source
	for _, a := range addrs {
		sources = append(sources, source{job: "msgload", url: "http://" + a})
	}
	p := startPrometheusOn(t, sources, "")
	s, err := scenarios.Parse("e2e-sharded.yaml", t.TempDir(), []byte(e2eSharded), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	const runID = "20261123T000000Z-e2e-sharded-000001"
	sent := make([]int64, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var stderr bytes.Buffer
			res, err := harness.Run(ctx, harness.Options{
				Scenario: s, Out: t.TempDir(), Stdout: io.Discard, Stderr: &stderr,
				MetricsAddr: addr, MetricsLinger: 30 * time.Second, Version: "test",
				RunID: runID, ShardIndex: i, ShardCount: len(addrs),
			})
			if err != nil {
				t.Errorf("shard %d: %v\n%s", i, err, stderr.String())
				return
			}
			for _, pt := range res.Parts {
				if pt.Err != nil {
					t.Errorf("shard %d: %v\n%s", i, pt.Err, stderr.String())
				}
				if pt.Summary != nil {
					sent[i] += pt.Summary.Requests.Messages
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	p.waitFor(t, "both shards' targets down", 60*time.Second, func() bool {
		return p.instant(t, `count(up{job="msgload"} == 0)`) == 2
	})
	end := time.Now()
	ids, err := p.labelValues("run_id", runInfoMetric, start.Add(-time.Minute), end)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []string{runID}) {
		t.Fatalf("run_id lists %v, want the sharded run once", ids)
	}

	ds, err := loadDashboards(Files)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, d := range ds {
		for _, q := range d.Queries() {
			if q.Panel != shardPanel || !strings.Contains(q.Expr, "msgload_messages_sent_total") {
				continue
			}
			found = true
			expr := expand(q.Expr, grafanaVariables(t, d, ids), time.Second, end.Sub(start))
			res, err := p.queryRange(expr, start.Add(-5*time.Second), end, time.Second)
			if err != nil {
				t.Fatalf("%v\n  %s", err, expr)
			}
			var shards []string
			for _, r := range res {
				shards = append(shards, r.Metric["shard"])
				if finiteSamples([]rangeSeries{r}) == 0 {
					t.Errorf("%s: shard %q has no samples", q.Where, r.Metric["shard"])
				}
			}
			slices.Sort(shards)
			if !slices.Equal(shards, []string{"0/2", "1/2"}) {
				t.Errorf("%s: series by shard %v, want [0/2 1/2]\n  %s", q.Where, shards, expr)
			}
		}
	}
	if !found {
		t.Fatalf("no panel %q reading msgload_messages_sent_total", shardPanel)
	}
	for i, n := range sent {
		if n == 0 {
			t.Errorf("shard %d sent nothing: the breakdown proves nothing", i)
		}
	}
}

// shardPanel is Overview's breakdown of a sharded run.
const shardPanel = "Messages and 429 by shard"
