package reports

import (
	"strings"
	"testing"
)

func TestCompareRegressions(t *testing.T) {
	base := func() *Summary {
		s := &Summary{Schema: SchemaVersion}
		s.Run.ID = "base"
		s.Requests.Latency = Percentiles{Count: 10, P50: 0.1, P95: 0.2, P99: 0.3}
		s.Delivery.Latency = Percentiles{Count: 10, P50: 1, P95: 2, P99: 3}
		s.Delivery.Via, s.Delivery.Measured = "sink", true
		s.RateLimit.Rejected429 = 10
		s.RateLimit.Algorithm.Verdict = AlgoFixed
		return s
	}
	for _, tc := range []struct {
		name       string
		change     func(*Summary)
		regression bool
		row        string // the row that must carry the verdict
		verdict    string
	}{
		{"identical runs", func(*Summary) {}, false, "delivery latency p95", RowSame},
		{"latency within tolerance", func(s *Summary) { s.Delivery.Latency.P95 = 2.1 }, false, "delivery latency p95", RowWorse},
		{"latency beyond tolerance", func(s *Summary) { s.Delivery.Latency.P95 = 2.5 }, true, "delivery latency p95", RowRegression},
		{"faster is better", func(s *Summary) { s.Requests.Latency.P99 = 0.1 }, false, "request latency p99", RowBetter},
		{"a new lost message", func(s *Summary) { s.Delivery.Lost = 1 }, true, "delivery lost", RowRegression},
		{"a new duplicate delivery", func(s *Summary) { s.Idempotency.DuplicateDeliveries = 1 }, true, "duplicate deliveries", RowRegression},
		{"429s stop: the limit changed", func(s *Summary) { s.RateLimit.Rejected429 = 0 }, true, "429 answers", RowRegression},
		{"more 429s: changed, not a regression", func(s *Summary) { s.RateLimit.Rejected429 = 12 }, false, "429 answers", RowChanged},
		{"another limiter", func(s *Summary) { s.RateLimit.Algorithm.Verdict = AlgoTokenBucket }, true, "limiter", RowRegression},
		// The limiter was not exercised in the new run: no named verdict to differ from.
		{"limiter not exercised", func(s *Summary) { s.RateLimit.Algorithm.Verdict = AlgoNotExercised }, false, "limiter", RowChanged},
		{"more accepted beyond the limit", func(s *Summary) { s.RateLimit.ExcessAccepted = 3 }, true, "excess accepted", RowRegression},
		{"nothing delivered: no data is a regression", func(s *Summary) { s.Delivery.Latency = Percentiles{} }, true, "delivery latency p95", RowRegression},
		{"delivery no longer measured", func(s *Summary) { s.Delivery.Via, s.Delivery.Measured = "none", false }, true, "delivery lost", RowRegression},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			n.Run.ID = "new"
			tc.change(n)
			c := Compare(base(), n, Tolerance{Latency: 0.1})
			if c.Regression != tc.regression {
				t.Errorf("regression %v, want %v: %+v", c.Regression, tc.regression, c.Rows)
			}
			found := false
			for _, r := range c.Rows {
				if r.Name == tc.row {
					found = true
					if r.Verdict != tc.verdict {
						t.Errorf("row %q: %+v, want %s", tc.row, r, tc.verdict)
					}
				}
			}
			if !found {
				t.Errorf("no row %q", tc.row)
			}
			var text, md strings.Builder
			if err := c.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := c.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text.String(), "REGRESSION") != tc.regression || strings.Contains(md.String(), "**regression**") != tc.regression {
				t.Errorf("the written verdict disagrees:\n%s\n%s", text.String(), md.String())
			}
		})
	}
}

func TestParseSummaryRefuses(t *testing.T) {
	if _, err := ParseSummary([]byte(`{"ok":true}`)); err == nil {
		t.Error("a summary without a schema version must be refused")
	}
	if _, err := ParseSummary([]byte(`{"schema":3}`)); err == nil {
		t.Error("a newer schema must be refused")
	}
}
