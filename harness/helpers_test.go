package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/msgload/msgload/scenarios"
)

// runSource parses src as the scenario file name in dir (no environment) and
// runs it into a temporary directory; a parse or run error fails the test. It
// returns the first part and what the run wrote on stderr.
func runSource(t *testing.T, name, dir, src string) (Part, string) {
	t.Helper()
	s, err := scenarios.Parse(name, dir, []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	return res.Parts[0], stderr.String()
}

// requireGreen fails the test unless the part ran and every threshold held.
func requireGreen(t *testing.T, p Part, stderr string) {
	t.Helper()
	if p.Err != nil || !p.Summary.OK() {
		var b strings.Builder
		if p.Summary != nil {
			p.Summary.Terminal(&b)
		}
		t.Fatalf("run failed: %v\n%s\nstderr:\n%s", p.Err, b.String(), stderr)
	}
}
