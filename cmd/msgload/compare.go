package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

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
			&cli.StringFlag{Name: "format", Value: "text", Usage: "text, markdown or json"},
			&cli.BoolFlag{Name: "json", Usage: "the same as --format json: every row with what decided it, its p-value and interval"},
			&cli.StringFlag{Name: "latency-tolerance", Value: "10%", Usage: "how much a latency may grow before it is a regression"},
			&cli.StringFlag{Name: "request-floor", Value: "5ms", Usage: "a request latency percentile that moved by no more than this is the same"},
			&cli.StringFlag{Name: "delivery-floor", Value: "20ms", Usage: "a delivery latency percentile that moved by no more than this is the same"},
			&cli.StringFlag{Name: "min-samples", Usage: "no longer used (accepted for old scripts): the tests decide at any sample size"},
		},
		Action: func(c *cli.Context) error {
			// urfave/cli stops at the first argument; the usage puts flags after
			// BASE NEW, so read those here.
			opts := map[string]string{"format": c.String("format"), "latency-tolerance": c.String("latency-tolerance"),
				"request-floor": c.String("request-floor"), "delivery-floor": c.String("delivery-floor"), "min-samples": c.String("min-samples")}
			if c.Bool("json") {
				opts["format"] = "json"
			}
			args, err := trailingFlags(c.Args().Slice(), opts, "json")
			if err != nil {
				return badInput(err)
			}
			if opts["json"] == "true" {
				opts["format"] = "json"
			}
			if opts["min-samples"] != "" {
				fmt.Fprintln(g.stderr, "msgload compare: --min-samples is no longer used: the tests on the raw latencies decide at any sample size")
			}
			if len(args) != 2 {
				return badInput(errors.New("compare: want two arguments, BASE and NEW; see 'msgload compare --help'"))
			}
			if base, nw, ok := readContracts(args); ok { // two characterisations
				return g.compareContracts(base, nw)
			}
			tol, err := compareTolerance(opts)
			if err != nil {
				return badInput(err)
			}
			format := opts["format"]
			if format != "text" && format != "markdown" && format != "json" {
				return badInput(fmt.Errorf("compare: --format %q: want text, markdown or json", format))
			}
			pairs, err := summaryPairs(args[0], args[1])
			if err != nil {
				return badInput(err)
			}
			if format == "json" {
				return g.compareJSON(pairs, tol)
			}
			regression := false
			for i, p := range pairs {
				if len(pairs) > 1 {
					if i > 0 {
						fmt.Fprintln(g.stdout)
					}
					if format == "markdown" {
						fmt.Fprintf(g.stdout, "### Part %s\n\n", p.name)
					} else {
						fmt.Fprintf(g.stdout, "== %s\n", p.name)
					}
				}
				cmp := reports.CompareRuns(p.base, p.new, tol)
				if format == "markdown" {
					err = cmp.WriteMarkdown(g.stdout)
				} else {
					err = cmp.WriteText(g.stdout)
				}
				if err != nil {
					return err
				}
				regression = regression || cmp.Regression
			}
			if regression {
				return &exitError{code: exitThresholds, err: errors.New("regression")}
			}
			return nil
		},
	}
}

