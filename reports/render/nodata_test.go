package render

import (
	"strings"
	"testing"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// Nothing delivered: the latency percentiles are null, shown as lower bounds
// (every accepted message is censored at the time it was waited for), and a
// threshold on them fails instead of passing on 0; a channel nothing was
// counted on has no data.
func TestNothingDeliveredIsNoData(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Thresholds = []string{"delivery.latency.p95 < 1s", `delivery.by_channel["sms"].p95 < 1s`, "delivery.latency.count == 2"}
	r.send(1, "c1", 1, 200, 0.01)
	r.send(2, "c1", 2, 200, 0.01)
	s, f := build(t, r)
	js := f[rundir.SummaryFile]
	for _, k := range []string{"p50", "p90", "p95", "p99", "max", "mean"} {
		if v := jsonAt(t, js, "delivery", "latency", k); v != nil {
			t.Errorf("delivery.latency.%s = %v, want null", k, v)
		}
	}
	// Sent at 1 and 2 s, deadline 70 s: waited 69 and 68 s.
	if v := jsonAt(t, js, "delivery", "latency", "p95_at_least"); v != 69.0 {
		t.Errorf("delivery.latency.p95_at_least = %v, want 69", v)
	}
	if v, c := jsonAt(t, js, "delivery", "latency", "count"), jsonAt(t, js, "delivery", "latency", "censored"); v != 2.0 || c != 2.0 {
		t.Errorf("delivery.latency.count = %v, censored %v, want 2 and 2", v, c)
	}
	if v := jsonAt(t, js, "delivery", "latency_delivered", "count"); v != 0.0 {
		t.Errorf("delivery.latency_delivered.count = %v, want 0", v)
	}
	if v := jsonAt(t, js, "requests", "latency", "p50"); v != 0.01 {
		t.Errorf("requests.latency.p50 = %v, want 0.01", v)
	}
	if th := threshold(t, s, "delivery.latency.p95 < 1s"); th.OK || !strings.HasPrefix(th.Error, "only a lower bound: delivery.latency.p95 is at least 69.00s (2 of 2 without a final status") {
		t.Errorf("%+v, want a failure on a lower bound", th)
	}
	requireNoData(t, s, `delivery.by_channel["sms"].p95 < 1s`) // an absent channel has no data
	if th := threshold(t, s, "delivery.latency.count == 2"); !th.OK {
		t.Errorf("a count is data: %+v", th)
	}
	if v := jsonAt(t, js, "thresholds").([]any)[0].(map[string]any)["value"]; v != nil {
		t.Errorf("value of a threshold on a lower bound = %v, want null", v)
	}
	for _, name := range []string{"terminal", rundir.MarkdownFile, rundir.HTMLFile} {
		if !strings.Contains(f[name], "delivery latency p50 / p95 / p99") || !strings.Contains(f[name], "(2 of 2 without a final status)") {
			t.Errorf("%s does not say the delivery latency is a lower bound:\n%s", name, f[name])
		}
	}
	if !strings.Contains(f[rundir.JUnitFile], `<failure message="no data: delivery.by_channel.sms.p95: nothing was recorded (count 0)" type="no data">`) {
		t.Errorf("junit.xml does not fail the threshold for no data:\n%s", f[rundir.JUnitFile])
	}
	// summary.json reads back: nulls as zeros, the bounds kept.
	back, err := parseSummary([]byte(js))
	if p := back.Delivery.Latency; err != nil || p.Censored != 2 || p.P95AtLeast == nil || *p.P95AtLeast != 69 || !back.Delivery.Measured {
		t.Errorf("read back: %v, %+v", err, p)
	}
}

// Requests with no answer: the request latency's percentiles that fall
// among them are lower bounds in every report, said as requests with no
// answer (never "0", never "without a final status"), and a threshold on
// one fails.
func TestUnansweredRequestsAreLowerBounds(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Delivery.Via = "none"
	r.meta.Thresholds = []string{"requests.latency.p95 < 10s"}
	r.send(1, "c1", 1, 200, 0.01)
	for seq := int64(2); seq <= 3; seq++ {
		a := r.send(seq, "c1", float64(seq), 0, 2)
		a.Outcome, a.Class = rundir.OutcomeUnknown, rundir.ClassTimeout
	}
	s, f := build(t, r)
	if v := jsonAt(t, f[rundir.SummaryFile], "requests", "latency", "p95"); v != nil {
		t.Errorf("requests.latency.p95 = %v, want null", v)
	}
	if th := threshold(t, s, "requests.latency.p95 < 10s"); th.OK || !strings.Contains(th.Error, "requests.latency.p95 is at least 2.00s (2 of 3 requests with no answer)") {
		t.Errorf("%+v, want a failure on a lower bound", th)
	}
	for _, name := range []string{"terminal", rundir.MarkdownFile, rundir.HTMLFile} {
		if !strings.Contains(f[name], "&gt; 2.00s (2 of 3 with no answer)") && !strings.Contains(f[name], "> 2.00s (2 of 3 with no answer)") {
			t.Errorf("%s does not say the request latency is a lower bound:\n%s", name, f[name])
		}
	}
}

// delivery: none: the delivery counts are null and the reports say "not
// measured"; the 25,000-lost of the issue cannot appear.
func TestDeliveryNotMeasured(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Delivery.Via = "none"
	r.meta.Thresholds = []string{"delivery.lost == 0", "delivery.lost / delivery.expected < 1%"}
	for i := range 5 {
		r.send(int64(i+1), "c1", float64(i), 200, 0.01)
	}
	s, f := build(t, r)
	js := f[rundir.SummaryFile]
	if v := jsonAt(t, js, "delivery", "measured"); v != false {
		t.Errorf("delivery.measured = %v, want false", v)
	}
	for _, k := range summary.DeliveryCounts {
		if v := jsonAt(t, js, "delivery", k); v != nil {
			t.Errorf("delivery.%s = %v, want null", k, v)
		}
	}
	if s.Delivery.Lost != 0 {
		t.Errorf("lost %d in the Go summary, want 0 (not measured)", s.Delivery.Lost)
	}
	requireNoData(t, s, "delivery.lost == 0")
	requireNoData(t, s, "delivery.lost / delivery.expected < 1%")
	for _, name := range []string{"terminal", rundir.MarkdownFile, rundir.HTMLFile} {
		if !strings.Contains(f[name], notMeasured) || strings.Contains(f[name], "lost 5") {
			t.Errorf("%s does not say delivery is %s:\n%s", name, notMeasured, f[name])
		}
	}
	back, err := parseSummary([]byte(js))
	if err != nil || back.Delivery.Measured {
		t.Errorf("read back: %v, measured %v", err, back.Delivery.Measured)
	}
}

// A run that sent nothing has no error rate and no achieved rate: both are
// null in summary.json, "no data" in the reports, and a threshold on either
// fails for no data instead of passing on 0. With sends, both are numbers.
func TestNoRequestsNoRates(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Thresholds = []string{"requests.error_rate < 0.01", "requests.achieved_rate > 0"}
	s, files := build(t, r)
	for _, k := range []string{"error_rate", "achieved_rate"} {
		if v := jsonAt(t, files[rundir.SummaryFile], "requests", k); v != nil {
			t.Errorf("requests.%s = %v, want null", k, v)
		}
	}
	requireNoData(t, s, "requests.error_rate < 0.01")
	requireNoData(t, s, "requests.achieved_rate > 0")
	for _, f := range []string{"terminal", rundir.MarkdownFile, rundir.HTMLFile} {
		if !strings.Contains(files[f], "0 messages, no data errors") || !strings.Contains(files[f], "no data / ") {
			t.Errorf("%s does not say no data for the rates:\n%s", f, files[f])
		}
	}

	r = newRun(rundir.APIMessaging)
	r.send(1, "c1", 0, 202, 0.01)
	r.send(2, "c1", 1, 503, 0.01)
	_, files = build(t, r)
	if v := jsonAt(t, files[rundir.SummaryFile], "requests", "error_rate"); v != 0.5 {
		t.Errorf("requests.error_rate = %v, want 0.5", v)
	}
	if v := jsonAt(t, files[rundir.SummaryFile], "requests", "achieved_rate"); v != 1.0 {
		t.Errorf("requests.achieved_rate = %v, want 1 (2 messages 1 s apart)", v)
	}
}
