package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
)

// A characterisation's junit.xml follows the strict schema, as a run's does.
func TestContractJUnitValidates(t *testing.T) {
	c := &reports.Contract{Name: "n", Start: "2026-11-26T06:00:00.5Z", Findings: []reports.Finding{
		{Rule: "a", Value: "1", Verdict: reports.VerdictPass},
		{Rule: "b", Value: "2", Expected: "3", Verdict: verdictFail, Reason: "expected 3, found 2", Evidence: []string{"e"}},
		{Rule: "c", Value: reports.CannotTell, Expected: "x", Verdict: reports.VerdictIncomplete, Reason: "cannot tell"},
	}}
	c.Judge()
	path := filepath.Join(t.TempDir(), "junit.xml")
	var b strings.Builder
	if err := c.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	validateJUnit(t, path)
}
