package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// compareCommand puts the key figures of two runs side by side.
func (g *globalState) compareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare two runs (run directories or summary.json files); exit 1 on a regression",
		ArgsUsage: "BASE NEW",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text or markdown"},
			&cli.StringFlag{Name: "latency-tolerance", Value: "10%", Usage: "how much a latency may grow before it is a regression"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return badInput(errors.New("compare: want two arguments, BASE and NEW"))
			}
			tol, err := parseTolerance(c.String("latency-tolerance"))
			if err != nil {
				return badInput(err)
			}
			format := c.String("format")
			if format != "text" && format != "markdown" {
				return badInput(fmt.Errorf("compare: --format %q: want text or markdown", format))
			}
			base, err := readSummaryArg(c.Args().Get(0))
			if err != nil {
				return badInput(err)
			}
			nw, err := readSummaryArg(c.Args().Get(1))
			if err != nil {
				return badInput(err)
			}
			cmp := reports.Compare(base, nw, reports.Tolerance{Latency: tol})
			if format == "markdown" {
				err = cmp.WriteMarkdown(g.stdout)
			} else {
				err = cmp.WriteText(g.stdout)
			}
			if err != nil {
				return err
			}
			if cmp.Regression {
				return &exitError{code: exitThresholds, err: errors.New("regression")}
			}
			return nil
		},
	}
}

// readSummaryArg reads a summary.json, or the one inside a run directory.
func readSummaryArg(p string) (*reports.Summary, error) {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		p = filepath.Join(p, rundir.SummaryFile)
	}
	return reports.ReadSummary(p)
}

// parseTolerance reads "10%" or "0.1".
func parseTolerance(s string) (float64, error) {
	v, isPct := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("--latency-tolerance %q: want a percentage like 10%%", s)
	}
	if isPct {
		f /= 100
	}
	return f, nil
}
