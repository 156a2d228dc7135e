package reports

import "testing"

// TestThresholdTextUnitsAndHeadroom: a threshold reads with its unit, the
// relation that held (or its negation when it failed) and the headroom, or by
// how much it missed — never a bare float.
func TestThresholdTextUnitsAndHeadroom(t *testing.T) {
	for _, tc := range []struct {
		t    Threshold
		want string
	}{
		{Threshold{Expr: "delivery.latency.p95 < 5s", Value: 2.255548, OK: true}, "delivery.latency.p95 2.26 s < 5 s (headroom 55 %)"},
		{Threshold{Expr: "requests.latency.p99 <= 200ms", Value: 0.25, OK: false}, "requests.latency.p99 250.0 ms > 200 ms (over by 25 %)"},
		{Threshold{Expr: "delivery.latency.p95 < 30", Value: 10, OK: true}, "delivery.latency.p95 10.00 s < 30 s (headroom 67 %)"},
		{Threshold{Expr: "requests.error_rate < 1%", Value: 0.002, OK: true}, "requests.error_rate 0.2 % < 1 % (headroom 80 %)"},
		{Threshold{Expr: "delivery.lost / delivery.expected < 5%", Value: 0.05, OK: false}, "delivery.lost / delivery.expected 5 % ≥ 5 % (at the limit)"},
		{Threshold{Expr: "delivery.lost == 0", Value: 3, OK: false}, "delivery.lost 3 ≠ 0"},
		{Threshold{Expr: `requests.codes["429"] > 0`, Value: 60, OK: true}, `requests.codes["429"] 60 > 0`},
		{Threshold{Expr: "requests.accepted >= 100", Value: 80, OK: false}, "requests.accepted 80 < 100 (under by 20 %)"},
		{Threshold{Expr: "len(rate_limit.clients) == 2 && ok", Value: 1, OK: true}, "len(rate_limit.clients) == 2 && ok holds (value 1)"},
		{Threshold{Expr: "delivery.lost == 0", NoData: []string{"delivery.lost"}, Error: "no data: delivery.lost: delivery was not measured"}, "delivery.lost == 0 — no data: delivery.lost: delivery was not measured"},
	} {
		if got := ThresholdText(tc.t); got != tc.want {
			t.Errorf("%s (value %v, ok %v): %q, want %q", tc.t.Expr, tc.t.Value, tc.t.OK, got, tc.want)
		}
	}
}
