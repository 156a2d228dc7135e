package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/scenarios"
)

// runOpts are the flags of run (and replay, which shares them).
type runOpts struct {
	out           string
	metricsAddr   string
	metricsLinger time.Duration
	maxMessages   int64
	confirmTarget string
}

func (o *runOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Value: "runs", Usage: "parent directory of run directories; each run is a new `DIR`/<id>",
			EnvVars: []string{"MSGLOAD_OUT"}, Destination: &o.out},
		&cli.StringFlag{Name: "metrics-addr", Value: "127.0.0.1:9464", Usage: "serve /metrics of the attacker, simulator and sink here while the run goes (\"\" for none; a busy port falls back to a free one)",
			EnvVars: []string{"MSGLOAD_METRICS_ADDR"}, Destination: &o.metricsAddr},
		&cli.DurationFlag{Name: "metrics-linger", Value: 15 * time.Second, Usage: "after the run, keep /metrics up until one more scrape, at most this long (only when something scraped it)",
			EnvVars: []string{"MSGLOAD_METRICS_LINGER"}, Destination: &o.metricsLinger},
		&cli.Int64Flag{Name: "max-messages", Usage: "hard cap on messages really sent (a safety for paid traffic); 0: the scenario's maxMessages",
			EnvVars: []string{"MSGLOAD_MAX_MESSAGES"}, Destination: &o.maxMessages},
		&cli.StringFlag{Name: "confirm-target", Usage: "`HOST` that may be attacked although it is neither embedded nor loopback",
			EnvVars: []string{"MSGLOAD_CONFIRM_TARGET"}, Destination: &o.confirmTarget},
	}
}

func (g *globalState) runCommand() *cli.Command {
	var opts runOpts
	return &cli.Command{
		Name:      "run",
		Usage:     "run a scenario: start what is embedded, attack, wait for callbacks, write runs/<id>/, exit by thresholds",
		ArgsUsage: "SCENARIO (a built-in name: " + joinNames(scenarios.Builtins()) + "; or a file)",
		Flags:     opts.flags(),
		Action: func(c *cli.Context) error {
			if err := oneArg(c, "run", "scenario"); err != nil {
				return err
			}
			s, err := g.loadScenario(c.Args().First(), opts.maxMessages)
			if err != nil {
				return err
			}
			return g.runHarness(c, harness.Options{Scenario: s}, opts)
		},
	}
}

// loadScenario loads a scenario and applies --max-messages to it and its
// parts, so the plan and the checks see the cap.
func (g *globalState) loadScenario(name string, maxMessages int64) (*scenarios.Scenario, error) {
	s, err := scenarios.Load(name, g.getenv)
	if err == nil && maxMessages > 0 {
		s.MaxMessages = maxMessages
		for i := range s.Parts {
			s.Parts[i].MaxMessages = maxMessages
		}
		err = s.Validate()
	}
	if err != nil {
		return nil, badInput(err)
	}
	return s, nil
}

// runHarness runs ho with the flags of opts, prints the summary of every part
// and turns the outcome into the exit code.
func (g *globalState) runHarness(c *cli.Context, ho harness.Options, opts runOpts) error {
	sig, stopSignals := g.signals()
	defer stopSignals()
	ho.Out = opts.out
	ho.MetricsAddr = opts.metricsAddr
	ho.MetricsLinger = opts.metricsLinger
	ho.MaxMessages = opts.maxMessages
	ho.ConfirmTarget = opts.confirmTarget
	ho.SinkReadToken = g.getenv(envSinkReadToken)
	ho.Version, ho.Commit, ho.CommitTime = buildVCS()
	ho.Host, _ = os.Hostname()
	ho.Stdout, ho.Stderr = g.stdout, g.stderr
	ho.TTY = isTerminal(g.stderr)
	ho.Signals = sig

	res, err := harness.Run(c.Context, ho)
	if err != nil {
		if errors.Is(err, harness.ErrUnconfirmedTarget) {
			return badInput(err)
		}
		return &exitError{code: exitBadInput, err: fmt.Errorf("run: %w", err)}
	}
	for _, p := range res.Parts {
		if len(res.Parts) > 1 {
			fmt.Fprintf(g.stdout, "== %s (%s)\n", p.Name, p.API)
		}
		switch {
		case p.Summary != nil:
			p.Summary.Terminal(g.stdout)
		case p.Err != nil:
			fmt.Fprintf(g.stdout, "%s: no report: %v\n", p.Name, p.Err)
		default:
			fmt.Fprintf(g.stdout, "%s: no report yet; build it with: msgload report %s\n", p.Name, p.Dir)
		}
	}
	// The last line: the whole verdict and where to read it.
	switch {
	case res.Whole != nil:
		fmt.Fprintln(g.stdout, res.Whole.Line(res.Dir))
	case len(res.Parts) == 1 && res.Parts[0].Summary != nil:
		fmt.Fprintln(g.stdout, res.Parts[0].Summary.Line(res.Dir))
	default:
		fmt.Fprintf(g.stdout, "%s: %s — %s (no report: msgload report %s builds it)\n", ho.Scenario.Name, strings.ToUpper(res.Verdict()), res.Dir, res.Dir)
	}
	switch {
	case res.Interrupted:
		return &exitError{code: exitInterrupted, err: errors.New("run interrupted; partial results kept in " + res.Dir)}
	case !res.OK():
		v := res.Verdict()
		return &exitError{code: reports.ExitCode(v), err: fmt.Errorf("run %s: %s; see %s", strings.ToUpper(v), verdictReasons(res.Parts), res.Dir)}
	}
	return nil
}

// oneArg checks that exactly one argument was given; a word that looks like a
// flag is named, since it is not one of the command's.
func oneArg(c *cli.Context, cmd, what string) error {
	if c.NArg() == 1 {
		return nil
	}
	for _, a := range c.Args().Slice() {
		if strings.HasPrefix(a, "-") {
			return badInput(fmt.Errorf("%s: %s is not a flag of %s (msgload %s --help lists them)", cmd, a, cmd, cmd))
		}
	}
	return badInput(fmt.Errorf("%s: name exactly one %s, got %d", cmd, what, c.NArg()))
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// version is the module version and VCS revision the binary was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
		if s.Key == "vcs.modified" && s.Value == "true" {
			v += "+dirty"
		}
	}
	return v
}

// buildCommit is the commit given by the linker (make build: -X
// main.buildCommit=…), used when the build stamped no VCS information (Go
// stamps none in a git worktree, or with -buildvcs=false).
var buildCommit string

// buildVCS is the module version, the VCS revision ("+dirty" when the work
// tree was modified) and its time, from the build's information; a binary
// built without VCS stamping has no revision.
func buildVCS() (version, commit, commitTime string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown", buildCommit, ""
	}
	version = bi.Main.Version
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.time":
			commitTime = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if commit != "" && dirty {
		commit += "+dirty"
	}
	if commit == "" {
		commit = buildCommit
	}
	return version, commit, commitTime
}

// verdictReasons sums up why the parts did not pass, for the error line.
func verdictReasons(parts []harness.Part) string {
	var why []string
	for _, p := range parts {
		switch {
		case p.Err != nil:
			why = append(why, p.Name+": did not finish: "+p.Err.Error())
		case p.Summary == nil:
			why = append(why, p.Name+": no report")
		default:
			for _, r := range p.Summary.VerdictReasons {
				if len(parts) > 1 {
					r = p.Name + ": " + r
				}
				why = append(why, r)
			}
		}
	}
	if len(why) == 0 {
		return "no reason given"
	}
	return strings.Join(why, "; ")
}
