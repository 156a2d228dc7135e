package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
)

func TestCompareTolerance(t *testing.T) {
	tol, err := compareTolerance(map[string]string{"latency-tolerance": "15%", "request-floor": "2ms", "delivery-floor": "1s", "min-samples": "30"})
	want := reports.DefaultTolerance()
	want.Latency, want.RequestFloor, want.DeliveryFloor, want.MinSamples = 0.15, 0.002, 1, 30
	if err != nil || tol != want {
		t.Errorf("%+v, %v; want %+v", tol, err, want)
	}
	for _, bad := range [][]string{{"--min-samples", "many"}, {"--request-floor", "5"}, {"--delivery-floor", "-1s"}, {"--latency-tolerance", "x"}} {
		code, _, errOut := runProgram(t, nil, nil, append([]string{"compare", "a", "b"}, bad...)...)
		if code != exitBadInput || !strings.Contains(errOut, bad[0]) {
			t.Errorf("compare %v: exit %d, %q; want %d naming the flag", bad, code, errOut, exitBadInput)
		}
	}
}

// TestCompareCommandRuns: two runs of one scenario compare with the noise
// rules (the heading says them), and a summary.json copied away from its raw
// files is compared without the test.
func TestCompareCommandRuns(t *testing.T) {
	out := t.TempDir()
	scen := writeScenario(t, strings.Replace(quickNotify, "%s", "requests.total > 0", 1))
	for range 2 {
		code, o, e := runProgram(t, nil, nil, "run", "--out", out, "--metrics-addr", "127.0.0.1:0", scen)
		skipIfPlanNotHeld(t, code, out)
		if code != exitOK {
			t.Fatalf("run: exit %d\n%s\n%s", code, o, e)
		}
	}
	runs, _ := os.ReadDir(out)
	if len(runs) != 2 {
		t.Fatalf("%d runs", len(runs))
	}
	a, b := filepath.Join(out, runs[0].Name()), filepath.Join(out, runs[1].Name())
	code, o, e := runProgram(t, nil, nil, "compare", a, b, "--format", "markdown")
	if code != exitOK || !strings.Contains(o, "95% bootstrap interval") || !strings.Contains(o, "| Note |") {
		t.Errorf("compare: exit %d\n%s\n%s", code, o, e)
	}
	// Only summary.json, no raw files beside it: nothing can be tested, and
	// ten requests are too few anyway (inconclusive, never a regression).
	lone := filepath.Join(t.TempDir(), "summary.json")
	data, _ := os.ReadFile(filepath.Join(b, "summary.json"))
	os.WriteFile(lone, data, 0o644)
	if code, o, e := runProgram(t, nil, nil, "compare", a, lone); code != exitOK {
		t.Errorf("compare with a lone summary.json: exit %d\n%s\n%s", code, o, e)
	}
}
