package reports

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// Live thresholds (abortOnFail). During a run the harness analyses the run
// directory as it is (Analyze: the one analysis, over what the attacker and
// the sink flushed so far) and judges the abortOnFail thresholds on it. Only
// figures that the records already on disk settle can be judged live: what
// the attempt log says (requests.* but bad_lines, idempotency.* but
// duplicate_deliveries, rate_limit.*) and the sink's counts that no later
// record can take back (delivery.duplicates, .malformed, .unauthorized). A
// delivery figure that waits for the grace period (lost, latency,
// received…) is not known before the run ends, and an abortOnFail threshold
// on it is refused at validation.
//
// The rule (LiveThreshold.Judge):
//   - a count that only grows as records come (growingCount), bounded from
//     above (`idempotency.mismatches == 0`, `requests.codes["500"] < 10`),
//     can no longer pass once it fails: it is final;
//   - any other figure (a share, a percentile) may recover, so it fails live
//     when it fails at an evaluation after delayAbortEval: k6's rule;
//   - a figure with no data yet, or a value that is not a number, is not
//     judged: no data now may be data later.

// LiveThreshold is an abortOnFail threshold compiled for the live evaluation.
type LiveThreshold struct {
	c     *compiled
	final bool // an upper bound on a growing count: once failed, failed for good
}

// CompileLive compiles an abortOnFail threshold for a scenario whose delivery
// is via via (summary.CheckLive: a threshold the report accepts, reading only
// figures known live), and says whether it is final once failed.
func CompileLive(src, via string) (*LiveThreshold, error) {
	c, err := summary.CheckLive(src, summary.Scope{Via: via})
	if err != nil {
		return nil, err
	}
	l := &LiveThreshold{c: c}
	if p, ok := c.UpperBound(); ok && summary.Grows(p) {
		l.final = true
	}
	return l, nil
}

// LiveState is a live threshold's state at one evaluation.
type LiveState struct {
	Expr  string
	Known bool    // its figures have data and its value is a number
	OK    bool    // it holds (when Known)
	Final bool    // it fails and can no longer pass (a growing count over its bound)
	Value float64 // the left side of the comparison, when Known
	Why   string  // why it is not Known
	// Undecided: a percentile it reads is known only to its span (the
	// counting pass), and the threshold holds at one end and fails at the
	// other: the whole analysis judges it.
	Undecided bool
}

// Sends says whether the threshold reads only figures of the sends, so
// that AnalyzeSends judges it as Analyze does.
func (l *LiveThreshold) Sends() bool {
	for _, p := range l.c.Paths {
		if !fromSends(p) {
			return false
		}
	}
	return true
}

// Counted says whether the threshold reads only figures the counting pass
// gives (Counted), so that on AnalyzeSendsCounting it is judged as on
// AnalyzeSends, or Undecided.
func (l *LiveThreshold) Counted() bool {
	for _, p := range l.c.Paths {
		if !Counted(p) {
			return false
		}
	}
	return true
}

// Carried says whether the threshold is judged on the carried analysis
// (Carried): it reads only figures the counting pass gives (Counted) of
// the sends (Sends) or of the sink's events known live (delivery's growing
// counts: summary.CheckLive), and none of rate_limit, whose decisions the
// carried analysis does not keep.
func (l *LiveThreshold) Carried() bool {
	for _, p := range l.c.Paths {
		if p[0] == "rate_limit" || !fromSends(p) && p[0] != "delivery" {
			return false
		}
	}
	return l.Counted()
}

// Events says whether the threshold reads a figure of the sink's events:
// the carried analysis that judges it reads them too (NewCarried).
func (l *LiveThreshold) Events() bool {
	for _, p := range l.c.Paths {
		if fromEvents(p) {
			return true
		}
	}
	return false
}

// Expr is the threshold as written.
func (l *LiveThreshold) Expr() string { return l.c.String() }

// Final says whether the threshold, once it fails, can never pass again.
func (l *LiveThreshold) Final() bool { return l.final }

