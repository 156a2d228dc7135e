package harness

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/scenarios"
)

// compareSource is a messaging run against the embedded simulator with a fixed
// seed; FAULTS is replaced by the simulator's faults.
const compareSource = `
name: compare
api: messaging
target: embedded
sink: embedded
load: { profile: constant, rate: 50/s, requests: REQUESTS }
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
func compareRun(t *testing.T, requests int, faults string) reports.Run {
	t.Helper()
	src := strings.NewReplacer("FAULTS", faults, "REQUESTS", strconv.Itoa(requests)).Replace(compareSource)
	p, stderr := runSource(t, "compare.yaml", t.TempDir(), src)
	requireGreen(t, p, stderr)
	smp, err := reports.ReadSamples(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return reports.Run{Summary: p.Summary, Samples: smp}
}

// TestCompareSimulatorRuns: two runs of one scenario and seed are the same;
// a run whose every answer the simulator delays by 50 ms is a regression,
// of 120 messages and of 24 (compare judges at any n), the row saying which
// test decided with its p-value and interval.
func TestCompareSimulatorRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("five runs of a few seconds each")
	}
	base := compareRun(t, 120, "")
	again := compareRun(t, 120, "")
	slow := compareRun(t, 120, "faults: { latency: 50ms }")
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
	// The median moves by 50 ms on every answer; the p95 of 120 values is
	// bounded above only by the largest (one slow request of a loaded machine
	// may hide it) and a p99 not at all, so neither is required.
	wantMedianRegression(t, c)
	t.Logf("50 ms injected:\n%s", show(c))

	// 23 messages against 24 delayed: each of the 24 answers slower than each
	// of the 23 (Mann–Whitney p ≈ 1e-13).
	small, smallSlow := compareRun(t, 23, ""), compareRun(t, 24, "faults: { latency: 50ms }")
	c = reports.CompareRuns(small, smallSlow, tol)
	if !c.Regression {
		t.Errorf("24 answers 50 ms slower: no regression\n%s", show(c))
	}
	wantMedianRegression(t, c)
	t.Logf("24 messages, 50 ms injected:\n%s", show(c))
}

// wantMedianRegression requires the request latency p50 row of c to be a
// regression, noted with the rank test and the interval that decided it.
func wantMedianRegression(t *testing.T, c reports.Comparison) {
	t.Helper()
	note := regexp.MustCompile(`^Mann–Whitney p = [0-9.e-]+ \((exact|normal approximation)\); p50 \+\d+\.\dms \[\+\d+\.\dms, \+\d+\.\dms\] \(99%, exact\)$`)
	for _, r := range c.Rows {
		if r.Name == "request latency p50" && (r.Verdict != reports.RowRegression || !note.MatchString(r.Note)) {
			t.Errorf("50 ms more on every answer: %+v, want a regression noted like %s", r, note)
		}
	}
}

// TestCompareSmokeRuns: three runs of the built-in smoke scenario compared
// pairwise, part by part, are no regression.
func TestCompareSmokeRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of smoke, about 10 s each")
	}
	runs := make([]map[string]reports.Run, 3)
	for i := range runs {
		s, err := scenarios.Load("smoke", func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr, Version: "test"})
		if err != nil {
			t.Fatalf("Run: %v\n%s", err, stderr.String())
		}
		runs[i] = map[string]reports.Run{}
		for _, p := range res.Parts {
			requireGreen(t, p, stderr.String())
			smp, err := reports.ReadSamples(p.Dir)
			if err != nil {
				t.Fatal(err)
			}
			runs[i][p.Name] = reports.Run{Summary: p.Summary, Samples: smp}
		}
	}
	for _, pair := range [][2]int{{0, 1}, {1, 2}, {0, 2}} {
		for name, b := range runs[pair[0]] {
			c := reports.CompareRuns(b, runs[pair[1]][name], reports.DefaultTolerance())
			var text strings.Builder
			c.WriteText(&text)
			if c.Regression {
				t.Errorf("smoke %d → %d, part %s: a regression\n%s", pair[0], pair[1], name, text.String())
			}
		}
	}
}
