package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// onlyRun is the one run directory under out.
func onlyRun(t *testing.T, out string) string {
	t.Helper()
	runs, _ := os.ReadDir(out)
	if len(runs) != 1 {
		t.Fatalf("%d run directories in %s, want 1", len(runs), out)
	}
	return filepath.Join(out, runs[0].Name())
}

// TestRunAgainstBaseline: msgload run --baseline of an earlier run of the
// same scenario inlines the comparison in the card (terminal, report.md)
// and writes compare.json; a baseline that cannot be compared is refused,
// naming its path, before anything is sent; msgload report takes it too
// (here by its variable), and a report without it removes compare.json.
func TestRunAgainstBaseline(t *testing.T) {
	out := t.TempDir()
	scen := writeScenario(t, strings.Replace(quickNotify, "%s", "requests.total > 0", 1))
	code, o, e := runProgram(t, nil, nil, "run", "--out", out, "--metrics-addr", "127.0.0.1:0", scen)
	skipIfPlanNotHeld(t, code, out)
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, o, e)
	}
	base := onlyRun(t, out)

	other := writeScenario(t, strings.Replace(quickNotify, "%s", "requests.total > 1", 1))
	for _, tc := range []struct{ scen, baseline, want string }{
		{scen, filepath.Join(out, "nope"), "does not exist"},
		{scen, t.TempDir(), "not a run directory"},
		{other, base, "ran another scenario"},
	} {
		out2 := t.TempDir()
		code, o, e := runProgram(t, nil, nil, "run", "--out", out2, "--metrics-addr", "", tc.scen, "--baseline", tc.baseline)
		if code != exitBadInput || !strings.Contains(e, tc.baseline) || !strings.Contains(e, tc.want) {
			t.Errorf("run --baseline %s: exit %d, want %d naming the path and %q\n%s\n%s", tc.baseline, code, exitBadInput, tc.want, o, e)
		}
		if runs, _ := os.ReadDir(out2); len(runs) != 0 {
			t.Errorf("run --baseline %s: a run directory was made: the attack started before the baseline was refused", tc.baseline)
		}
	}
	if code, _, e := runProgram(t, nil, nil, "run", "--out", t.TempDir(), scen, "--baseline-gate"); code != exitBadInput || !strings.Contains(e, "--baseline-gate needs --baseline") {
		t.Errorf("--baseline-gate alone: exit %d\n%s", code, e)
	}

	out3 := t.TempDir()
	code, o, e = runProgram(t, nil, nil, "run", "--out", out3, "--metrics-addr", "127.0.0.1:0", scen, "--baseline", base)
	skipIfPlanNotHeld(t, code, out3)
	baseID := filepath.Base(base)
	card := "Against baseline " + baseID + " (" + base + "): "
	if code != exitOK || !strings.Contains(o, card) {
		t.Fatalf("run --baseline: exit %d, want the card to say %q\n%s\n%s", code, card, o, e)
	}
	dir := onlyRun(t, out3)
	var cmp reports.Comparison
	b, err := os.ReadFile(filepath.Join(dir, rundir.CompareFile))
	if err != nil || json.Unmarshal(b, &cmp) != nil || cmp.Base != baseID || cmp.New != filepath.Base(dir) || len(cmp.Rows) == 0 {
		t.Fatalf("compare.json: %v %+v\n%s", err, cmp, b)
	}
	if md, _ := os.ReadFile(filepath.Join(dir, rundir.MarkdownFile)); !strings.Contains(string(md), card) {
		t.Errorf("report.md lacks %q:\n%s", card, md)
	}

	code, o, e = runProgram(t, map[string]string{"MSGLOAD_REPORT_BASELINE": base}, nil, "report", dir)
	if code != exitOK || !strings.Contains(o, card) {
		t.Errorf("report with MSGLOAD_REPORT_BASELINE: exit %d\n%s\n%s", code, o, e)
	}
	code, o, e = runProgram(t, nil, nil, "report", dir, "--baseline", filepath.Join(out, "nope"))
	if code != exitBadInput || !strings.Contains(e, filepath.Join(out, "nope")) {
		t.Errorf("report --baseline of a missing directory: exit %d\n%s\n%s", code, o, e)
	}
	if code, _, e := runProgram(t, nil, nil, "report", "--merge", t.TempDir(), dir, "--baseline", base); code != exitBadInput || !strings.Contains(e, "not --merge") {
		t.Errorf("report --merge --baseline: exit %d\n%s", code, e)
	}
	if code, o, e := runProgram(t, nil, nil, "report", dir); code != exitOK || strings.Contains(o, "Against baseline") {
		t.Errorf("report without --baseline: exit %d\n%s\n%s", code, o, e)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.CompareFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("report without --baseline left %s: %v", rundir.CompareFile, err)
	}
}
