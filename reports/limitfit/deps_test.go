package limitfit_test

import (
	"testing"

	"github.com/msgload/msgload/internal/depcheck"
)

// TestLinksOnlyTheStandardLibrary: the fitter is computation over plain
// inputs — it links nothing of msgload's or anyone else's beyond the
// standard library (no reports, no vegeta, no plotting), so characterise
// and tests can fit a limiter without the analysis or the writers.
func TestLinksOnlyTheStandardLibrary(t *testing.T) {
	depcheck.Only(t, "github.com/msgload/msgload/reports/limitfit", []string{
		"github.com/msgload/msgload/reports/limitfit",
	})
}
