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

	"github.com/msgload/msgload/internal/memlimit"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
)

// reportCommand rebuilds the reports of a run directory from its raw files.
func (g *globalState) reportCommand() *cli.Command {
	var bl baselineOpts
	return &cli.Command{
		Name:      "report",
		Usage:     "rebuild summary.json, report.html, report.md and junit.xml of a run directory (of each part, for a run of several); with --merge, make one run of the shards of a sharded run",
		ArgsUsage: "RUN_DIR | --merge OUT SHARD_DIR… | --merge OUT --wait-for N",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors"},
			&cli.StringFlag{Name: "merge", Usage: "make the run directory `OUT` of a sharded run from its shards' directories (msgload run --shard I/N) given as arguments: its raw files are the union of theirs, its summary, reports and verdict those of the union (counts added, percentiles over every value, thresholds once); msgload report OUT builds them again"},
			&cli.IntFlag{Name: "wait-for", Usage: "with --merge: the shards are OUT/shard-0 … shard-(`N`-1), not listed; wait until all N have ended (run.json has an end), at most --wait-timeout, then merge those there (one missing or unfinished makes the run incomplete, named)"},
			&cli.DurationFlag{Name: "wait-timeout", Value: time.Hour, Usage: "with --wait-for: wait at most `D` for the shards"},
			&cli.StringSliceFlag{Name: "sink-log", Usage: "with --merge: the events come from these sink logs (`FILE` events.jsonl, or a sink's data directory), one per sink replica, instead of the shards' copies; the run's tagged events and the untagged ones of its window"},
		}, bl.flags()...),
		Action: func(c *cli.Context) error {
			defer memlimit.ForReport()()
			quiet := c.Bool("quiet")
			var args []string
			for _, a := range c.Args().Slice() { // flags after RUN_DIR too
				if a == "-q" || a == "--quiet" || a == "-quiet" {
					quiet = true
					continue
				}
				args = append(args, a)
			}
			if bl.dir != "" && c.String("merge") != "" {
				return badInput(fmt.Errorf("report: --baseline goes with one RUN_DIR, not --merge: %w", errBaselineParts))
			}
			if n := c.Int("wait-for"); n != 0 || c.IsSet("wait-timeout") {
				if c.String("merge") == "" || len(args) > 0 {
					return badInput(errors.New("report: --wait-for N goes with --merge OUT and no shard directories (they are OUT/shard-I); see 'msgload report --help'"))
				}
				return g.runWaitMerge(c.Context, c.String("merge"), n, c.Duration("wait-timeout"), c.StringSlice("sink-log"), quiet)
			}
			if out := c.String("merge"); out != "" {
				if len(args) == 0 {
					return badInput(errors.New("report: --merge OUT needs the shards' directories as arguments; see 'msgload report --help'"))
				}
				return g.runMerge(out, args, c.StringSlice("sink-log"), quiet)
			}
			if len(c.StringSlice("sink-log")) > 0 {
				return badInput(errors.New("report: --sink-log goes with --merge; see 'msgload report --help'"))
			}
			if len(args) != 1 {
				return badInput(errors.New("report: want exactly one argument, the run directory; see 'msgload report --help'"))
			}
			return g.runReport(args[0], quiet, &bl)
		},
	}
}

