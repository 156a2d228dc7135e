package grafana

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// The run filter (grafana/README.md "How a dashboard follows the run"): every
// series a panel or annotation reads belongs to the run chosen in $run_id and
// the part chosen in $part, in one of three ways.
//
//   - Embedded simulator and sink series carry run_id (and part) labels:
//     the selector matches run_id=~"$run_id", part=~"$part".
//   - Attacker series are joined on the run's info by process and part:
//     `… * on (instance, job, part) group_left () max by (instance, job, part)
//     (msgload_run_info{run_id=~"$run_id", part=~"$part"})`.
//   - A standalone simulator or sink has no run: its series (run_id="") are
//     kept while the chosen run is alive, `… * on () group_left ()
//     max(msgload_run_info{run_id=~"$run_id", part=~"$part"})`.
const (
	runIDVariable = "run_id"
	partVariable  = "part"
	runInfoMetric = "msgload_run_info"
	// Values given to $run_id and $part to find them again in the parsed query.
	runSentinel  = "RUN_SENTINEL"
	partSentinel = "PART_SENTINEL"
)

// joinLabels are the labels an attacker join must match on: the process that
// served the series and the part of the run.
var joinLabels = []string{"instance", "job", "part"}

// errNoRunFilter is returned for a query that reads a series without the run
// filter.
var errNoRunFilter = errors.New("not filtered by the selected run")

// checkRunFilter parses a panel or annotation expression, with $run_id and
// $part replaced by sentinels and the other variables by vars, and returns an
// error naming each selector that does not follow the run filter. A query that
// reads no series at all is refused too: it would draw the same line for every
// run.
func checkRunFilter(expr string, vars map[string]string) error {
	vs := map[string]string{}
	for k, v := range vars {
		vs[k] = v
	}
	vs[runIDVariable], vs[partVariable] = runSentinel, partSentinel
	e, err := parser.ParseExpr(expand(expr, vs, 5*time.Second, 10*time.Minute))
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	var problems []string
	selectors := 0
	parser.Inspect(e, func(n parser.Node, path []parser.Node) error {
		sel, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		selectors++
		if p := selectorRunProblem(sel, path); p != "" {
			problems = append(problems, p)
		}
		return nil
	})
	if selectors == 0 {
		problems = append(problems, "reads no series (join the constant on "+runInfoMetric+")")
	}
	if len(problems) > 0 {
		back := strings.NewReplacer(runSentinel, "$"+runIDVariable, partSentinel, "$"+partVariable)
		return fmt.Errorf("%w: %s", errNoRunFilter, back.Replace(strings.Join(problems, "; ")))
	}
	return nil
}

// selectorRunProblem says why sel, found under the ancestors path, is not
// tied to the selected run; "" when it is.
func selectorRunProblem(sel *parser.VectorSelector, path []parser.Node) string {
	run, part, standalone := runMatchers(sel)
	switch {
	case sel.Name == runInfoMetric:
		if !run || !part {
			return fmt.Sprintf("%s must match run_id=~\"$run_id\" and part=~\"$part\"", sel)
		}
		return ""
	case run && part:
		return ""
	}
	for i := len(path) - 1; i >= 0; i-- {
		b, ok := path[i].(*parser.BinaryExpr)
		if !ok || b.VectorMatching == nil || !contains(b.LHS, sel) || !filteredRunInfo(b.RHS) {
			continue
		}
		if b.Op != parser.MUL && b.Op != parser.LAND {
			continue
		}
		on := b.VectorMatching.MatchingLabels
		if !b.VectorMatching.On {
			continue
		}
		if len(on) == 0 {
			if standalone {
				return ""
			}
			return fmt.Sprintf("%s is joined on () (by time) but does not select run_id=\"\": only a standalone sim or sink may be", sel)
		}
		if hasAll(on, joinLabels) {
			return ""
		}
		return fmt.Sprintf("%s is joined on (%s), want on (%s)", sel, strings.Join(on, ", "), strings.Join(joinLabels, ", "))
	}
	return fmt.Sprintf("%s: no run_id=~\"$run_id\", part=~\"$part\" and no join on %s", sel, runInfoMetric)
}

// runMatchers reports whether sel matches run_id=~"$run_id", part=~"$part",
// and run_id="" (a standalone process's series).
func runMatchers(sel *parser.VectorSelector) (run, part, standalone bool) {
	for _, m := range sel.LabelMatchers {
		switch {
		case m.Name == runIDVariable && m.Type == labels.MatchRegexp && m.Value == runSentinel:
			run = true
		case m.Name == partVariable && m.Type == labels.MatchRegexp && m.Value == partSentinel:
			part = true
		case m.Name == runIDVariable && m.Type == labels.MatchEqual && m.Value == "":
			standalone = true
		}
	}
	return run, part, standalone
}

// filteredRunInfo reports whether e reads msgload_run_info, every read of it
// filtered by the run and the part.
func filteredRunInfo(e parser.Node) bool {
	found, ok := false, true
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if sel, is := n.(*parser.VectorSelector); is {
			run, part, _ := runMatchers(sel)
			if sel.Name != runInfoMetric || !run || !part {
				ok = false
			} else {
				found = true
			}
		}
		return nil
	})
	return found && ok
}

func contains(e parser.Node, target *parser.VectorSelector) bool {
	found := false
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if n == target {
			found = true
		}
		return nil
	})
	return found
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		ok := false
		for _, h := range have {
			ok = ok || h == w
		}
		if !ok {
			return false
		}
	}
	return true
}
