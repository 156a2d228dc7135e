package render

import (
	"math"
	"strings"
	"testing"
)

// TestDriftLinear: a run of 12 minutes whose request latency grows 60 ms and
// whose delivery latency grows 300 ms per 10 minutes, with jitter and one
// slow outlier minute, gives those slopes within 3 % (the per-window p95 is
// within 0.5 % of the exact one); the error share growing from 0 gives a
// positive slope; the text says "grew … per 10 minutes".
func TestDriftLinear(t *testing.T) {
	const reqSlope, delSlope = 0.06 / 600, 0.3 / 600
	jitter := func(sec float64) float64 { return 0.004 * math.Sin(sec*7.3) }
	reqAt := func(sec float64) float64 {
		v := 0.05 + reqSlope*sec + jitter(sec)
		if sec >= 300 && sec < 360 {
			v += 0.5 // one bad minute: Theil–Sen is not moved by it
		}
		return v
	}
	delAt := func(sec float64) float64 { return 1 + delSlope*sec + jitter(sec) }
	s := analyzed(t, driftRun(12, reqAt, delAt, 0).write(t))
	d := s.Drift
	if d == nil || d.Windows != 12 || d.Method != "theil-sen" {
		t.Fatalf("drift %+v: want 12 windows of a minute, Theil–Sen", d)
	}
	if !within(s.Requests.Latency.P95Slope, reqSlope, 0.03) || !within(d.RequestsLatencyP95, reqSlope, 0.03) {
		t.Errorf("request p95 slope %v (drift %v), want %g s/s ± 3 %%", deref(s.Requests.Latency.P95Slope), deref(d.RequestsLatencyP95), reqSlope)
	}
	if !within(s.Delivery.Latency.P95Slope, delSlope, 0.03) {
		t.Errorf("delivery p95 slope %v, want %g s/s ± 3 %%", deref(s.Delivery.Latency.P95Slope), delSlope)
	}
	if s.Requests.ErrorRateSlope == nil || *s.Requests.ErrorRateSlope != 0 {
		t.Errorf("error share slope %v, want 0 (no errors)", deref(s.Requests.ErrorRateSlope))
	}
	var b strings.Builder
	Terminal(&b, s)
	if !strings.Contains(b.String(), "request p95 grew 5") && !strings.Contains(b.String(), "request p95 grew 6") || !strings.Contains(b.String(), "ms per 10 minutes") {
		t.Errorf("text report lacks the drift in words:\n%s", b.String())
	}
	if err := s.Evaluate([]string{"requests.latency.p95_slope < 1ms/10m", "requests.latency.p95_slope > 50ms/10m"}); err != nil {
		t.Fatal(err)
	}
	if s.Thresholds[0].OK || !s.Thresholds[1].OK {
		t.Errorf("thresholds on a drift of 60 ms per 10 minutes: %+v", s.Thresholds)
	}
}
