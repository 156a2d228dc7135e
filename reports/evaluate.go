package reports

import (
	"errors"
	"slices"
	"strings"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/thresholds"
)

// evalThreshold judges one compiled threshold (summary.Compiled, the contract's check)
// against s, with the no-data rule (nodata.go); a failing one is the
// environment's when the embedded simulator's own lag touched what it reads
// (simLagTouches), or it reads delivery figures while the sink's log is in
// doubt and messages are lost (sinkDoubt: their loss and latency are not
// known to be the service's).
func evalThreshold(c *compiled, s *Summary) Threshold {
	t := judgeThreshold(c, s)
	t.SimLagOnly = !t.OK && simLagTouches(c, s)
	t.SinkLogOnly = !t.OK && !t.SimLagOnly && s.sinkDoubt != "" && readsDelivery(c)
	return t
}

// readsDelivery says whether c reads a figure of the messages' delivery
// (delivery.*, outcomes.*): what the callbacks, or their absence, make.
func readsDelivery(c *compiled) bool {
	for _, p := range c.Paths {
		name := thresholds.PathString(p)
		if strings.HasPrefix(name, "delivery.") || strings.HasPrefix(name, "outcomes.") {
			return true
		}
	}
	return false
}

// judgeThreshold is evalThreshold without the simulator's lag.
func judgeThreshold(c *compiled, s *Summary) Threshold {
	t := Threshold{Expr: c.String()}
	var why, bounds []string
	for _, p := range c.Paths {
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
	ok, err := c.Holds(&s.Summary)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	if ok {
		if names, why := s.outcomeBound(c); why != "" {
			t.NoData, t.Error = names, boundsError(nil, []string{why})
			return t
		}
	}
	t.OK = ok
	if t.OK {
		t.Value = 1
	}
	if f, ok := c.Left(&s.Summary); ok {
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
		c, err := summary.CompileThreshold(e)
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
		s.Thresholds = append(s.Thresholds, evalThreshold(c, s))
	}
	s.decide()
	return nil
}
