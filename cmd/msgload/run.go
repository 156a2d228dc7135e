package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// runOpts are the flags of run, and of replay, which is a run of a recording
// and shares them, their defaults and the end of run (runHarness).
type runOpts struct {
	out           string
	metricsAddr   string
	metricsLinger time.Duration
	maxMessages   int64
	quiet         bool
	json          bool // run --json: the final summary.json on stdout, everything else on stderr

	// checkpoint is how often summary.json is rewritten (partial) while the run goes; 0: never.
	checkpoint time.Duration
	// diskReserve is --disk-reserve as given (a size: 256MiB, 2GB; 0: none).
	diskReserve string

	// baseline: run --baseline (not a flag of replay).
	baseline baselineOpts
}

func (o *runOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "out", Value: "runs", Usage: "parent directory of run directories; each run is a new `DIR`/<id>", Destination: &o.out},
		&cli.StringFlag{Name: "metrics-addr", Value: defaultMetricsAddr, Usage: "serve /metrics of the attacker, simulator and sink on `ADDR` while the run goes (\"\" for none; port 0 for any free one); a busy address given is an error, the default busy falls back to a free port, said on stderr", Destination: &o.metricsAddr},
		&cli.DurationFlag{Name: "metrics-linger", Value: 15 * time.Second, Usage: "after the run, keep /metrics up until one more scrape, at most `DURATION` (only when something scraped it)", Destination: &o.metricsLinger},
		&cli.Int64Flag{Name: "max-messages", Usage: "hard cap of `N` messages really sent (a safety for paid traffic); 0: the scenario's maxMessages", Destination: &o.maxMessages},
		&cli.StringSliceFlag{Name: "confirm-target", Usage: "`HOST` that may be attacked although it is neither embedded nor loopback (repeatable, or a,b: a token endpoint on another host needs its host too)"},
		&cli.DurationFlag{Name: "checkpoint", Value: time.Minute, Usage: "while the run goes, rewrite summary.json (marked partial: the figures so far) every `DURATION`, so a run killed later leaves its figures; 0 for never", Destination: &o.checkpoint},
		&cli.StringFlag{Name: "disk-reserve", Value: "256MiB", Usage: "keep `SIZE` (256MiB, 2GB, …) free on the run directory's disk: a run is refused when less is free at its start, and its sends stop when less is left (run.json disk_low; the run ends incomplete, with its grace period and reports); 0 for none", Destination: &o.diskReserve},
		&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress line and no summary: only the final lines (where the run is) and errors", Destination: &o.quiet},
		&cli.BoolFlag{Name: "json", Usage: "print the final summary.json on stdout (the terminal summary goes to stderr)", Destination: &o.json},
	}
}

// defaultMetricsAddr is --metrics-addr's default (the port of deploy/'s
// Prometheus). Busy, it falls back to a free port, said loudly; an address
// the user set stays strict. A variable so that a test can hold the default.
var defaultMetricsAddr = "127.0.0.1:9464"

// envJobIndex is what a Kubernetes Indexed Job sets in each pod: its index,
// 0 … completions-1. With --shards N (MSGLOAD_RUN_SHARDS) it selects the shard.
const envJobIndex = "JOB_COMPLETION_INDEX"

// shardOpts are the flags of run that split a run among processes.
type shardOpts struct {
	shard   string
	shards  int
	startAt string
	runID   string
	// barrier and barrierTimeout: the start barrier (harness.Options.Barrier).
	barrier        string
	barrierTimeout time.Duration
}

func (o *shardOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "shard", Usage: "run shard `SHARD` = I/N (I from 0 to N-1) of a run split among N processes: by clients (no client spans two shards) or, with fewer clients than shards, by sequence; writes OUT/<id>/shard-I; merge with msgload report --merge", Destination: &o.shard},
		&cli.IntFlag{Name: "shards", Usage: "the run is split among `N` processes and this one's index is $" + envJobIndex + " (what a Kubernetes Indexed Job gives each pod); --shard wins", Destination: &o.shards},
		&cli.StringFlag{Name: "start-at", Usage: "begin the attack at `TIME` (RFC 3339, e.g. 2026-11-23T15:00:00Z), so every shard begins on the same instant; without --run-id the shards derive their common run id from the scenario's name, TIME and N", Destination: &o.startAt},
		&cli.StringFlag{Name: "run-id", Usage: "name the run `ID` (1 to 64 of [A-Za-z0-9_-]) instead of a new id: every shard of a sharded run gives the same", Destination: &o.runID},
		&cli.StringFlag{Name: "barrier", Usage: "start on a barrier in `DIR` (shared by the shards, e.g. on a volume): write this shard's ready marker there and begin once all N shards' are there (at --start-at when given), at most --barrier-timeout later; run.json names the shards missing then (barrier_missing)", Destination: &o.barrier},
		&cli.DurationFlag{Name: "barrier-timeout", Value: 10 * time.Minute, Usage: "without --start-at, wait at most `D` on the --barrier for the other shards", Destination: &o.barrierTimeout},
	}
}

