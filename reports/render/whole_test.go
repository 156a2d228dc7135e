package render

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// A whole run: the worst part verdict, a part that could not finish is error
// (incomplete when interrupted), and ReadSummary reads the whole summary.json
// back as a summary of kind run.
func TestWholeRunSummary(t *testing.T) {
	dir := t.TempDir()
	pass := passingRun()
	pdir := filepath.Join(dir, "ok-part")
	if err := os.Rename(pass.write(t), pdir); err != nil {
		t.Fatal(err)
	}
	s, err := Build(pdir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != kindPart {
		t.Errorf("a part's kind %q", s.Kind)
	}
	parts := []reports.PartInput{{Name: "ok-part", Dir: pdir, Summary: s}, {Name: "broken", Dir: filepath.Join(dir, "broken"), Err: errors.New("start the simulator: boom")}}
	for _, tc := range []struct {
		interrupted bool
		want        string
	}{{false, reports.VerdictError}, {true, reports.VerdictIncomplete}} {
		w, err := BuildRun(dir, parts, tc.interrupted)
		if err != nil {
			t.Fatal(err)
		}
		if w.Verdict != tc.want || w.Totals.PartsPassed != 1 || w.Totals.Parts != 2 {
			t.Errorf("interrupted %v: verdict %q, %d of %d passed", tc.interrupted, w.Verdict, w.Totals.PartsPassed, w.Totals.Parts)
		}
		if len(w.VerdictReasons) != 1 || !strings.HasPrefix(w.VerdictReasons[0], "broken: the part could not finish: start the simulator") {
			t.Errorf("reasons %q", w.VerdictReasons)
		}
		got, err := reports.ReadSummary(filepath.Join(dir, rundir.SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		if got.Kind != reports.KindRun || got.Verdict != tc.want || got.OK() || got.Whole == nil || len(got.Whole.Parts) != 2 || got.Whole.Parts[0].Dir != "ok-part" {
			t.Errorf("read back: %+v", got)
		}
		if !strings.HasPrefix(w.Line("runs/x"), filepath.Base(dir)+": "+strings.ToUpper(tc.want)+" (1 of 2 parts) — runs/x/report.html") {
			t.Errorf("line %q", w.Line("runs/x"))
		}
	}
}
