package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunJSON: run --json prints the run's final summary.json, byte for byte,
// and nothing else on stdout; the terminal summary goes to stderr.
func TestRunJSON(t *testing.T) {
	out := t.TempDir()
	scen := writeScenario(t, strings.Replace(quickNotify, "%s", "requests.total > 0", 1))
	code, stdout, stderr := runProgram(t, nil, nil, "run", "--json", "--out", out, "--metrics-addr", "127.0.0.1:0", scen)
	skipIfPlanNotHeld(t, code, out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	runs, _ := os.ReadDir(out)
	if len(runs) != 1 {
		t.Fatalf("%d run directories", len(runs))
	}
	want, err := os.ReadFile(filepath.Join(out, runs[0].Name(), "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(stdout), want) {
		t.Errorf("stdout is not summary.json:\n%s\nwant:\n%s", stdout, want)
	}
	if !strings.Contains(stderr, "run directory: ") || !strings.Contains(stderr, "PASS") {
		t.Errorf("the terminal summary is not on stderr:\n%s", stderr)
	}
	// --json after the scenario, as the usage allows.
	code, stdout, _ = runProgram(t, nil, nil, "run", scen, "--out", out, "--metrics-addr", "127.0.0.1:0", "--json")
	skipIfPlanNotHeld(t, code, out)
	if code != exitOK || !strings.HasPrefix(stdout, "{") || !strings.Contains(stdout, `"verdict": "pass"`) {
		t.Errorf("--json after the scenario: exit %d\n%s", code, stdout)
	}
}
