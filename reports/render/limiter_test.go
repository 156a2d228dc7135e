package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/summary"
)

// TestLimiterNamedInReports: every report names the limiter as the summary
// does — "limiter: cannot tell" only when the analysis could not tell, never
// for a limiter it named or a limit that was not exercised (the analysis's
// side is reports' TestLimiterVerdictInReports).
func TestLimiterNamedInReports(t *testing.T) {
	for _, tc := range []struct {
		verdict  string
		cannot   bool
		limit    float64
		window   float64
		rejected int64
	}{
		{"sliding window", false, 7, 5, 40},
		{"fixed window", false, 5, 10, 3},
		{"not exercised", false, 0, 0, 0},
		{"cannot tell", true, 0, 0, 2},
	} {
		s := &reports.Summary{Summary: summary.Summary{Verdict: reports.VerdictPass}}
		s.Run.API, s.Run.Scenario = "notify", "limiter"
		s.RateLimit.Limit, s.RateLimit.Window, s.RateLimit.Rejected429 = 100, 60, tc.rejected
		s.RateLimit.Algorithm.Verdict, s.RateLimit.Algorithm.Limit, s.RateLimit.Algorithm.Window = tc.verdict, tc.limit, tc.window
		s.RateLimit.Algorithm.Evidence = []string{"what the analysis read"}
		var text, md, html bytes.Buffer
		Terminal(&text, s)
		if err := (view{s}).WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := (view{s}).WriteHTML(&html); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string]string{"terminal": text.String(), "markdown": md.String(), "html": html.String()} {
			low := strings.ToLower(b)
			said := strings.Contains(low, "limiter: cannot tell") || strings.Contains(low, "limiter: <b>cannot tell") || strings.Contains(low, "limiter: **cannot tell")
			if said != tc.cannot {
				t.Errorf("%s: %s says the limiter cannot be told: %v, want %v", tc.verdict, name, said, tc.cannot)
			}
			if name != "terminal" && !strings.Contains(low, tc.verdict) {
				t.Errorf("%s: %s does not name the limiter", tc.verdict, name)
			}
		}
	}
}
