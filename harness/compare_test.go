package harness

import (
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
)

// compareSource is a messaging run against the embedded simulator with a fixed
// seed; FAULTS is replaced by the simulator's faults.
const compareSource = `
name: compare
api: messaging
target: embedded
sink: embedded
load: { profile: constant, rate: 50/s, requests: 120 }
message:
  recipient: "+7999{0000000-0000999}"
  text: "compare {{.Seq}}"
  scenario: [ { channel: sms, sender: msgload } ]
delivery: { via: sink, grace: 10s }
sim:
  seed: 14
  profiles: { sms: { median: 100ms, p95: 300ms, outcomes: { DELIVERED: 100% } } }
  FAULTS
thresholds: [ "delivery.lost == 0" ]
`

// compareRun runs compareSource with faults and returns the run for compare.
func compareRun(t *testing.T, faults string) reports.Run {
	t.Helper()
	p, stderr := runSource(t, "compare.yaml", t.TempDir(), strings.Replace(compareSource, "FAULTS", faults, 1))
	requireGreen(t, p, stderr)
	smp, err := reports.ReadSamples(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return reports.Run{Summary: p.Summary, Samples: smp}
}

// TestCompareSimulatorRuns: two runs of one scenario and seed are the same;
// a run whose every answer the simulator delays by 50 ms is a regression.
func TestCompareSimulatorRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of a few seconds each")
	}
	base := compareRun(t, "")
	again := compareRun(t, "")
	slow := compareRun(t, "faults: { latency: 50ms }")
	show := func(c reports.Comparison) string {
		var b strings.Builder
		c.WriteText(&b)
		return b.String()
	}
	tol := reports.DefaultTolerance()
	if c := reports.CompareRuns(base, again, tol); c.Regression {
		t.Errorf("the same scenario and seed: a regression\n%s", show(c))
	} else {
		t.Logf("same scenario and seed:\n%s", show(c))
	}
	c := reports.CompareRuns(base, slow, tol)
	if !c.Regression {
		t.Errorf("50 ms more on every answer: no regression\n%s", show(c))
	}
	// The median moves by 50 ms on every answer; a p99 of 120 values may be one
	// slow request of a loaded machine in either run, so it is not required.
	for _, r := range c.Rows {
		if (r.Name == "request latency p50" || r.Name == "request latency p95") && r.Verdict != reports.RowRegression {
			t.Errorf("50 ms more on every answer: %+v, want a regression", r)
		}
	}
	t.Logf("50 ms injected:\n%s", show(c))
}
