package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/characterise"
	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

func init() {
	examples["characterise"] = []string{
		"msgload characterise service.yaml --dry-run      # print the probes and what they may send",
		"msgload characterise service.yaml --budget 600   # measure the contract; exit by expect:",
	}
}

// characteriseOpts are the flags of characterise.
type characteriseOpts struct {
	budget    int64
	maxTime   time.Duration
	maxWindow time.Duration
	hookWait  time.Duration
	dryRun    bool
	out       string
	json      bool
}

// characteriseCommand measures the service's contract (package characterise).
func (g *globalState) characteriseCommand() *cli.Command {
	var o characteriseOpts
	return &cli.Command{
		Name:      "characterise",
		Usage:     "measure the service's contract from outside (rate limiter, isolation, Retry-After, idempotency) within a budget; exit by the file's expect:",
		ArgsUsage: "FILE (a scenario's target, auth, clients and sim blocks without load, and an optional expect: block)",
		Flags: []cli.Flag{
			&cli.Int64Flag{Name: "budget", Value: characterise.DefaultBudget, Usage: "at most `N` requests really sent by all the probes (retries and copies included)", Destination: &o.budget},
			&cli.DurationFlag{Name: "max-time", Value: characterise.DefaultMaxTime, Usage: "refuse a plan longer than `D`", Destination: &o.maxTime},
			&cli.DurationFlag{Name: "max-window", Value: characterise.DefaultMaxWindow, Usage: "the longest limiter window the recovery trace waits out (`D`)", Destination: &o.maxWindow},
			&cli.DurationFlag{Name: "hook-wait", Value: characterise.DefaultHookWait, Usage: "how long each callback probe waits for the retries of what the sink refused (`D`; shortened to fit --max-time)", Destination: &o.hookWait},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and send nothing", Destination: &o.dryRun},
			&cli.StringFlag{Name: "out", Value: "runs", Usage: "parent directory of the characterisation's directory (`DIR`)", Destination: &o.out},
			&cli.StringSliceFlag{Name: "confirm-target", Usage: "`HOST` that may be probed although it is neither embedded nor loopback"},
			&cli.BoolFlag{Name: "json", Usage: "print contract.json on stdout", Destination: &o.json},
		},
		Action: func(c *cli.Context) error {
			if err := oneArg(c, "characterise", "file"); err != nil {
				return err
			}
			return g.runCharacterise(c, o)
		},
	}
}

// runCharacterise loads, plans and (unless --dry-run) runs the probes.
func (g *globalState) runCharacterise(c *cli.Context, o characteriseOpts) error {
	f, err := characterise.Load(c.Args().First(), g.getenv)
	if err != nil {
		return badInput(err)
	}
	plan, err := characterise.NewPlan(f, characterise.Options{Budget: o.budget, MaxTime: o.maxTime, MaxWindow: o.maxWindow, HookWait: o.hookWait})
	if err != nil {
		return badInput(err)
	}
	plan.Print(g.stderr)
	if o.dryRun {
		return nil
	}
	sig, stopSignals := g.signals()
	defer stopSignals()
	ho := harness.Options{Out: o.out, ConfirmTargets: confirmTargets(c), SinkReadToken: g.getenv(envSinkReadToken), Stderr: g.stderr, Signals: sig}
	ho.Version, ho.Commit, ho.CommitTime = buildVCS()
	ho.Host, _ = os.Hostname()
	res, err := characterise.Run(c.Context, characterise.RunOptions{Plan: plan, File: f, Harness: ho, Progress: g.stderr})
	if err != nil {
		if errors.Is(err, harness.ErrUnconfirmedTarget) {
			return badInput(err)
		}
		return &exitError{code: exitBadInput, err: err}
	}
	out := g.stdout
	if o.json {
		out = g.stderr
		if err := res.Contract.WriteJSON(g.stdout); err != nil {
			return &exitError{code: exitBadInput, err: err}
		}
	}
	if err := res.Contract.Text(out); err != nil {
		return &exitError{code: exitBadInput, err: err}
	}
	fmt.Fprintf(out, "characterisation directory: %s\n", res.Dir)
	if v := res.Contract.Verdict; v != reports.VerdictPass {
		return &exitError{code: reports.ExitCode(v), err: fmt.Errorf("characterise %s: %s; see %s", strings.ToUpper(v), strings.Join(res.Contract.Reasons, "; "), res.Dir)}
	}
	return nil
}

// readContracts reads contract.json of two characterisation directories
// (or the files themselves); ok is false unless both are characterisations.
func readContracts(args []string) (base, nw *reports.Contract, ok bool) {
	var cs [2]*reports.Contract
	for i, a := range args {
		p := a
		if filepath.Base(p) != rundir.ContractFile {
			p = filepath.Join(p, rundir.ContractFile)
		}
		b, err := rundir.ReadFile(p, 16<<20)
		if err != nil {
			return nil, nil, false
		}
		var c reports.Contract
		if json.Unmarshal(b, &c) != nil {
			return nil, nil, false
		}
		cs[i] = &c
	}
	return cs[0], cs[1], true
}

// compareContracts prints the rules whose findings changed between two
// characterisations; exit 1 when one did (the contract drifted, or could
// not be told), 0 when none.
func (g *globalState) compareContracts(base, nw *reports.Contract) error {
	ch := reports.ContractDrift(base, nw)
	for _, c := range ch {
		fmt.Fprintf(g.stdout, "%-34s %s → %s\n", c.Rule, c.Base, c.New)
	}
	if len(ch) == 0 {
		fmt.Fprintln(g.stdout, "the contract is the same: every rule found alike")
		for _, f := range nw.Findings {
			if f.Value == reports.CannotTell {
				fmt.Fprintf(g.stdout, "  %s: cannot tell in either (not known to be the same)\n", f.Rule)
			}
		}
		return nil
	}
	return &exitError{code: exitThresholds, err: fmt.Errorf("compare: the contract changed in %d rules", len(ch))}
}