// apply sets the shard, start instant and run id of ho from the flags and
// JOB_COMPLETION_INDEX.
func (o *shardOpts) apply(g *globalState, ho *harness.Options) error {
	switch {
	case o.shard != "":
		i, n, err := rundir.ParseShard(o.shard)
		if err != nil {
			return badInput(fmt.Errorf("run: --shard: %w", err))
		}
		ho.ShardIndex, ho.ShardCount = i, n
	case o.shards != 0:
		if o.shards < 1 {
			return badInput(fmt.Errorf("run: --shards %d: want N ≥ 1", o.shards))
		}
		v := g.getenv(envJobIndex)
		if v == "" {
			return badInput(fmt.Errorf("run: --shards %d needs the shard's index in $%s (Kubernetes sets it in the pods of an Indexed Job), or give --shard I/N", o.shards, envJobIndex))
		}
		i, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || i < 0 || i >= o.shards {
			return badInput(fmt.Errorf("run: %s=%q: want an index from 0 to %d (--shards %d)", envJobIndex, v, o.shards-1, o.shards))
		}
		ho.ShardIndex, ho.ShardCount = i, o.shards
	}
	if o.startAt != "" {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(o.startAt))
		if err != nil {
			return badInput(fmt.Errorf("run: --start-at %q: want an RFC 3339 time such as 2026-11-23T15:00:00Z", o.startAt))
		}
		ho.StartAt = t
	}
	if o.runID != "" && !rundir.ValidRunID(o.runID) {
		return badInput(fmt.Errorf("run: --run-id %q: want 1 to 64 of [A-Za-z0-9_-]", o.runID))
	}
	ho.RunID = o.runID
	ho.Barrier, ho.BarrierTimeout = o.barrier, o.barrierTimeout
	if o.barrier != "" && ho.ShardCount == 0 {
		return badInput(errors.New("run: --barrier is for the shards of a sharded run: give --shard I/N or --shards N"))
	}
	if ho.ShardCount > 0 && ho.RunID == "" && ho.StartAt.IsZero() {
		return badInput(errors.New("run: a sharded run needs one run id for all its shards: give --run-id ID, or --start-at TIME from which every shard derives the same id"))
	}
	return nil
}

func (g *globalState) runCommand() *cli.Command {
	var opts runOpts
	var sh shardOpts
	return &cli.Command{
		Name:      "run",
		Usage:     "run a scenario: start what is embedded, attack, wait for callbacks, write runs/<id>/, exit by thresholds",
		ArgsUsage: "SCENARIO (a built-in name: " + joinNames(scenarios.Builtins()) + "; or a file)",
		Flags:     append(append(opts.flags(), sh.flags()...), opts.baseline.flags()...),
		Action: func(c *cli.Context) error {
			if err := oneArg(c, "run", "scenario"); err != nil {
				return err
			}
			s, err := g.loadScenario(c.Args().First(), opts.maxMessages)
			if err != nil {
				return err
			}
			ho := harness.Options{Scenario: s}
			if err := sh.apply(g, &ho); err != nil {
				return err
			}
			if err := loadRunBaseline(&opts.baseline, ho); err != nil {
				return err
			}
			return g.runHarness(c, ho, opts)
		},
	}
}

// loadScenario loads a scenario and applies --max-messages to it and its
// parts, so the plan and the checks see the cap.
func (g *globalState) loadScenario(name string, maxMessages int64) (*scenarios.Scenario, error) {
	s, err := scenarios.Load(name, g.getenv)
	if err == nil {
		err = capMessages(s, maxMessages)
	}
	if err != nil {
		return nil, badInput(err)
	}
	return s, nil
}

// capMessages applies --max-messages (when > 0) to s and its parts and checks
// s again: of a run's scenario and of a replay's alike.
func capMessages(s *scenarios.Scenario, maxMessages int64) error {
	if maxMessages <= 0 {
		return nil
	}
	s.MaxMessages = maxMessages
	for i := range s.Parts {
		s.Parts[i].MaxMessages = maxMessages
	}
	return s.Validate()
}

