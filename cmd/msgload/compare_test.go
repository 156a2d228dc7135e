package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
)

func TestCompareTolerance(t *testing.T) {
	tol, err := compareTolerance(map[string]string{"latency-tolerance": "15%", "request-floor": "2ms", "delivery-floor": "1s", "min-samples": "30"})
	want := reports.DefaultTolerance()
	want.Latency, want.RequestFloor, want.DeliveryFloor = 0.15, 0.002, 1
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
	// Two real runs on a shared machine: the second may really be slower (a
	// busy CI host), so a regression is allowed, but only in latency rows —
	// never in a count of a working service.
	code, o, e := runProgram(t, nil, nil, "compare", a, b, "--format", "markdown")
	if code != exitOK && code != exitThresholds || !strings.Contains(o, "tests at 99%: Mann–Whitney U") || !strings.Contains(o, "| Note |") {
		t.Errorf("compare: exit %d\n%s\n%s", code, o, e)
	}
	for _, line := range strings.Split(o, "\n") {
		if strings.Contains(line, "| regression |") && !strings.Contains(line, "latency") {
			t.Errorf("compare of two runs of one scenario: a regression outside latency: %s", line)
		}
	}
	// --json: one object, every row saying what decided it; the median row
	// has the rank test's p-value and the interval of the change.
	code, o, e = runProgram(t, nil, nil, "compare", a, b, "--json")
	if code == exitThresholds {
		code = exitOK // latency only, checked above
	}
	var got struct {
		Regression  *bool
		Comparisons []struct {
			Part string
			Rows []struct {
				Name, Verdict string
				DecidedBy     string `json:"decided_by"`
				P             *float64
				Interval      *struct{ Confidence float64 }
			}
		}
	}
	if err := json.Unmarshal([]byte(o), &got); code != exitOK || err != nil || got.Regression == nil || len(got.Comparisons) != 1 {
		t.Fatalf("compare --json: exit %d, %v\n%s\n%s", code, err, o, e)
	}
	for _, r := range got.Comparisons[0].Rows {
		if r.DecidedBy == "" {
			t.Errorf("row %+v: nothing says what decided it", r)
		}
		if r.Name == "request latency p50" && (r.P == nil || r.Interval == nil || r.Interval.Confidence != 0.99) {
			t.Errorf("row %+v: want the Mann–Whitney p and the 99%% interval", r)
		}
	}
	// Only summary.json, no raw files beside it: nothing can be tested, the
	// figures are compared by the rules — against the run it came from, the
	// same.
	lone := filepath.Join(t.TempDir(), "summary.json")
	data, _ := os.ReadFile(filepath.Join(b, "summary.json"))
	os.WriteFile(lone, data, 0o644)
	if code, o, e := runProgram(t, nil, nil, "compare", b, lone); code != exitOK || !strings.Contains(o, "no regression") {
		t.Errorf("compare with a lone summary.json: exit %d\n%s\n%s", code, o, e)
	}
	// --min-samples of old scripts is accepted, and said to be unused.
	if code, o, e := runProgram(t, nil, nil, "compare", b, b, "--min-samples", "30"); code != exitOK || !strings.Contains(e, "--min-samples is no longer used") {
		t.Errorf("compare --min-samples: exit %d\n%s\n%s", code, o, e)
	}
}
