package message

import (
	"os/exec"
	"strings"
	"testing"
)

// forbiddenDeps are modules the body generator must not link: it runs for
// every request on the attack's hot path, and these belong to the reports
// (charts, histograms, quantiles) and to the threshold language.
var forbiddenDeps = []string{
	"gonum.org/",                    // gonum and gonum/plot: the report's charts and statistics
	"github.com/expr-lang/expr",     // threshold expressions
	"github.com/influxdata/tdigest", // quantiles (vegeta's lib links it)
	"github.com/HdrHistogram/",      // histograms
	"github.com/tsenart/vegeta",     // its lib links tdigest
	"github.com/msgload/msgload/reports",
	"github.com/msgload/msgload/thresholds",
}

// TestNoHeavyDeps fails when the package links a forbidden module, directly or
// through what it imports (the scenario loader once pulled in the reports).
func TestNoHeavyDeps(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	const self = "github.com/msgload/msgload/attack/message"
	if len(deps) == 0 || deps[len(deps)-1] != self {
		t.Fatalf("go list -deps did not list %s last: %q", self, deps)
	}
	for _, d := range deps {
		for _, bad := range forbiddenDeps {
			if strings.HasPrefix(strings.ToLower(d), strings.ToLower(bad)) {
				t.Errorf("%s links %s (forbidden: %s)", self, d, bad)
			}
		}
	}
}
