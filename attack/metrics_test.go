package attack

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		m, err := NewMetrics(reg, 1) // one client label, then "other"
		if err != nil {
			t.Fatal(err)
		}
		f := newFakeService(t)
		f.fail = func(seq int64, arrival int, _ *http.Request) int {
			if seq == 2 && arrival == 1 {
				return 429
			}
			return 0
		}
		_, err = Run(context.Background(), Options{
			API: rundir.APINotify, BaseURL: "http://svc.test", TokenURL: "http://idp.test/token", Clients: clients("c1", "c2"),
			Pacer: Constant(vegeta.Rate{Freq: 10, Per: time.Second}), Requests: 10,
			Body: notifyBody, RunID: "met", Scenario: "smoke", Transport: handlerTransport{f}, Metrics: m,
			Retry: Retry{On: []int{429}, Max: 1}, Probes: 0.1, ProbeConcurrency: 1,
		})
		if err != nil {
			t.Fatal(err)
		}
		problems, err := testutil.CollectAndLint(reg)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
		want := `
# HELP msgload_messages_sent_total Messages sent: first attempts only.
# TYPE msgload_messages_sent_total counter
msgload_messages_sent_total{api="notify",client="c1"} 5
msgload_messages_sent_total{api="notify",client="other"} 5
# HELP msgload_rate_limited_total Answers with HTTP 429.
# TYPE msgload_rate_limited_total counter
msgload_rate_limited_total{api="notify",client="c1"} 0
msgload_rate_limited_total{api="notify",client="other"} 1
# HELP msgload_retries_total Retried sends (attempts after the first).
# TYPE msgload_retries_total counter
msgload_retries_total{api="notify",client="c1"} 0
msgload_retries_total{api="notify",client="other"} 1
# HELP msgload_run_info Always 1: the run, its scenario and API, and the shard (I/N) of a sharded run (empty otherwise).
# TYPE msgload_run_info gauge
msgload_run_info{api="notify",run_id="met",scenario="smoke",shard=""} 1
# HELP msgload_idempotency_probes_total Idempotency probes: resends of a message with the same externalId.
# TYPE msgload_idempotency_probes_total counter
msgload_idempotency_probes_total{api="notify"} 2
# HELP msgload_idempotency_mismatches_total Probes answered with another notificationId than the message's.
# TYPE msgload_idempotency_mismatches_total counter
msgload_idempotency_mismatches_total{api="notify"} 0
# HELP msgload_token_requests_total Token requests to the identity provider, by client and status code (0 = no answer).
# TYPE msgload_token_requests_total counter
msgload_token_requests_total{client="c1",code="200"} 1
msgload_token_requests_total{client="other",code="200"} 1
# HELP msgload_requests_in_flight HTTP requests waiting for an answer.
# TYPE msgload_requests_in_flight gauge
msgload_requests_in_flight{api="notify"} 0
`
		names := []string{"msgload_messages_sent_total", "msgload_rate_limited_total", "msgload_retries_total",
			"msgload_run_info", "msgload_idempotency_probes_total", "msgload_idempotency_mismatches_total",
			"msgload_token_requests_total", "msgload_requests_in_flight"}
		if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
			t.Error(err)
		}
		// 10 first sends, 1 retry, 2 probes: 13 sends, one of them 429.
		if got := testutil.ToFloat64(m.requests.WithLabelValues("notify", OpSend, "200", "c1")) +
			testutil.ToFloat64(m.requests.WithLabelValues("notify", OpSend, "200", "other")); got != 12 {
			t.Errorf("send 200s = %g, want 12", got)
		}
		if got := testutil.ToFloat64(m.runEnd); got <= testutil.ToFloat64(m.runStart) || testutil.ToFloat64(m.runStart) <= 0 {
			t.Errorf("run start %g end %g", testutil.ToFloat64(m.runStart), got)
		}
		if n := testutil.CollectAndCount(m.duration); n < 2 {
			t.Errorf("%d duration series, want send and token", n)
		}
	})
}

// TestMetricsRegisterTwice: a second set on the same registry is refused, not a panic.
func TestMetricsRegisterTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMetrics(reg, 0); err == nil {
		t.Fatal("second registration succeeded")
	}
}

// BenchmarkRequestMetrics is what the metrics cost one accepted send: the
// in-flight gauge up and down, the sent counter, the send lag, the request
// counter and the duration (native histograms). A run that serves /metrics
// nowhere does none of it (harness: TestAttackMetricsOnlyWhenServed).
//
//	go test ./attack -run '^$' -bench BenchmarkRequestMetrics
func BenchmarkRequestMetrics(b *testing.B) {
	m, err := NewMetrics(prometheus.NewRegistry(), 20)
	if err != nil {
		b.Fatal(err)
	}
	c := m.forClient(rundir.APIMessaging, "c1")
	inFlight := m.inFlight.WithLabelValues(rundir.APIMessaging)
	lag := m.lag.WithLabelValues(rundir.APIMessaging)
	dur := m.duration.WithLabelValues(rundir.APIMessaging, OpSend)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		inFlight.Add(1)
		inFlight.Add(-1)
		c.sent.Inc()
		lag.Observe(float64(i%1000) * 1e-6)
		c.request(OpSend, http.StatusOK).Inc()
		dur.Observe(0.002 + float64(i%5000)*1e-6)
	}
}
