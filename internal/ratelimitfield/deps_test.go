package ratelimitfield

import (
	"testing"

	"github.com/msgload/msgload/internal/depcheck"
)

// TestLinksOnlyTheStandardLibrary: the fields' reader links nothing beyond
// the standard library, whoever reads the fields through it.
func TestLinksOnlyTheStandardLibrary(t *testing.T) {
	depcheck.Only(t, "github.com/msgload/msgload/internal/ratelimitfield", []string{
		"github.com/msgload/msgload/internal/ratelimitfield",
	})
}
