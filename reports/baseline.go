package reports

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/msgload/msgload/rundir"
)

// baseline is a run's comparison against an earlier run of its scenario
// (msgload run or report --baseline DIR): shown on the verdict card, written
// to compare.json, and a service reason only when the user asked it to gate.
type baseline struct {
	dir  string // the baseline's run directory, as given
	gate bool   // --baseline-gate: a regression makes the run fail
	cmp  Comparison
}

// AgainstBaseline compares the run s (its raw latencies in s's run
// directory) with base, read from baseDir, as `msgload compare` does with
// its default tolerance; the verdict card shows the result and WriteFiles
// writes it to compare.json. With gate, a regression is a service reason
// (fail); without, it is shown and changes no verdict.
func (s *Summary) AgainstBaseline(base Run, baseDir string, gate bool) error {
	run := Run{Summary: s}
	smp, err := ReadSamples(s.dir)
	if err != nil && !errors.Is(err, errNoRawFiles) {
		return fmt.Errorf("against the baseline: %w", err)
	}
	run.Samples = smp
	s.baseline = &baseline{dir: baseDir, gate: gate, cmp: CompareRuns(base, run, DefaultTolerance())}
	s.decide()
	return nil
}

// WriteBaseline writes compare.json of the comparison against the baseline,
// or removes one an earlier build wrote (the run directory's files are those
// of its last build).
func (s *Summary) WriteBaseline(dir string) error {
	path := filepath.Join(dir, rundir.CompareFile)
	if s.baseline == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", path, err)
		}
		return nil
	}
	var b strings.Builder
	if err := s.baseline.cmp.WriteJSON(&b); err != nil {
		return err
	}
	return rundir.WriteFile(path, []byte(b.String()))
}

// changedRows are the rows of the comparison that are not "same", the
// regressions first.
func (c Comparison) changedRows() []row {
	var reg, other []row
	for _, r := range c.Rows {
		switch r.Verdict {
		case rowSame:
		case RowRegression:
			reg = append(reg, r)
		default:
			other = append(other, r)
		}
	}
	return append(reg, other...)
}

// text is a row for the card: `delivery latency p95 12ms → 16ms (+31.0%,
// regression, p = 0.0001)`.
func (r row) text() string {
	what := []string{}
	if r.Delta != "" {
		what = append(what, r.Delta)
	}
	what = append(what, r.Verdict)
	if r.Test.HasP {
		what = append(what, "p = "+pValue(r.Test.P))
	} else if r.Test.HasShift {
		what = append(what, fmt.Sprintf("%s%% interval %s … %s", Num(100*r.Test.Conf), signedDur(r.Test.Low), signedDur(r.Test.High)))
	}
	return fmt.Sprintf("%s %s → %s (%s)", r.Name, r.Base, r.New, strings.Join(what, ", "))
}

// BaselineLines are the card's lines on the baseline: the verdict of the
// comparison against it, then each figure that changed, regressions first;
// none without a baseline.
func (s *Summary) BaselineLines() []string {
	b := s.baseline
	if b == nil {
		return nil
	}
	head := fmt.Sprintf("Against baseline %s (%s): ", b.cmp.Base, b.dir)
	changed := b.cmp.changedRows()
	switch {
	case b.cmp.Regression && b.gate:
		head += "REGRESSION (gating: the run fails)"
	case b.cmp.Regression:
		head += "REGRESSION (shown only: --baseline-gate makes it fail the run)"
	case len(changed) == 0:
		head += "same"
	default:
		head += "no regression"
	}
	lines := []string{head}
	for _, r := range changed {
		lines = append(lines, "  "+r.text())
	}
	return lines
}

// baselineReasons is the service reason of a regression against the
// baseline when the user asked it to gate (--baseline-gate); none otherwise.
func (s *Summary) baselineReasons() []Reason {
	b := s.baseline
	if b == nil || !b.gate || !b.cmp.Regression {
		return nil
	}
	var regs []string
	for _, r := range b.cmp.changedRows() {
		if r.Verdict == RowRegression {
			regs = append(regs, r.text())
		}
	}
	return []Reason{reason(WhoseService, verdictFail,
		fmt.Sprintf("regression against baseline %s: %s", b.cmp.Base, strings.Join(regs, "; ")),
		fmt.Sprintf("%s/%s has every figure with its test; fix the service and run again, or drop --baseline-gate if the change is meant", s.runDir(), rundir.CompareFile))}
}
