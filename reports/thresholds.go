package reports

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/msgload/msgload/thresholds"
)

// errBadThreshold means a threshold expression does not compile or does not
// give a yes or no.
var errBadThreshold = errors.New("bad threshold")

// Thresholds are written in the language of package thresholds, over the
// summary's fields (the `expr` tags of Summary); reports adds what depends on
// the summary's meaning: a figure without data fails (nodata.go).

// compiled is a threshold ready to run, and the fixed paths of the fields it
// reads, for the no-data rule (nodata.go).
type compiled struct {
	*thresholds.Expr
	paths [][]any
}

// CheckThresholdFor says what is wrong with a threshold expression (an
// unknown field, a syntax error, a result that is not true or false, a latency
// read through a computed path), or nil: the rule the report's evaluation
// applies, which scenario validation calls so that such a threshold stops the
// run before it starts, not after its load. For a scenario whose delivery is
// via via (sink, poll, none; "" = sink) it also refuses a threshold on a
// figure the report calls not measured (a delivery figure of delivery: none),
// which could never be judged.
func CheckThresholdFor(src, via string) error {
	c, err := checkThreshold(src)
	if err != nil {
		return err
	}
	var at []any // the longest path read that is not measured: the figure, not its object
	var why string
	for _, p := range c.paths {
		if w := unmeasured(p, via); w != "" && len(p) > len(at) {
			at, why = p, w
		}
	}
	if at == nil {
		return nil
	}
	return fmt.Errorf("%s: %s, so no run of this scenario can judge it; measure delivery (delivery.via: sink or poll) or drop the threshold", thresholds.PathString(at), why)
}

// checkThreshold compiles one threshold expression against the summary's
// fields, and refuses a latency read through a computed path.
func checkThreshold(src string) (*compiled, error) {
	e, err := thresholds.Compile(src, Summary{})
	if err != nil {
		return nil, err
	}
	if at := e.ComputedRead(latencyRead); at != "" {
		return nil, fmt.Errorf("%s reads a latency through a computed path, so a figure without data could not be told from 0: name it (delivery.by_channel[\"sms\"].p95)", at)
	}
	return &compiled{Expr: e, paths: e.Paths()}, nil
}

// compileThreshold is checkThreshold with the error the report gives.
func compileThreshold(src string) (*compiled, error) {
	c, err := checkThreshold(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errBadThreshold, src, err)
	}
	return c, nil
}

// latencyRead says whether reading field of an object of type owner reads a
// percentile, max or mean of a latency object: whether it has data cannot be
// told before evaluation when the path to it is computed, so such a threshold
// is refused.
func latencyRead(owner reflect.Type, field string) bool {
	switch {
	case owner == percentilesType && field != "count":
		return true
	case owner.Kind() == reflect.Interface && latencyFigure[field]: // values(delivery.by_channel) is []any
		return true
	}
	return false
}

func (c *compiled) eval(s *Summary) Threshold {
	t := Threshold{Expr: c.String()}
	var why, bounds []string
	for _, p := range c.paths {
		name := thresholds.PathString(p)
		if slices.Contains(t.NoData, name) {
			continue
		}
		if r := s.noData(p); r != "" {
			t.NoData = append(t.NoData, name)
			why = append(why, name+": "+r)
		} else if r := s.lowerBound(p, name); r != "" {
			// Only a lower bound: null in summary.json like a figure
			// without data, and the threshold fails (nodata.go).
			t.NoData = append(t.NoData, name)
			bounds = append(bounds, r)
		}
	}
	if len(why) > 0 || len(bounds) > 0 {
		t.Error = boundsError(why, bounds)
		return t
	}
	ok, err := c.Run(*s)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	t.OK = ok
	t.simLagOnly = !ok && c.holdsWithoutSimLag(s)
	if t.OK {
		t.Value = 1
	}
	if f, ok := c.Left(*s); ok {
		t.Value = round6(f)
	}
	return t
}

// boundsError is a threshold's error when figures it reads have no data
// (why) or are only lower bounds (bounds).
func boundsError(why, bounds []string) string {
	var parts []string
	if len(why) > 0 {
		parts = append(parts, "no data: "+strings.Join(why, "; "))
	}
	if len(bounds) > 0 {
		parts = append(parts, "only a lower bound: "+strings.Join(bounds, "; "))
	}
	return strings.Join(parts, "; ")
}

// Evaluate compiles every threshold first (any that does not compile is bad
// input, reported together), then evaluates them all against s and sets the
// verdict (and ok).
func (s *Summary) Evaluate(exprs []string) error {
	progs := make([]*compiled, 0, len(exprs))
	var errs []error
	for _, e := range exprs {
		c, err := compileThreshold(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		progs = append(progs, c)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	s.Thresholds = make([]Threshold, 0, len(progs))
	for _, c := range progs {
		s.Thresholds = append(s.Thresholds, c.eval(s))
	}
	s.decide()
	return nil
}
