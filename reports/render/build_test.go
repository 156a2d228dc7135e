package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

func TestBuildWritesEverythingAndRebuildsIdentically(t *testing.T) {
	r := deliveryRun()
	r.meta.Target = "http://127.0.0.1:8080" // not the embedded simulator: no truth.json to require
	dir := r.write(t)
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	// p95 of (1,2,3,10,71) s is 71 s: the first threshold fails; lost 2/6 fails the second.
	want := []bool{false, false, true}
	for i, th := range s.Thresholds {
		if th.OK != want[i] {
			t.Errorf("threshold %q: ok %v, want %v (value %v)", th.Expr, th.OK, want[i], th.Value)
		}
	}
	if s.OK() || s.Passed || s.Verdict != verdictFail {
		t.Errorf("a failed threshold must fail the run: verdict %q %v", s.Verdict, s.VerdictReasons)
	}
	first := map[string][]byte{}
	for _, f := range []string{rundir.SummaryFile, rundir.HTMLFile, rundir.MarkdownFile, rundir.JUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		first[f] = b
	}
	if _, err := Build(dir); err != nil {
		t.Fatal(err)
	}
	for f, b := range first {
		again, _ := os.ReadFile(filepath.Join(dir, f))
		if string(again) != string(b) {
			t.Errorf("%s differs on rebuild", f)
		}
	}
	back, err := reports.ReadSummary(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if back.Delivery.Lost != 2 || back.OK() {
		t.Errorf("summary.json read back: lost %d ok %v", back.Delivery.Lost, back.OK())
	}
	var term strings.Builder
	Terminal(&term, s)
	if !strings.Contains(term.String(), "FAIL") || !strings.Contains(term.String(), "delivery.latency.p95 < 30s") {
		t.Errorf("terminal summary lacks the verdict or a threshold:\n%s", term.String())
	}
}