// compareJSON writes every pair's comparison as one JSON object,
// {"regression": …, "comparisons": [{"part": …, "base": …, "rows": […]}]},
// the same shape for one pair or several parts; exit 1 on a regression.
func (g *globalState) compareJSON(pairs []summaryPair, tol reports.Tolerance) error {
	type part struct {
		Part string `json:"part"`
		reports.Comparison
	}
	out := struct {
		Regression  bool   `json:"regression"`
		Comparisons []part `json:"comparisons"`
	}{Comparisons: []part{}}
	for _, p := range pairs {
		cmp := reports.CompareRuns(p.base, p.new, tol)
		out.Regression = out.Regression || cmp.Regression
		out.Comparisons = append(out.Comparisons, part{p.name, cmp})
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	if _, err := g.stdout.Write(append(b, '\n')); err != nil {
		return err
	}
	if out.Regression {
		return &exitError{code: exitThresholds, err: errors.New("regression")}
	}
	return nil
}

type summaryPair struct {
	name      string
	base, new reports.Run
}

// summaryPairs reads the two summaries to compare; two run directories of
// several parts are compared part by part (parts matched by name, every part of
// BASE must be in NEW).
func summaryPairs(base, nw string) ([]summaryPair, error) {
	base, nw = wholeRunDir(base), wholeRunDir(nw)
	bp, np := parts(base), parts(nw)
	if len(bp) == 0 || len(np) == 0 {
		b, err := readSummaryArg(base)
		if err != nil {
			return nil, err
		}
		n, err := readSummaryArg(nw)
		if err != nil {
			return nil, err
		}
		return []summaryPair{{filepath.Base(nw), b, n}}, nil
	}
	var out []summaryPair
	for _, name := range slices.Sorted(maps.Keys(bp)) {
		if _, ok := np[name]; !ok {
			return nil, fmt.Errorf("compare: part %q of %s is not in %s", name, base, nw)
		}
		b, err := readRun(bp[name])
		if err != nil {
			return nil, err
		}
		n, err := readRun(np[name])
		if err != nil {
			return nil, err
		}
		out = append(out, summaryPair{name, b, n})
	}
	return out, nil
}

// parts returns the summaries of the parts of a run directory of several parts
// (none when dir has a summary of its own or is not a directory), by part name.
func parts(dir string) map[string]string {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil
	}
	if s, err := reports.ReadSummary(filepath.Join(dir, rundir.SummaryFile)); err == nil && s.Kind != reports.KindRun {
		return nil // a run without parts (a whole run's summary.json leads to its parts)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*", rundir.SummaryFile))
	m := map[string]string{}
	for _, f := range found {
		m[filepath.Base(filepath.Dir(f))] = f
	}
	return m
}

// wholeRunDir is the run directory of a whole run's summary.json (its parts
// are compared), or p as it is.
func wholeRunDir(p string) string {
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		if s, err := reports.ReadSummary(p); err == nil && s.Kind == reports.KindRun {
			return filepath.Dir(p)
		}
	}
	return p
}

// readSummaryArg reads a summary.json, or the one inside a run directory, and
// the raw latencies of the run directory it is in when they are there.
func readSummaryArg(p string) (reports.Run, error) {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return reports.Run{}, badInput(fmt.Errorf("compare: %s: neither a run directory nor a summary.json", p))
	case st.IsDir():
		f := filepath.Join(p, rundir.SummaryFile)
		if _, err := os.Stat(f); err != nil {
			return reports.Run{}, badInput(fmt.Errorf("compare: %q is not a run directory (no %s in it or in a part below it)", p, rundir.SummaryFile))
		}
		p = f
	}
	r, err := readRun(p)
	if err != nil {
		return reports.Run{}, badInput(err)
	}
	return r, nil
}

// readRun reads the summary.json at p and the raw latencies of its directory;
// without raw files (a summary.json copied alone) the latencies are not
// tested for significance, and compare says so.
func readRun(p string) (reports.Run, error) {
	s, err := reports.ReadSummary(p)
	if err != nil {
		return reports.Run{}, err
	}
	r := reports.Run{Summary: s}
	if smp, err := reports.ReadSamples(filepath.Dir(p)); err == nil {
		r.Samples = smp
	}
	return r, nil
}

// compareTolerance reads compare's flags into a Tolerance.
func compareTolerance(opts map[string]string) (reports.Tolerance, error) {
	tol := reports.DefaultTolerance()
	var err error
	if tol.Latency, err = parseTolerance(opts["latency-tolerance"]); err != nil {
		return tol, err
	}
	for _, f := range []struct {
		name string
		to   *float64
	}{{"request-floor", &tol.RequestFloor}, {"delivery-floor", &tol.DeliveryFloor}} {
		d, err := time.ParseDuration(opts[f.name])
		if err != nil || d < 0 {
			return tol, fmt.Errorf("--%s %q: want a duration like 5ms", f.name, opts[f.name])
		}
		*f.to = d.Seconds()
	}
	if m := opts["min-samples"]; m != "" {
		if n, err := strconv.ParseInt(m, 10, 64); err != nil || n < 0 {
			return tol, fmt.Errorf("--min-samples %q: want a count like 50 (no longer used)", m)
		}
	}
	return tol, nil
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

// trailingFlags takes --name value and --name=value for the names in opts,
// and --name (set to "true") for the boolean names, out of args (setting
// opts) and returns the rest.
func trailingFlags(args []string, opts map[string]string, boolean ...string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isBool := slices.Contains(boolean, name)
		if _, ok := opts[name]; (!ok && !isBool) || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		if isBool && !hasVal {
			val = "true"
		} else if !hasVal {
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
