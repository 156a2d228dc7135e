package summary

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/msgload/msgload/thresholds"
)

// ErrBadThreshold means a threshold expression does not compile or does not
// give a yes or no.
var ErrBadThreshold = errors.New("bad threshold")

// Thresholds are written in the language of package thresholds, over the
// summary's fields (the `expr` tags of Summary); reports adds what depends on
// the summary's meaning: a figure without data fails (nodata.go).

// Compiled is a threshold ready to run, and the fixed paths of the fields it
// reads, for the no-data rule (nodata.go).
//
// It runs only on a *Summary (Holds, Left): the expression engine takes any
// value, and on another type (a struct that embeds Summary) every figure
// would read as absent.
type Compiled struct {
	expr  *thresholds.Expr
	Paths [][]any
}

// String is the threshold as written.
func (c *Compiled) String() string { return c.expr.String() }

// Compares says whether the threshold is a comparison (its left side has a value).
func (c *Compiled) Compares() bool { return c.expr.Compares() }

// UpperBound is the path of the figure the threshold bounds from above, if it is one.
func (c *Compiled) UpperBound() ([]any, bool) { return c.expr.UpperBound() }

// Holds evaluates the threshold on s.
func (c *Compiled) Holds(s *Summary) (bool, error) { return c.expr.Run(*s) }

// Left is the value of the comparison's left side on s, and whether it is a number.
func (c *Compiled) Left(s *Summary) (float64, bool) { return c.expr.Left(*s) }

// CheckThresholdFor says what is wrong with a threshold expression (an
// unknown field, a syntax error, a result that is not true or false, a latency
// read through a computed path), or nil: the rule the report's evaluation
// applies, which scenario validation calls so that such a threshold stops the
// run before it starts, not after its load. For a scenario of scope sc it
// also refuses a threshold on a figure no run of it can measure (sc.why: a
// delivery figure of delivery: none, the excess over a limit the scenario
// does not name, the answers to resends it never makes), which would fail
// "no data" at the end of every run — an hour's soak lost to a typo.
func CheckThresholdFor(src string, sc Scope) error {
	c, err := checkThreshold(src)
	if err != nil {
		return err
	}
	var at []any // the longest path read that is not measured: the figure, not its object
	var why string
	for _, p := range c.Paths {
		if w := sc.why(p); w != "" && len(p) > len(at) {
			at, why = p, w
		}
	}
	if at == nil {
		return nil
	}
	return fmt.Errorf("%s: %s", thresholds.PathString(at), why)
}

// Scope is what runs of a scenario can measure at all, for CheckThresholdFor.
// Its zero value but Via measures everything the delivery does.
type Scope struct {
	Via string // delivery.via: sink, poll, none ("" = sink)
	// NoLimit: the scenario names no rate limit (limit.rate), so a run
	// counts no accepted request against a window (rate_limit.excess_accepted
	// and .max_accepted_per_window have no data).
	NoLimit bool
	// NoResend: nothing in the scenario sends a message twice under its key
	// (no idempotency probes, retry.max 0, no recording replayed), so no
	// answer is ever compared with its message's first (idempotency.mismatches
	// has no data).
	NoResend bool
}

// why says why no run of scope sc can judge the figure at p, and what to do,
// or "".
func (sc Scope) why(p []any) string {
	if w := Unmeasured(p, sc.Via); w != "" {
		return w + ", so no run of this scenario can judge it; measure delivery (delivery.via: sink or poll) or drop the threshold"
	}
	if len(p) != 2 {
		return ""
	}
	head, _ := p[0].(string)
	name, _ := p[1].(string)
	switch {
	case sc.NoLimit && head == "rate_limit" && (name == "excess_accepted" || name == "max_accepted_per_window"):
		return "the scenario names no rate limit to count the accepted requests against, so no run of it can judge it; add limit: { rate: N/1m } or drop the threshold"
	case sc.NoResend && head == "idempotency" && name == "mismatches":
		return "nothing in the scenario resends a message under its key (no idempotency probes, retry.max 0), so no answer is ever compared and no run of it can judge it; add idempotency: { probes: 10% } or a retry, or drop the threshold"
	}
	return ""
}

// checkThreshold compiles one threshold expression against the summary's
// fields, and refuses a latency read through a computed path.
func checkThreshold(src string) (*Compiled, error) {
	e, err := thresholds.Compile(src, Summary{})
	if err != nil {
		return nil, err
	}
	if at := e.ComputedRead(latencyRead); at != "" {
		return nil, fmt.Errorf("%s reads a latency through a computed path, so a figure without data could not be told from 0: name it (delivery.by_channel[\"sms\"].p95)", at)
	}
	return &Compiled{expr: e, Paths: e.Paths()}, nil
}

// CompileThreshold is checkThreshold with the error the report gives.
func CompileThreshold(src string) (*Compiled, error) {
	c, err := checkThreshold(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadThreshold, src, err)
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
	case owner.Kind() == reflect.Interface && LatencyFigure[field]: // values(delivery.by_channel) is []any
		return true
	}
	return false
}

// LatencyFigure are the figures of a latency object that have no data when its count is 0.
var LatencyFigure = map[string]bool{"p50": true, "p90": true, "p95": true, "p99": true, "max": true, "mean": true}

// percentilesType is the type of a latency object (latencyRead).
var percentilesType = reflect.TypeOf(Percentiles{})

// Unmeasured says why the figure at p is not measured at all by a run whose
// delivery is via via, or "": with delivery: none every delivery figure (but
// delivery.via and .measured), the delivery outcomes and
// idempotency.duplicate_deliveries are "not measured" in the reports. The
// report gives them no data; msgload validate refuses a threshold on them.
func Unmeasured(p []any, via string) string {
	if via != "none" || len(p) < 2 {
		return ""
	}
	head, _ := p[0].(string)
	name, _ := p[1].(string)
	switch {
	case head == "delivery" && name != "via" && name != "measured",
		head == "idempotency" && name == "duplicate_deliveries",
		head == "outcomes" && slices.Contains(OutcomeDeliveryCounts, name):
		return "delivery is not measured (delivery: " + via + ")"
	}
	return ""
}
