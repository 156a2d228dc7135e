package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/reports"
)

// reportCommand rebuilds the reports of a run directory from its raw files.
func (g *globalState) reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "rebuild summary.json, report.html, report.md and junit.xml of a run directory (of each part, for a run of several)",
		ArgsUsage: "RUN_DIR",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing but errors"},
		},
		Action: func(c *cli.Context) error {
			quiet := c.Bool("quiet")
			var args []string
			for _, a := range c.Args().Slice() { // flags after RUN_DIR too
				if a == "-q" || a == "--quiet" || a == "-quiet" {
					quiet = true
					continue
				}
				args = append(args, a)
			}
			if len(args) != 1 {
				return badInput(errors.New("report: want exactly one argument, the run directory; see 'msgload report --help'"))
			}
			return g.runReport(args[0], quiet)
		},
	}
}

func (g *globalState) runReport(dir string, quiet bool) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return badInput(fmt.Errorf("report: %q is not a run directory", dir))
	}
	if parts := reports.PartDirs(dir); len(parts) > 0 {
		// A run of several parts: every part, then the whole run at the top.
		w, err := reports.RebuildRun(dir)
		if err != nil {
			// Everything refused is about the input: the run's files or thresholds.
			return badInput(fmt.Errorf("report %s: %w", dir, err))
		}
		if !quiet {
			for i, s := range w.Summaries() {
				fmt.Fprintf(g.stdout, "== %s\n", w.Parts[i].Name)
				s.TerminalWith(g.stdout, g.terminal())
			}
			fmt.Fprintln(g.stdout, w.Line(dir))
		}
		if v := w.Verdict; v != reports.VerdictPass {
			return &exitError{code: reports.ExitCode(v), err: fmt.Errorf("verdict %s: %s", strings.ToUpper(v), strings.Join(w.VerdictReasons, "; "))}
		}
		return nil
	}
	var verdicts, why []string
	s, err := reports.Build(dir)
	if err != nil {
		// Everything Build refuses is about its input: the run's files or thresholds.
		return badInput(fmt.Errorf("report %s: %w", dir, err))
	}
	if !quiet {
		s.TerminalWith(g.stdout, g.terminal())
	}
	verdicts = append(verdicts, s.Verdict)
	why = append(why, s.VerdictReasons...)
	// pass 0, fail and error 1, incomplete 130: the worst part decides.
	if v := reports.WorstVerdict(verdicts...); v != reports.VerdictPass {
		return &exitError{code: reports.ExitCode(v), err: fmt.Errorf("verdict %s: %s", strings.ToUpper(v), strings.Join(why, "; "))}
	}
	return nil
}
