package summary

import (
	"testing"

	"github.com/msgload/msgload/internal/depcheck"
)

// TestLinksOnlyTheExpressionEngine: the contract links, beyond the standard
// library, only the threshold language with its expression engine and the
// run directory's vocabulary — what scenario validation may pay for.
func TestLinksOnlyTheExpressionEngine(t *testing.T) {
	depcheck.Only(t, "github.com/msgload/msgload/reports/summary", []string{
		"github.com/msgload/msgload/reports/summary",
		"github.com/msgload/msgload/thresholds",
		"github.com/msgload/msgload/rundir",
		"github.com/msgload/msgload/internal/suggest",
		"github.com/expr-lang/expr",
	})
}