// runHarness runs ho with the flags of opts, prints the summary of every part
// and turns the outcome into the exit code: the end of msgload run and of
// msgload replay (cmd, in the messages).
func (g *globalState) runHarness(c *cli.Context, ho harness.Options, opts runOpts) error {
	cmd := c.Command.Name
	g.setProcs(takesCallbacks(ho.Scenario)) // the spare P serves the sink only
	sig, stopSignals := g.signals()
	defer stopSignals()
	ho.Out = opts.out
	ho.MetricsAddr = opts.metricsAddr
	// Only the default falls back when busy (`make run` beside a lingering
	// run); an address given by the flag or its variable is the one scraped.
	ho.MetricsFallback = !c.IsSet("metrics-addr") && opts.metricsAddr == defaultMetricsAddr
	ho.MetricsLinger = opts.metricsLinger
	ho.MaxMessages = opts.maxMessages
	ho.Checkpoint = opts.checkpoint
	if ho.Checkpoint <= 0 {
		ho.Checkpoint = -1 // --checkpoint 0: never (the harness's 0 is its default)
	}
	reserve, err := diskReserve(opts.diskReserve)
	if err != nil {
		return badInput(fmt.Errorf("%s: --disk-reserve %q: %w", cmd, opts.diskReserve, err))
	}
	ho.DiskReserve = reserve
	ho.ConfirmTargets = confirmTargets(c)
	ho.SinkReadToken = g.getenv(envSinkReadToken)
	ho.Version, ho.Commit, ho.CommitTime = buildVCS()
	ho.Host, _ = os.Hostname()
	out := g.stdout // the terminal summary; stderr when stdout carries the JSON
	if opts.json {
		out = g.stderr
	}
	ho.Stdout, ho.Stderr = out, g.stderr
	ho.TTY = g.isTTY(g.stderr)
	ho.Quiet = opts.quiet
	ho.Signals = sig

	res, err := harness.Run(c.Context, ho)
	if err != nil {
		return startError(cmd, err, opts)
	}
	if len(res.Parts) == 1 && res.Parts[0].Summary != nil {
		if err := opts.baseline.apply(res.Parts[0].Summary, res.Parts[0].Dir); err != nil {
			return &exitError{code: reports.ExitCode(reports.VerdictError), err: fmt.Errorf("%s: against the baseline: %w; the run's reports without it are in %s", cmd, err, res.Dir)}
		}
	}
	for _, p := range res.Parts {
		if opts.quiet {
			break // --quiet: the final lines only
		}
		if len(res.Parts) > 1 {
			fmt.Fprintf(out, "== %s (%s)\n", p.Name, p.API)
		}
		writeReplayTable(out, p.Dir)
		switch {
		case p.Summary != nil:
			render.TerminalWith(out, p.Summary, g.terminal())
		case p.Err != nil:
			fmt.Fprintf(out, "%s: no report: %v\n", p.Name, p.Err)
		default:
			fmt.Fprintf(out, "%s: no report yet; build it with: msgload report %s\n", p.Name, p.Dir)
		}
	}
	if res.MetricsAddr != "" {
		fmt.Fprintf(out, "metrics: http://%s/metrics (while the %s went)\n", res.MetricsAddr, cmd)
	}
	fmt.Fprintf(out, "run directory: %s\n", res.Dir)
	if opts.json {
		if err := writeRunJSON(g.stdout, res); err != nil {
			return &exitError{code: exitBadInput, err: fmt.Errorf("%s --json: %w", cmd, err)}
		}
	}
	// The last line: the whole verdict and where to read it.
	switch {
	case res.Whole != nil:
		fmt.Fprintln(out, res.Whole.Line(res.Dir))
	case len(res.Parts) == 1 && res.Parts[0].Summary != nil:
		fmt.Fprintln(out, res.Parts[0].Summary.Line(res.Dir))
	default:
		fmt.Fprintf(out, "%s: %s — %s (no report: msgload report %s builds it)\n", ho.Scenario.Name, strings.ToUpper(res.Verdict()), res.Dir, res.Dir)
	}
	if ho.ShardCount > 0 {
		parent := filepath.Dir(res.Dir)
		fmt.Fprintf(out, "shard %d/%d of run %s: once every shard is done, msgload report --merge %s %s\n",
			ho.ShardIndex, ho.ShardCount, res.ID, parent, filepath.Join(parent, "shard-*"))
	}
	switch {
	case res.Interrupted:
		return &exitError{code: exitInterrupted, err: errors.New(cmd + " interrupted; partial results kept in " + res.Dir)}
	case !res.OK():
		v := res.Verdict()
		return &exitError{code: reports.ExitCode(v), err: fmt.Errorf("%s %s: %s; see %s", cmd, strings.ToUpper(v), verdictReasons(res.Parts), res.Dir)}
	}
	return nil
}