// Judge evaluates the threshold on a live summary (Analyze of a run
// directory while the run goes). On the counting pass's summary
// (AnalyzeSendsCounting) a percentile it reads is known only to its span:
// it is judged at every value the span holds (spans.go), and Undecided when
// they disagree.
func (l *LiveThreshold) Judge(s *Summary) LiveState {
	if cs, ok := spannedReads(l.c, s); ok {
		return l.judgeSpans(s, cs)
	}
	return l.judge(s)
}

// judge is Judge on figures that are all known.
func (l *LiveThreshold) judge(s *Summary) LiveState {
	t := evalThreshold(l.c, s)
	st := LiveState{Expr: t.Expr}
	if len(t.NoData) > 0 || t.Error != "" {
		st.Why = t.Error
		return st
	}
	if _, isNum := l.c.Left(&s.Summary); !isNum && l.c.Compares() {
		st.Why = "its figure has no value yet"
		return st
	}
	st.Known, st.OK, st.Value = true, t.OK, t.Value
	st.Final = !t.OK && l.final
	return st
}

// LiveLine is the live verdict for the progress line: "thresholds ok",
// "thresholds …" (not known yet), or the failing ones ("requests.error_rate
// < 0.01 FAILING").
func LiveLine(states []LiveState) string {
	var failing []string
	known := true
	for _, st := range states {
		switch {
		case !st.Known:
			known = false
		case !st.OK:
			failing = append(failing, st.Expr+" FAILING")
		}
	}
	switch {
	case len(failing) > 0:
		return strings.Join(failing, ", ")
	case !known:
		return "thresholds …"
	}
	return "thresholds ok"
}

// abortReason adds the reason of a run an abortOnFail threshold stopped
// (run.json aborted): the service's, fail. Its attack sent less than planned
// on purpose, so the count of its load is not judged (loadShort).
func (a *analyzer) abortReason() {
	ab := a.meta.Aborted
	if ab == nil {
		return
	}
	why := "it failed at a live evaluation after its delayAbortEval"
	if ab.Final {
		why = "it could no longer pass (a count that only grows, over its bound)"
	}
	where := ""
	if ab.Part != "" {
		where = " of part " + ab.Part
	}
	when := ts(ab.At)
	if !a.meta.Start.IsZero() && ab.At.After(a.meta.Start) {
		when += fmt.Sprintf(" (%s after the start)", dur(ab.At.Sub(a.meta.Start).Seconds()))
	}
	a.s.early = append(a.s.early, reason(WhoseService, verdictFail,
		fmt.Sprintf("the run was aborted at %s by the abortOnFail threshold %s%s (value %s): %s; the figures cover what ran until then and its grace period", when, ab.Threshold, where, Num(ab.Value), why),
		""))
}

// partialText is the reason of a checkpoint (PartialJSON).
const partialText = "partial: the run is still going; these are its figures so far (a checkpoint: the run's end rewrites summary.json whole)"

// PartialJSON is s, the analysis of a run directory while its run goes, as
// a checkpoint's summary.json: marked partial, verdict incomplete. The
// thresholds are not judged on a checkpoint (the messages still in flight
// would read as lost); `msgload report DIR` of a killed run judges them on
// what it recorded. The run's live analysis, in its own process (harness),
// hands it to the run, which writes it (WriteCheckpoint).
func (s *Summary) PartialJSON() ([]byte, error) {
	early := s.early[:0:0]
	for _, r := range s.early {
		if r.Text != noEndText { // of course it has no end yet
			early = append(early, r)
		}
	}
	s.early = append(early, reason(WhoseEnvironment, VerdictIncomplete, partialText,
		"wait for the run's end; if its process was killed, `msgload report "+s.runDir()+"` builds the reports of what it recorded"))
	s.Partial = true
	s.Thresholds = []Threshold{}
	s.decide()
	js, err := s.JSON()
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	return js, nil
}

// WriteCheckpoint rewrites the run directory's summary.json atomically with
// partial (PartialJSON), so that a run killed later still leaves its figures.
func WriteCheckpoint(dir string, partial []byte) error {
	return rundir.WriteFile(filepath.Join(dir, rundir.SummaryFile), partial)
}
