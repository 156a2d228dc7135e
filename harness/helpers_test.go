package harness

import (
	"context"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/scenarios"
)

// runSource parses src as the scenario file name in dir (no environment) and
// runs it into a temporary directory, with each of set applied to its
// options; a parse or run error fails the test (or the benchmark). It
// returns the first part and what the run wrote on stderr.
func runSource(t testing.TB, name, dir, src string, set ...func(*Options)) (Part, string) {
	t.Helper()
	s, err := scenarios.Parse(name, dir, []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	o := Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr}
	for _, f := range set {
		f(&o)
	}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return res.Parts[0], stderr.String()
}

// requireGreen fails the test unless the part ran and every threshold held.
// When the machine could not hold the plan the verdict must say so, and the
// test, which needs the plan held, stops there (skipUnlessPlanHeld).
func requireGreen(t *testing.T, p Part, stderr string) {
	t.Helper()
	if p.Err == nil && p.Summary != nil {
		skipUnlessPlanHeld(t, p.Summary)
	}
	if p.Err != nil || !p.Summary.OK() {
		var b strings.Builder
		if p.Summary != nil {
			render.Terminal(&b, p.Summary)
		}
		t.Fatalf("run failed: %v\n%s\nstderr:\n%s", p.Err, b.String(), stderr)
	}
}

// skipUnlessPlanHeld stops a test that needs its load applied as planned
// when the load generator could not apply it (a busy machine): the verdict is
// then incomplete with only environment reasons naming the generator's
// limit, which is what a run on that machine must say. Tests never assume the
// machine keeps up.
func skipUnlessPlanHeld(t *testing.T, s *reports.Summary) {
	t.Helper()
	if !planNotHeld(s) {
		return
	}
	t.Skipf("the load generator could not hold the plan on this machine, and the verdict says so: %s", strings.Join(s.VerdictReasons, "; "))
}

// planNotHeld reports whether s says the load generator could not apply the
// plan, and nothing else: incomplete, every reason an environment reason
// naming the generator's limit (its CPU, its in-flight cap) or the embedded
// simulator's lag behind its own schedule (the same busy machine).
func planNotHeld(s *reports.Summary) bool {
	if s == nil || s.Verdict != reports.VerdictIncomplete || len(s.Reasons) == 0 {
		return false
	}
	for _, r := range s.Reasons {
		if r.Whose != reports.WhoseEnvironment || !reports.GeneratorLimit(r.Limit) && r.Limit != reports.LimitSimLag {
			return false
		}
	}
	return true
}
