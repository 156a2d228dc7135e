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
			// urfave/cli stops at the first argument; the usage puts flags after
			// BASE NEW, so read those here.
			opts := map[string]string{"format": c.String("format"), "latency-tolerance": c.String("latency-tolerance")}
			args, err := trailingFlags(c.Args().Slice(), opts)
			if err != nil {
				return badInput(err)
			}
			if len(args) != 2 {
				return badInput(errors.New("compare: want two arguments, BASE and NEW"))
			}
			tol, err := parseTolerance(opts["latency-tolerance"])
			if err != nil {
				return badInput(err)
			}
			format := opts["format"]
			if format != "text" && format != "markdown" {
				return badInput(fmt.Errorf("compare: --format %q: want text or markdown", format))
			}
			base, err := readSummaryArg(args[0])
			if err != nil {
				return badInput(err)
			}
			nw, err := readSummaryArg(args[1])
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

// trailingFlags takes --name value and --name=value for the names in opts out of
// args (setting opts) and returns the rest.
func trailingFlags(args []string, opts map[string]string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if _, ok := opts[name]; !ok || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			val = args[i]
		}
		opts[name] = val
	}
	return rest, nil
}
