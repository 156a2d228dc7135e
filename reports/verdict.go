package reports

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/msgload/msgload/rundir"
)

// Verdicts of a run (summary.json `verdict`). Only VerdictPass is a pass.
const (
	VerdictPass       = "pass"       // every threshold held on data, something was sent and accepted
	verdictFail       = "fail"       // a service reason: a threshold failed or had no data, nothing was sent or accepted, ids collide
	VerdictIncomplete = "incomplete" // the run was interrupted, or its load was more than 5 % under the plan: its figures cover what ran
	VerdictError      = "error"      // a raw file the run must have is missing or unreadable, or msgload disagrees with its truth
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

// ExitCode is the exit code of a verdict: 0 for pass, 3 for incomplete, 1
// otherwise. Not 130 for incomplete: that is a process interrupted now
// (128+SIGINT), which msgload run says of itself; a report of a run
// interrupted then, or of a plan not held, interrupted nothing.
func ExitCode(verdict string) int {
	switch verdict {
	case VerdictPass:
		return 0
	case VerdictIncomplete:
		return 3
	}
	return 1
}

// VerdictWord is the verdict for people: PASS, FAIL, INCOMPLETE, ERROR.
func (s *Summary) VerdictWord() string {
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
		need = append(need, truthFileOf(a.fsys))
	}
	if a.meta.TargetMemory != nil && !a.meta.End.IsZero() {
		need = append(need, rundir.TargetMemoryFile) // written from the attack's start, a line a sample
	}
	hidden := map[string]bool{}
	for _, name := range need {
		f, err := rundir.OpenRegularFS(a.fsys, name)
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
			a.s.missing = append(a.s.missing, name)
			a.s.problems = append(a.s.problems, fmt.Sprintf("%s is missing from the run directory: the figures that come from it are absent", name))
		default:
			hidden[name] = true
			a.s.missing = append(a.s.missing, name)
			a.s.problems = append(a.s.problems, fmt.Sprintf("%s cannot be read (%v): the figures that come from it are absent", name, err))
		}
	}
	if len(hidden) > 0 {
		a.fsys = maskFS{a.fsys, hidden}
	}
}

// Whose a reason is (Reason.Whose): only a service reason makes a run fail.
const (
	WhoseService     = "service"     // a threshold failed, a contract was broken, the target could not carry the plan
	WhoseMeasurement = "measurement" // msgload disagrees with its ground truth: a msgload bug
	WhoseEnvironment = "environment" // the load generator fell behind, a raw file is missing, the run was interrupted
)

// Limits that held a run's load under its plan (Reason.Limit).
const (
	limitCPU      = "generator_cpu" // the machine running msgload could not send as planned
	limitStopped  = "generator"     // the load generator stopped before its plan was sent, neither late nor capped
	limitInFlight = "in_flight_cap" // the scenario's cap on messages in flight (load.maxInFlight)
	limitTarget   = "target"        // the target answered slower than the plan allows
	// LimitSimLag: the embedded simulator, on the same busy machine, fell
	// behind its own schedule (truth.sim_lag) — its delivery figures are the
	// machine's, not the service's.
	LimitSimLag = "simulator_lag"
)

// reason is a Reason of whose, making verdict.
func reason(whose, verdict, text, next string) Reason {
	return Reason{Whose: whose, Verdict: verdict, Text: text, Next: next}
}

// runDir is how the reasons name the run directory: where it was read from,
// else runs/<id> (msgload run's default).
func (s *Summary) runDir() string {
	if s.dir != "" {
		return s.dir
	}
	return "runs/" + s.Run.ID
}

// measurementBug is the reason for a measurement msgload disagrees with:
// a msgload bug, with the command that reproduces it and where to file it.
func (s *Summary) measurementBug(text string) Reason {
	dir := s.runDir()
	return reason(WhoseMeasurement, VerdictError, text+" — a msgload bug, not the service's",
		fmt.Sprintf("`msgload report %s` reproduces it; attach %s to an issue of msgload", dir, dir))
}