func (g *globalState) runReport(dir string, quiet bool, bl *baselineOpts) error {
	if err := isDir("report", dir); err != nil {
		return err
	}
	if bl.dir != "" && (len(reports.PartDirs(dir)) > 0 || len(shardDirs(dir)) > 0) {
		return badInput(fmt.Errorf("report: %s is a run of several parts or shards: %w", dir, errBaselineParts))
	}
	if err := bl.load("report", runDigest(dir)); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.MetaFile)); errors.Is(err, os.ErrNotExist) {
		// The shards of a sharded run are not parts: their figures are shares
		// of one run, judged only once merged. Merge them here (before the
		// parts: reported as parts, no threshold would be judged).
		if shards := shardDirs(dir); len(shards) > 0 {
			return g.runMerge(dir, shards, nil, quiet)
		}
	}
	if parts := reports.PartDirs(dir); len(parts) > 0 {
		// A run of several parts: every part, then the whole run at the top.
		w, err := render.RebuildRun(dir)
		if err != nil {
			// Everything refused is about the input: the run's files or thresholds.
			return badInput(fmt.Errorf("report %s: %w", dir, err))
		}
		if !quiet {
			for i, s := range w.Summaries() {
				fmt.Fprintf(g.stdout, "== %s\n", w.Parts[i].Name)
				render.TerminalWith(g.stdout, s, g.terminal())
			}
			fmt.Fprintln(g.stdout, w.Line(dir))
		}
		if v := w.Verdict; v != reports.VerdictPass {
			return &exitError{code: reports.ExitCode(v), err: fmt.Errorf("verdict %s: %s", strings.ToUpper(v), strings.Join(w.VerdictReasons, "; "))}
		}
		return nil
	}
	var verdicts, why []string
	s, err := render.Build(dir)
	if err != nil {
		// Everything Build refuses is about its input: the run's files or thresholds.
		return badInput(fmt.Errorf("report %s: %w", dir, err))
	}
	if err := bl.apply(s, dir); err != nil {
		return &exitError{code: reports.ExitCode(reports.VerdictError), err: fmt.Errorf("report %s: against the baseline: %w", dir, err)}
	}
	if !quiet {
		render.TerminalWith(g.stdout, s, g.terminal())
	}
	verdicts = append(verdicts, s.Verdict)
	why = append(why, s.VerdictReasons...)
	// pass 0, fail and error 1, incomplete 3: the worst part decides.
	if v := reports.WorstVerdict(verdicts...); v != reports.VerdictPass {
		return &exitError{code: reports.ExitCode(v), err: fmt.Errorf("verdict %s: %s", strings.ToUpper(v), strings.Join(why, "; "))}
	}
	return nil
}

// isDir says, as bad input of cmd, why dir cannot be a run directory: it
// does not exist, or is no directory.
func isDir(cmd, dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return badInput(fmt.Errorf("%s: %q does not exist", cmd, dir))
	case err != nil:
		return badInput(fmt.Errorf("%s: %w", cmd, err))
	case !st.IsDir():
		return badInput(fmt.Errorf("%s: %q is a file, not a run directory", cmd, dir))
	}
	return nil
}

// runMerge makes the run directory out of a sharded run from its shards'
// directories and prints its summary; the exit code follows its verdict.
func (g *globalState) runMerge(out string, dirs, sinkLogs []string, quiet bool) error {
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return badInput(fmt.Errorf("report --merge: %q is not a shard's run directory", d))
		}
	}
	s, err := render.Merge(out, dirs, reports.MergeOptions{SinkLogs: sinkLogs})
	if err != nil {
		return badInput(fmt.Errorf("report --merge: %w", err))
	}
	if !quiet {
		render.TerminalWith(g.stdout, s, g.terminal())
		m := s.Run.Merged
		fmt.Fprintf(g.stdout, "merged %d of %d shards (%v) into %s\n", len(m.Indexes), m.Shards, m.Indexes, out)
	}
	if s.Verdict != reports.VerdictPass {
		return &exitError{code: reports.ExitCode(s.Verdict), err: fmt.Errorf("verdict %s: %s", strings.ToUpper(s.Verdict), strings.Join(s.VerdictReasons, "; "))}
	}
	return nil
}

// shardDirs lists the directories under dir whose run.json names a shard of
// a sharded run (msgload run --shard I/N writes them as dir/shard-I).
func shardDirs(dir string) []string {
	metas, _ := filepath.Glob(filepath.Join(dir, "*", rundir.MetaFile))
	var out []string
	for _, p := range metas {
		b, err := rundir.ReadFile(p, rundir.MaxDocBytes)
		if err != nil {
			continue
		}
		var m struct {
			Shard *rundir.Shard `json:"shard"`
		}
		if json.Unmarshal(b, &m) == nil && m.Shard != nil {
			out = append(out, filepath.Dir(p))
		}
	}
	return out
}
