package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/msgload/msgload/rundir"
)

// Verdicts of a run (summary.json `verdict`). Only VerdictPass is a pass.
const (
	VerdictPass       = "pass"       // every threshold held on data, something was sent and accepted
	verdictFail       = "fail"       // a threshold failed or had no data, nothing was sent or accepted, the truth disagrees, ids collide
	VerdictIncomplete = "incomplete" // the run was interrupted: its figures cover what ran
	VerdictError      = "error"      // a raw file the run must have is missing or unreadable
)

// verdictRank orders verdicts from best to worst, for a run of several parts.
var verdictRank = map[string]int{VerdictPass: 0, verdictFail: 1, VerdictIncomplete: 2, VerdictError: 3}

// WorstVerdict is the verdict of several parts: error over incomplete over fail
// over pass; an unknown or empty verdict counts as error.
func WorstVerdict(vs ...string) string {
	worst := VerdictPass
	if len(vs) == 0 {
		return VerdictError
	}
	for _, v := range vs {
		r, ok := verdictRank[v]
		if !ok {
			return VerdictError
		}
		if r > verdictRank[worst] {
			worst = v
		}
	}
	return worst
}

// ExitCode is the exit code of a verdict: 0 for pass, 130 for incomplete (as
// for an interrupted run), 1 otherwise.
func ExitCode(verdict string) int {
	switch verdict {
	case VerdictPass:
		return 0
	case VerdictIncomplete:
		return 130
	}
	return 1
}

// verdictWord is the verdict for people: PASS, FAIL, INCOMPLETE, ERROR.
func (s *Summary) verdictWord() string {
	v := s.Verdict
	if _, ok := verdictRank[v]; !ok {
		v = VerdictError
	}
	return strings.ToUpper(v)
}

// maskFS hides the raw files that could not be opened, so that the analysis
// reads them as absent and the verdict says why.
type maskFS struct {
	fs.FS
	hidden map[string]bool
}

func (m maskFS) Open(name string) (fs.File, error) {
	if m.hidden[name] {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return m.FS.Open(name)
}

// checkRawFiles records, as reasons for an error verdict, the raw files the run
// must have that are missing or cannot be opened: attempts.jsonl always;
// events.jsonl when delivery is via the sink (the harness creates it even when
// no callback came); truth.json when the target is the embedded simulator and
// the run was not interrupted and ended (the harness writes it when the
// simulator closes, which a killed process never does).
func (a *analyzer) checkRawFiles() {
	need := []string{rundir.AttemptsFile}
	if a.s.Run.DeliveryVia == "sink" {
		need = append(need, rundir.EventsFile)
	}
	if a.meta.Target == "embedded" && !a.meta.Interrupted && !a.meta.End.IsZero() {
		need = append(need, rundir.TruthFile)
	}
	hidden := map[string]bool{}
	for _, name := range need {
		f, err := a.fsys.Open(name)
		if err == nil {
			var st fs.FileInfo
			if st, err = f.Stat(); err == nil && st.IsDir() {
				err = errors.New("is a directory")
			}
			f.Close()
		}
		switch {
		case err == nil:
		case errors.Is(err, fs.ErrNotExist):
			a.s.problems = append(a.s.problems, fmt.Sprintf("%s is missing from the run directory: the figures that come from it are absent", name))
		default:
			hidden[name] = true
			a.s.problems = append(a.s.problems, fmt.Sprintf("%s cannot be read (%v): the figures that come from it are absent", name, err))
		}
	}
	if len(hidden) > 0 {
		a.fsys = maskFS{a.fsys, hidden}
	}
}

// decide sets the verdict, its reasons and ok from the figures and the
// thresholds evaluated so far. Every reason is listed, worst first.
func (s *Summary) decide() {
	var errs, incomplete, fails []string
	errs = append(errs, s.problems...)
	if s.Run.Interrupted {
		incomplete = append(incomplete, "the run was interrupted: the figures cover only what ran")
	}
	incomplete = append(incomplete, s.incomplete...)
	r := s.Requests
	switch {
	case r.Messages == 0:
		fails = append(fails, "the run sent no message")
	case r.Accepted == 0:
		fails = append(fails, fmt.Sprintf("none of the %s sent was accepted", plural(r.Messages, "message")))
	}
	if t := s.Truth; t != nil && t.Agrees != nil && !*t.Agrees {
		// A measurement that disagrees with the simulator's truth is a bug of
		// msgload's: no verdict built on it can pass.
		fails = append(fails, "the measurements disagree with the simulator's ground truth: "+strings.Join(t.Disagreements, "; "))
	}
	if n := s.Idempotency.IDCollisions; n > 0 {
		fails = append(fails, fmt.Sprintf("the service answered %s with an id already given to another message: delivery cannot be joined", plural(n, "message")))
	}
	for _, t := range s.Thresholds {
		switch {
		case t.OK:
		case len(t.NoData) > 0:
			fails = append(fails, fmt.Sprintf("threshold %s has %s", t.Expr, t.Error))
		case t.Error != "":
			fails = append(fails, fmt.Sprintf("threshold %s could not be evaluated: %s", t.Expr, t.Error))
		default:
			fails = append(fails, fmt.Sprintf("threshold %s does not hold (value %s)", t.Expr, num(t.Value)))
		}
	}
	switch {
	case len(errs) > 0:
		s.Verdict = VerdictError
	case len(incomplete) > 0:
		s.Verdict = VerdictIncomplete
	case len(fails) > 0:
		s.Verdict = verdictFail
	default:
		s.Verdict = VerdictPass
	}
	s.VerdictReasons = append(append(append([]string{}, errs...), incomplete...), fails...)
	s.Passed = s.Verdict == VerdictPass
}
