package characterise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// RunOptions is one characterisation: the plan, and how each probe's run is
// made (the harness's options every probe shares: Out is the parent of the
// characterisation's directory, the rest as msgload run fills them).
type RunOptions struct {
	Plan    *Plan
	File    *File
	Harness harness.Options
	// Progress gets one line per probe as it starts and ends.
	Progress io.Writer
	// Sleep waits out a cool-down (time.Sleep unless a test sets it).
	Sleep func(context.Context, time.Duration)
}

// Result is a characterisation's outcome.
type Result struct {
	Dir      string
	Contract *reports.Contract
}

// Run runs the plan's probes one after another, each a generated scenario
// through harness.Run in a directory below the characterisation's, then
// writes contract.json and junit.xml at the top.
func Run(ctx context.Context, o RunOptions) (*Result, error) {
	// --max-time bounds the run too, not only the plan: a probe cut by it
	// is stopped as by an interrupt (incomplete).
	ctx, cancel := context.WithTimeout(ctx, o.Plan.MaxTime)
	defer cancel()
	base := o.File.Scenario
	out := o.Harness.Out
	if out == "" {
		out = "runs"
	}
	now := time.Now
	if o.Harness.Now != nil {
		now = o.Harness.Now
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	id := harness.NewRunID("characterise-"+base.Name, now())
	dir := filepath.Join(out, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("characterise: %w", err)
	}
	c := &reports.Contract{Name: base.Name, API: base.API, Target: targetName(base), Start: now().UTC().Format(time.RFC3339Nano), Budget: o.Plan.Budget}
	st := &state{base: base, plan: o.Plan}
	stopped := false
	for i := range o.Plan.Probes {
		pr := st.runSized(i, c.Sent)
		cp := reports.ContractProbe{Name: pr.Name, What: pr.What, Dir: filepath.Join(dir, pr.Name), Planned: pr.Requests}
		if stopped = stopped || ctx.Err() != nil; stopped {
			// interrupted: the probes not run leave the contract incomplete
			cp.Verdict, cp.Reasons = reports.VerdictIncomplete, []string{"not run: interrupted, or --max-time reached"}
			c.Probes = append(c.Probes, cp)
			continue
		}
		if pr.Requests <= 0 {
			cp.Verdict = reports.ProbeSkipped
			c.Probes = append(c.Probes, cp)
			continue
		}
		if pr.CoolDown > 0 {
			fmt.Fprintf(o.Progress, "cool-down %s before %s (the limiter must be cold)\n", pr.CoolDown, pr.Name)
			o.Sleep(ctx, pr.CoolDown)
		}
		fmt.Fprintf(o.Progress, "probe %s: %s\n", pr.Name, pr.What)
		pc, err := st.probeRun(ctx, o.Harness, dir, pr, &cp)
		if err != nil {
			return nil, err // the target may not be probed: nothing was sent
		}
		st.record(pr, pc)
		st.judgeEnvironment(&cp)
		c.Sent += cp.Sent
		c.Probes = append(c.Probes, cp)
		fmt.Fprintf(o.Progress, "probe %s: %d requests sent, run %s\n", pr.Name, cp.Sent, cp.Verdict)
		stopped = pc != nil && pc.interrupted // Ctrl-C: no further probe
	}
	c.Findings = st.findings(o.File.Expect)
	c.End = now().UTC().Format(time.RFC3339Nano)
	c.Judge()
	if err := writeContract(dir, c); err != nil {
		return nil, err
	}
	return &Result{Dir: dir, Contract: c}, nil
}

// runSized is the plan's i-th probe as it runs after sent requests: fitted
// to what the budget still allows less what the probes after it were
// planned (a probe sized when it runs never takes the token probe's).
func (st *state) runSized(i int, sent int64) Probe {
	var later int64
	for _, pr := range st.plan.Probes[i+1:] {
		later += pr.Requests
	}
	return st.sized(st.plan.Probes[i], st.plan.Budget-sent-later)
}

// probeRun runs one probe through the harness; its summary and attempts
// (nil when it wrote none) are what the findings read.
func (st *state) probeRun(ctx context.Context, ho harness.Options, dir string, pr Probe, cp *reports.ContractProbe) (*probeData, error) {
	s := st.scenario(pr)
	if pr.Name == probeWindow {
		if err := windowScenario(s, pr, dir); err != nil {
			cp.Err = err.Error()
			return nil, nil
		}
	}
	if pr.Name == probeToken {
		if err := st.tokenScenario(s, pr, dir); err != nil {
			cp.Err = err.Error()
			return nil, nil
		}
	}
	ho.HoldToken = pr.Name == probeToken // its token is held until refused: no early refresh
	ho.Scenario, ho.Out, ho.RunID = s, dir, pr.Name
	ho.MaxMessages = s.MaxMessages
	ho.MetricsAddr, ho.Quiet, ho.Checkpoint = "", true, -1
	ho.SinkFault = st.sinkFault(pr)
	ho.StartAt = pr.startAt                // the straddle's, timed to the window's boundary
	ho.PollToo = pr.Name == probeMsgStatus // its callbacks against check-status
	res, err := harness.Run(ctx, ho)
	if errors.Is(err, harness.ErrUnconfirmedTarget) {
		return nil, fmt.Errorf("characterise: %w", err)
	}
	if err != nil {
		cp.Err = err.Error()
		return nil, nil
	}
	cp.Dir, cp.Verdict = res.Dir, res.Verdict()
	pd := &probeData{dir: res.Dir, verdict: cp.Verdict, interrupted: res.Interrupted || res.Aborted}
	if len(res.Parts) == 1 {
		pd.sum = res.Parts[0].Summary
		if pd.sum != nil {
			cp.Reasons = pd.sum.VerdictReasons
		}
		if p := res.Parts[0]; p.Err != nil {
			cp.Err = p.Err.Error()
		}
	}
	pd.attempts, err = readSends(filepath.Join(res.Dir, rundir.AttemptsFile))
	if err != nil && cp.Err == "" {
		cp.Err = err.Error()
	}
	cp.Sent = int64(len(pd.attempts))
	return pd, nil
}

// probeData is what one probe's run left.
type probeData struct {
	dir     string
	verdict string // its run's
	// interrupted: an interrupt stopped its sends (the next probes do not run)
	interrupted bool
	sum         *reports.Summary
	attempts    []rundir.Attempt // the sends that really left, in file order
}

// eachEvent calls fn on each event of the probe's run, in file order. A
// line the sink could not finish is passed over here: the probe's own
// report counts it and its verdict says so (an error verdict makes the
// probe's findings distrusted).
func (pd *probeData) eachEvent(fn func(rundir.Event) error) error {
	return rundir.ReadJSONL(filepath.Join(pd.dir, rundir.EventsFile), fn, func(int, error) {})
}

// eachAttempt calls fn on each attempt of the probe's run (every op, those
// not sent too), in file order; a line cut short is passed over, as in
// eachEvent.
func (pd *probeData) eachAttempt(fn func(rundir.Attempt) error) error {
	return rundir.ReadJSONL(filepath.Join(pd.dir, rundir.AttemptsFile), fn, func(int, error) {})
}

// events is every event of the probe's run (eachEvent's).
func (pd *probeData) events() ([]rundir.Event, error) {
	var es []rundir.Event
	err := pd.eachEvent(func(e rundir.Event) error {
		es = append(es, e)
		return nil
	})
	return es, err
}

// readSends reads the send attempts that really left (not "not sent:").
func readSends(path string) ([]rundir.Attempt, error) {
	var as []rundir.Attempt
	err := rundir.ReadJSONL(path, func(a rundir.Attempt) error {
		if a.Op == "send" && !strings.HasPrefix(a.Error, "not sent:") {
			as = append(as, a)
		}
		return nil
	}, func(int, error) {})
	return as, err
}

// writeContract writes contract.json, junit.xml, report.md and report.html
// into dir.
func writeContract(dir string, c *reports.Contract) error {
	for name, write := range map[string]func(io.Writer) error{rundir.ContractFile: c.WriteJSON, rundir.JUnitFile: c.WriteJUnit, rundir.MarkdownFile: c.WriteMarkdown,
		rundir.HTMLFile: func(w io.Writer) error { return render.ContractHTML(w, c) }} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return fmt.Errorf("characterise: %s: %w", name, err)
		}
		if err := rundir.WriteFile(filepath.Join(dir, name), b.Bytes()); err != nil {
			return fmt.Errorf("characterise: %w", err)
		}
	}
	return nil
}

func targetName(s *scenarios.Scenario) string {
	if s.Target.Embedded {
		return "embedded"
	}
	return s.Target.BaseURL
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
