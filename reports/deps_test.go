package reports

import (
	"testing"

	"github.com/msgload/msgload/internal/depcheck"
)

// TestAnalysisLinksNoWriter holds the split of the reports: the analysis
// links none of what report.html and its charts are written with — Go's
// HTML and text templates (reports/render's html.go, plot.go, whole.go,
// contracthtml.go), the writers' package itself, nor a plotting library
// (gonum/plot drew the charts before uPlot) — so a program that only
// analyses a run (the live thresholds, `msgload compare`) pays for none.
func TestAnalysisLinksNoWriter(t *testing.T) {
	const self = "github.com/msgload/msgload/reports"
	depcheck.NotLinked(t, self, []string{"html/template", "text/template", "github.com/msgload/msgload/reports/render"})
	depcheck.Forbidden(t, self, []string{"gonum.org/", "github.com/msgload/msgload/reports/render"}, nil)
}