// startError is the exit of a run that could not start (harness.Run's
// error): bad input, or incomplete when the environment kept it from
// starting.
func startError(cmd string, err error, opts runOpts) error {
	switch {
	case errors.Is(err, harness.ErrShardDirExists):
		// Not bad input: the run is incomplete (the environment ran this
		// shard twice), and what the first pod flushed is merged.
		return &exitError{code: exitIncomplete, err: fmt.Errorf("%s: %w", cmd, err)}
	case errors.Is(err, harness.ErrDiskReserve):
		// Not bad input: the environment's disk is full.
		return &exitError{code: exitIncomplete, err: fmt.Errorf("%s: %w", cmd, err)}
	case errors.Is(err, harness.ErrUnconfirmedTarget) || errors.Is(err, harness.ErrShard):
		return badInput(err)
	case errors.Is(err, harness.ErrMetricsAddr):
		return badInput(fmt.Errorf("%s: --metrics-addr %s (or $%s): %w", cmd, opts.metricsAddr, envName(cmd, "metrics-addr"), err))
	}
	return &exitError{code: exitBadInput, err: fmt.Errorf("%s: %w", cmd, err)}
}

// oneArg checks that exactly one argument was given; a word that looks like a
// flag is named, since it is not one of the command's.
func oneArg(c *cli.Context, cmd, what string) error {
	if c.NArg() == 1 {
		return nil
	}
	for _, a := range c.Args().Slice() {
		if strings.HasPrefix(a, "-") {
			return badInput(fmt.Errorf("%s: %s is not a flag of %s; see 'msgload %s --help'", cmd, a, cmd, cmd))
		}
	}
	return badInput(fmt.Errorf("%s: name exactly one %s, got %d; see 'msgload %s --help'", cmd, what, c.NArg(), cmd))
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// buildVCS is what run.json records of the build: the version string
// --version prints, the VCS revision ("+dirty" when the work tree was
// modified) and its time — stamped by the toolchain, else given by make build.
func buildVCS() (ver, rev, at string) {
	bi, _ := debug.ReadBuildInfo()
	_, rev, at = vcsOf(bi, commit, commitDate)
	return version(), rev, at
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

// writeRunJSON prints the run's final summary.json as written: the one at the
// top of the run directory (a run of one part, or a whole-run summary); for a
// run of several parts without one, a JSON array of the parts' summary.json in
// order (null for a part without a report).
func writeRunJSON(w io.Writer, res *harness.Result) error {
	if b, err := rundir.ReadFile(filepath.Join(res.Dir, rundir.SummaryFile), rundir.MaxDocBytes); err == nil {
		_, err = w.Write(b)
		return err
	}
	docs := make([]json.RawMessage, 0, len(res.Parts))
	for _, p := range res.Parts {
		b, err := rundir.ReadFile(filepath.Join(p.Dir, rundir.SummaryFile), rundir.MaxDocBytes)
		if err != nil {
			b = []byte("null")
		}
		docs = append(docs, bytes.TrimSpace(b))
	}
	b, err := json.MarshalIndent(docs, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// confirmTargets reads --confirm-target: repeated, each possibly "a,b".
func confirmTargets(c *cli.Context) []string {
	var out []string
	for _, v := range c.StringSlice("confirm-target") {
		out = append(out, scenarios.SplitHosts(v)...)
	}
	return out
}

// diskReserve reads --disk-reserve: a size in bytes with an optional unit
// (256MiB, 2GB, 1.5GiB; humanize.ParseBytes), as harness.Options.DiskReserve
// takes it: 0 given is none (-1).
func diskReserve(v string) (int64, error) {
	n, err := humanize.ParseBytes(v)
	if err != nil {
		return 0, errors.New("want a size such as 256MiB or 2GB, or 0 for none")
	}
	if n == 0 {
		return -1, nil
	}
	if n > math.MaxInt64 {
		return 0, errors.New("too large")
	}
	return int64(n), nil
}