// decide sets the verdict, its reasons and ok from the figures and the
// thresholds evaluated so far: the verdict is the worst any reason makes
// (error over incomplete over fail). Every reason is listed, worst first.
func (s *Summary) decide() {
	var rs []Reason
	for _, p := range s.problems {
		rs = append(rs, reason(WhoseEnvironment, VerdictError, p, "find why the file is missing or unreadable (disk, permissions, a killed process) and run again"))
	}
	if s.Run.Interrupted {
		rs = append(rs, reason(WhoseEnvironment, VerdictIncomplete, "the run was interrupted: the figures cover only what ran", "run it again to the end"))
	}
	rs = append(rs, s.early...)
	rs = append(rs, s.loadReasons()...)
	r := s.Requests
	switch {
	case r.Messages == 0:
		rs = append(rs, reason(WhoseService, verdictFail, "the run sent no message", nextNothingSent))
	case r.Accepted == 0:
		rs = append(rs, reason(WhoseService, verdictFail, fmt.Sprintf("none of the %s sent was accepted", Plural(r.Messages, "message")), nextNoneAccepted))
	}
	if t := s.Truth; t != nil && t.Agrees != nil && !*t.Agrees {
		// A measurement that disagrees with the simulator's truth is a bug of
		// msgload's: no verdict built on it can pass, nor blame the service.
		rs = append(rs, s.measurementBug("the measurements disagree with the simulator's ground truth: "+strings.Join(t.Disagreements, "; ")))
	}
	if n := s.Delivery.BeforeSend; n > 0 {
		// On one clock a final status cannot arrive before its message was
		// sent: the join took another message's record, or the sink's clock
		// is not the attacker's. Either way its latency is no measurement.
		dir := s.runDir()
		rs = append(rs, reason(WhoseMeasurement, VerdictError,
			fmt.Sprintf("%s ended before %s first send (delivery.before_send): the join or the clocks are wrong, and the delivery latencies cannot be trusted", Plural(n, "message"), oneOr(n, "its", "their")),
			fmt.Sprintf("if the sink runs on another machine, synchronise the clocks (NTP) and run again; otherwise this is a msgload bug: `msgload report %s` reproduces it, attach %s to an issue of msgload", dir, dir)))
	}
	if n := s.Requests.Duplicates; n > 0 {
		// Each attempt is written once: a repeated one means the record was
		// copied into itself or written twice, so no figure of it is sure.
		rs = append(rs, reason(WhoseMeasurement, VerdictError,
			fmt.Sprintf("%s: %s repeat an attempt already recorded (same seq, attempt, op and send time); each was counted once, but the record cannot be trusted", rundir.AttemptsFile, Plural(n, "line")),
			"find what wrote the attempts twice (a copy, a second writer on the run directory) and run again"))
	}
	if n := s.Idempotency.IDCollisions; n > 0 {
		rs = append(rs, reason(WhoseService, verdictFail, fmt.Sprintf("the service answered %s with an id already given to another message: delivery cannot be joined", Plural(n, "message")),
			fmt.Sprintf("a service bug: give its owners %s/%s (the answers' ids)", s.runDir(), rundir.AttemptsFile)))
	}
	rs = append(rs, s.simLagReason()...)
	rs = append(rs, s.thresholdReasons()...)
	rs = append(rs, s.baselineReasons()...)
	if rs == nil {
		rs = []Reason{} // "reasons": [], as verdict_reasons
	}
	slices.SortStableFunc(rs, func(a, b Reason) int { return verdictRank[b.Verdict] - verdictRank[a.Verdict] })
	s.Verdict = VerdictPass
	s.Reasons = rs
	s.VerdictReasons = make([]string, len(rs))
	for i, x := range rs {
		s.VerdictReasons[i] = x.Text
		s.Verdict = WorstVerdict(s.Verdict, x.Verdict)
	}
	s.Passed = s.Verdict == VerdictPass
}

// Next steps of the service's reasons (Reason.Next).
const (
	nextNothingSent  = "check the scenario's load (msgload validate) and that the target is reachable; the errors table says what the attempts met"
	nextNoneAccepted = "the errors table of the report says what the service answered instead"
	nextThreshold    = "the service misses it: the per-operation and errors tables of the report show where; fix the service and run again, or change the threshold if the scenario asks too much"
	nextNoData       = "measure the figure the threshold reads (see why it has no data), or drop the threshold"
	nextBadThreshold = "correct the threshold in the scenario (msgload validate checks it before a run)"
)

// thresholdReasons are the service reasons of the thresholds that fail: one
// per threshold, read as the card shows it (value, unit, limit, by how much).
func (s *Summary) thresholdReasons() []Reason {
	var rs []Reason
	for _, t := range s.Thresholds {
		switch {
		case t.OK:
		case t.SimLagOnly:
			rs = append(rs, simLagged(reason(WhoseEnvironment, VerdictIncomplete, fmt.Sprintf("threshold %s does not hold: %s — but it reads figures the embedded simulator changed by falling behind its own schedule (truth.sim_lag: %s late or lost only because of it), so it does not judge the service", t.Expr, ThresholdText(t), Plural(s.Truth.SimLag.Messages, "message")),
				"run again on a less busy machine, or at a lower rate")))
		case t.SinkLogOnly:
			rs = append(rs, reason(WhoseEnvironment, VerdictIncomplete, fmt.Sprintf("threshold %s does not hold: %s — but it reads delivery figures, and %s with messages lost (above), so it does not judge the service", t.Expr, ThresholdText(t), s.sinkDoubt),
				"find why the sink could not log every call and run again"))
		case len(t.NoData) > 0:
			rs = append(rs, reason(WhoseService, verdictFail, fmt.Sprintf("threshold %s has %s", t.Expr, t.Error), nextNoData))
		case t.Error != "":
			rs = append(rs, reason(WhoseService, verdictFail, fmt.Sprintf("threshold %s could not be evaluated: %s", t.Expr, t.Error), nextBadThreshold))
		default:
			rs = append(rs, reason(WhoseService, verdictFail, fmt.Sprintf("threshold %s does not hold: %s", t.Expr, ThresholdText(t)), nextThreshold))
		}
	}
	return rs
}

// ReasonList is the summary's reasons; a summary.json from before `reasons`
// has only their texts (whose unknown).
func (s *Summary) ReasonList() []Reason {
	if len(s.Reasons) == len(s.VerdictReasons) {
		return s.Reasons
	}
	out := make([]Reason, len(s.VerdictReasons))
	for i, t := range s.VerdictReasons {
		out[i] = Reason{Text: t}
	}
	return out
}

// missingRaw says why the figure at path p has no data because the raw file
// it stands on is missing or unreadable (checkRawFiles), or "": a figure of
// a file that is not there is not measured, never the count of nothing
// (without events.jsonl every accepted message would read as lost).
func (s *Summary) missingRaw(p []any) string {
	head, _ := p[0].(string)
	for _, name := range s.missing {
		var from bool
		switch name {
		case rundir.AttemptsFile: // every figure but what run.json says
			from = head != "run" && head != "schema" && head != "ok"
		case rundir.EventsFile:
			from = fromEvents(p)
		case rundir.TruthFile, rundir.TruthStreamFile:
			from = fromTruth(p)
		}
		if from {
			return name + " is missing or unreadable, so this figure was not measured"
		}
	}
	return ""
}
