package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// TestBaselineOnTheCard: a run compared with a baseline shows the
// comparison on its card in every report and writes compare.json; a
// regression changes no verdict unless the user asked it to gate, and then
// it is a service reason (fail) naming the figure. A build without a
// baseline removes compare.json (the directory's files are its last build's).
func TestBaselineOnTheCard(t *testing.T) {
	baseSum, _ := build(t, passingRun())
	baseSum.Run.ID = "base-run"
	baseSum.RateLimit.Rejected429 = 5 // the baseline was limited; the new run is not: a regression
	base := reports.Run{Summary: baseSum}

	dir := passingRun().write(t)
	s, _ := buildDir(t, dir)
	requireVerdict(t, s, reports.VerdictPass, "")
	if err := s.AgainstBaseline(base, "runs/base-run", false); err != nil {
		t.Fatal(err)
	}
	requireVerdict(t, s, reports.VerdictPass, "") // shown, not gating
	files := writeAndRead(t, s, dir)
	for name, out := range files {
		for _, want := range []string{"Against baseline base-run (runs/base-run): REGRESSION", "429 answers 5 → 0", "--baseline-gate"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
	}
	var cmp reports.Comparison
	b, err := os.ReadFile(filepath.Join(dir, rundir.CompareFile))
	if err != nil || json.Unmarshal(b, &cmp) != nil || !cmp.Regression || cmp.Base != "base-run" {
		t.Fatalf("compare.json: %v, %+v\n%s", err, cmp, b)
	}

	if err := s.AgainstBaseline(base, "runs/base-run", true); err != nil {
		t.Fatal(err)
	}
	requireVerdict(t, s, verdictFail, "regression against baseline base-run: 429 answers 5 → 0")
	for _, r := range s.Reasons {
		if strings.Contains(r.Text, "regression against baseline") && (r.Whose != reports.WhoseService || r.Next == "") {
			t.Errorf("reason %+v: want a service reason with a next step", r)
		}
	}
	if out := writeAndRead(t, s, dir)[rundir.MarkdownFile]; !strings.Contains(out, "REGRESSION (gating: the run fails)") {
		t.Errorf("report.md of a gating regression:\n%s", out)
	}

	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.CompareFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a build without a baseline left %s: %v", rundir.CompareFile, err)
	}
}

// TestBaselineSame: two builds of one run are "same" against each other.
func TestBaselineSame(t *testing.T) {
	baseSum, _ := build(t, passingRun())
	dir := passingRun().write(t)
	s, _ := buildDir(t, dir)
	if err := s.AgainstBaseline(reports.Run{Summary: baseSum}, "b", true); err != nil {
		t.Fatal(err)
	}
	requireVerdict(t, s, reports.VerdictPass, "")
	if out := writeAndRead(t, s, dir)["terminal"]; !strings.Contains(out, "): same") {
		t.Errorf("terminal:\n%s", out)
	}
}

// writeAndRead writes s's reports into dir and returns report.md,
// report.html and the terminal card.
func writeAndRead(t *testing.T, s *reports.Summary, dir string) map[string]string {
	t.Helper()
	if err := WriteFiles(dir, s); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range []string{rundir.MarkdownFile, rundir.HTMLFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	var term bytes.Buffer
	Terminal(&term, s)
	out["terminal"] = term.String()
	return out
}
