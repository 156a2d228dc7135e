package scenarios

import (
	"testing"

	"github.com/msgload/msgload/internal/depcheck"
)

// TestLinksOnlyTheSummaryContract holds the layering: loading and checking a
// scenario links the summary contract (reports/summary: the summary's
// fields, the threshold check) and nothing else of the reports — no analysis,
// no writer, none of what they link (vegeta's library, plotting).
func TestLinksOnlyTheSummaryContract(t *testing.T) {
	depcheck.Forbidden(t, "github.com/msgload/msgload/scenarios", []string{
		"github.com/msgload/msgload/reports",
		"github.com/tsenart/vegeta",
		"gonum.org/",
	}, []string{"github.com/msgload/msgload/reports/summary"})
}
