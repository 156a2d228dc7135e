package reports

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports/summary"
)

func TestThresholds(t *testing.T) {
	s := &Summary{Summary: summary.Summary{Schema: schemaVersion}}
	s.Delivery.Via, s.Delivery.Measured = "sink", true
	s.Delivery.Latency.Count, s.Delivery.Latency.P95 = 150, 12
	s.Delivery.Lost, s.Delivery.Expected = 1, 200
	s.Requests.Codes = map[string]int64{"200": 199, "429": 3}
	s.RateLimit.ExcessAccepted, s.RateLimit.Window = 4, 60
	s.RateLimit.Algorithm.Verdict = algoFixed
	s.Delivery.ByChannel = map[string]percentiles{"sms": {Count: 3, P99: 40}}
	s.RateLimit.Clients = []clientLimit{{ClientID: "a", Rejected429: 3}, {ClientID: "b", Rejected429: 4}}
	for _, tc := range []struct {
		expr  string
		ok    bool
		value float64
	}{
		{"delivery.latency.p95 < 30s", true, 12},                    // duration literal against seconds
		{"delivery.latency.p95 < 500ms", false, 12},                 // and failing
		{"delivery.lost / delivery.expected < 1%", true, 0.005},     // percentage of a ratio
		{`requests.codes["429"] > 0`, true, 3},                      // map lookup by code
		{`requests.codes["503"] == 0`, true, 0},                     // a code never seen reads as zero
		{"rate_limit.excess_accepted == 0", false, 4},               // a failed equality reports the value
		{`rate_limit.algorithm.verdict == "fixed window"`, true, 1}, // strings compare; value 1 for a verdict that holds
		{`delivery.by_channel["sms"].p99 <= 1m`, true, 40},          // per channel
		{"delivery.expected > 0 && delivery.lost == 0", false, 0},   // bare condition: value 0 when false
	} {
		c, err := summary.CompileThreshold(tc.expr)
		if err != nil {
			t.Errorf("%q: %v", tc.expr, err)
			continue
		}
		got := evalThreshold(c, s)
		if got.OK != tc.ok || got.Value != tc.value || got.Error != "" {
			t.Errorf("%q: got %+v, want ok %v value %v", tc.expr, got, tc.ok, tc.value)
		}
	}
}

func TestBadThresholds(t *testing.T) {
	for _, src := range []string{
		"delivery.nope < 1",         // unknown field: caught at compile time
		"delivery.latency.p95",      // not a yes/no
		"delivery.latency.p95 <",    // syntax
		"delivery.latency.p95 < 3x", // unknown unit
		`run.id == "open`,           // unterminated string
	} {
		_, err := summary.CompileThreshold(src)
		if !errors.Is(err, summary.ErrBadThreshold) {
			t.Errorf("%q: got %v, want ErrBadThreshold", src, err)
		}
	}
	// A field that is absent from this run (no truth.json) fails with an error
	// instead of passing.
	var none Summary
	c, err := summary.CompileThreshold("truth.true_latency.p95 < 1s")
	if err != nil {
		t.Fatal(err)
	}
	if th := evalThreshold(c, &none); th.OK || th.Error == "" {
		t.Errorf("threshold on a missing truth: %+v", th)
	}
	// Nothing expected: 0/0 is NaN and the share threshold fails rather than passes.
	c, err = summary.CompileThreshold("delivery.lost / delivery.expected < 1%")
	if err != nil {
		t.Fatal(err)
	}
	if th := evalThreshold(c, &none); th.OK {
		t.Errorf("a share of nothing must not pass: %+v", th)
	}
	// Evaluate reports every bad expression at once and leaves the summary alone.
	s := &Summary{}
	err = s.Evaluate([]string{"a.b < 1", "delivery.lost == 0", "c <"})
	if !errors.Is(err, summary.ErrBadThreshold) || s.Thresholds != nil {
		t.Fatalf("Evaluate: %v, thresholds %v", err, s.Thresholds)
	}
}

// A mistyped field is explained in summary.json's names, with the nearest.
func TestCheckThresholdExplains(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"delivery.lostt == 0", "no field lostt, did you mean lost? (it has: "},
		{"deliveryy.lost == 0", "unknown name deliveryy, did you mean delivery? (it has: delivery, drift, idempotency,"},
		{"requests.latency.p9 < 1", "no field p9, did you mean p90? (it has: censored, count, max, mean, p50, p90, p95, p95_slope, p99)"},
		{"rate_limit.clients[0].zzzzzzzz > 1", "no field zzzzzzzz (it has: accepted, client_id,"},
		// a name written without its object is found below the top
		{"lost == 0", "unknown name lost, did you mean delivery.lost? (it has: delivery,"},
		{"excess_acepted == 0", "unknown name excess_acepted, did you mean rate_limit.excess_accepted? (it has: "},
		{"zzzzzzzz == 0", "unknown name zzzzzzzz (it has: delivery,"},
	} {
		err := summary.CheckThresholdFor(tc.src, summary.Scope{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "reports.") {
			t.Errorf("%s: %v; want it to say %q in summary.json's names", tc.src, err, tc.want)
		}
	}
	if err := summary.CheckThresholdFor("delivery.latency.p95 < 30s && rate_limit.excess_accepted == 0", summary.Scope{}); err != nil {
		t.Errorf("a good threshold: %v", err)
	}
}
