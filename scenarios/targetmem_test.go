package scenarios

import (
	"errors"
	"strings"
	"testing"
)

// TestTargetMetrics: target.metrics and target.memoryMetric are checked
// where they are written, the metric defaults to the process collector's
// resident memory, and the endpoint's password is redacted.
func TestTargetMetrics(t *testing.T) {
	src := `api: messaging
target: { baseUrl: https://api.example.com, metrics: "ftp://x/metrics", memoryMetric: 9lives }
load: { rate: 1/s, requests: 5 }
`
	_, err := Parse("m.yaml", "", []byte(src), env(nil))
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("want Errors, got %v", err)
	}
	for _, w := range []string{
		`m.yaml:2:54: target.metrics: "ftp://x/metrics" is not an http or https URL`,
		`m.yaml:2:87: target.memoryMetric: "9lives" is not a Prometheus metric name`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
	_, err = Parse("m.yaml", "", []byte("api: messaging\ntarget: { baseUrl: https://api.example.com, memoryMetric: jvm_memory_used_bytes }\nload: { rate: 1/s, requests: 5 }\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "m.yaml:2:59: target.memoryMetric: needs target.metrics") {
		t.Errorf("memoryMetric without metrics: %v", err)
	}

	s, err := Parse("m.yaml", "", []byte(`api: messaging
target: { baseUrl: https://api.example.com, metrics: "https://scraper:pw-123@api.example.com:9100/metrics" }
auth: { login: a, password: b }
load: { rate: 1/s, requests: 5 }
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Target.MemoryMetricName(); got != DefaultMemoryMetric {
		t.Errorf("memory metric %q, want the default %q", got, DefaultMemoryMetric)
	}
	b, err := s.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "pw-123") || strings.Contains(s.Target.RedactedMetrics(), "pw-123") {
		t.Errorf("the metrics endpoint's password in the redacted scenario:\n%s", b)
	}
	if !strings.Contains(string(b), "metrics: https://scraper:") {
		t.Errorf("redacted scenario lost target.metrics:\n%s", b)
	}
}
