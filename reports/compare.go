package reports

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Tolerance is how much worse NEW may be than BASE before compare calls it a
// regression, and what it takes to tell a change from noise.
type Tolerance struct {
	Latency float64 // relative: 0.10 lets a latency grow by 10%
	// RequestFloor and DeliveryFloor (seconds) are absolute floors: a request
	// or delivery latency percentile that moved by no more than this is "same".
	RequestFloor, DeliveryFloor float64
	// MinSamples is how many values of a latency each run must have before a
	// change of its percentiles can be a regression (or an improvement).
	MinSamples int64
	// Confidence of the significance test (0.95 when 0).
	Confidence float64
}

// DefaultTolerance is what `msgload compare` uses without flags.
func DefaultTolerance() Tolerance {
	return Tolerance{Latency: 0.10, RequestFloor: 0.005, DeliveryFloor: 0.020, MinSamples: 50, Confidence: 0.95}
}

func (t Tolerance) confidence() float64 {
	if t.Confidence <= 0 || t.Confidence >= 1 {
		return 0.95
	}
	return t.Confidence
}

// Row verdicts.
const (
	rowSame         = "same" // equal, within the floor, or not significant
	rowBetter       = "better"
	rowWorse        = "worse" // worse, but within tolerance
	RowRegression   = "regression"
	rowChanged      = "changed"      // different, neither better nor worse
	rowInconclusive = "inconclusive" // a latency moved past the floor but a run has too few values to tell
)

// row is one key figure of both runs.
type row struct {
	Name    string `json:"name"`
	Base    string `json:"base"`
	New     string `json:"new"`
	Delta   string `json:"delta"`
	Verdict string `json:"verdict"`
	Note    string `json:"note,omitempty"` // why a latency row is what it is: the test's interval, the floor, too few values
}

// Comparison is BASE against NEW, row by row.
type Comparison struct {
	Base, New  string // run ids
	Tolerance  Tolerance
	Rows       []row
	Regression bool
}

// compare is CompareRuns without raw latencies: a latency change past the
// tolerance, the floor and the minimum sample size is a regression untested.
func compare(base, new *Summary, tol Tolerance) Comparison {
	return CompareRuns(Run{Summary: base}, Run{Summary: new}, tol)
}

// CompareRuns puts the key figures of two runs side by side. A regression is a
// latency percentile that grew past the tolerance and the absolute floor, with
// enough values in both runs, by a change the significance test tells from
// noise (see latencyRow); any new lost or duplicate delivery; more accepted
// beyond the limit; or a change in 429 behaviour (429s appearing or
// disappearing, a different limiter verdict).
func CompareRuns(baseRun, newRun Run, tol Tolerance) Comparison {
	base, new := baseRun.Summary, newRun.Summary
	c := Comparison{Base: base.Run.ID, New: new.Run.ID, Tolerance: tol}
	add := func(r row) {
		if r.Verdict == RowRegression {
			c.Regression = true
		}
		c.Rows = append(c.Rows, r)
	}
	var reqB, reqN, delB, delN []float64
	if baseRun.Samples != nil && newRun.Samples != nil {
		reqB, reqN = baseRun.Samples.Request, newRun.Samples.Request
		delB, delN = baseRun.Samples.Delivery, newRun.Samples.Delivery
	}
	lat := func(name string, bp, np percentiles, q float64, bs, ns []float64, floor float64) {
		add(latencyRow(name, bp, np, q, bs, ns, floor, tol, baseRun.Samples != nil && newRun.Samples != nil))
	}
	count := func(name string, b, n int64, regressOnRise bool) {
		r := row{Name: name, Base: fmt.Sprint(b), New: fmt.Sprint(n), Delta: fmt.Sprintf("%+d", n-b)}
		switch {
		case n == b:
			r.Verdict = rowSame
		case n < b:
			r.Verdict = rowBetter
		case regressOnRise:
			r.Verdict = RowRegression
		default:
			r.Verdict = rowWorse
		}
		add(r)
	}
	// dcount is count for a delivery figure, which a run with delivery: none
	// does not have: "not measured", a regression when NEW lost it.
	dcount := func(name string, b, n int64, regressOnRise bool) {
		bm, nm := base.Delivery.Measured, new.Delivery.Measured
		if bm && nm {
			count(name, b, n, regressOnRise)
			return
		}
		r := row{Name: name, Base: notMeasured, New: notMeasured, Verdict: rowSame}
		if bm {
			r.Base = fmt.Sprint(b)
		}
		if nm {
			r.New = fmt.Sprint(n)
		}
		switch {
		case bm && !nm:
			r.Verdict = RowRegression
		case nm && !bm:
			r.Verdict = rowChanged
		}
		add(r)
	}
	info := func(name string, b, n int64) {
		r := row{Name: name, Base: fmt.Sprint(b), New: fmt.Sprint(n), Delta: fmt.Sprintf("%+d", n-b), Verdict: rowSame}
		if n != b {
			r.Verdict = rowChanged
		}
		add(r)
	}
	info("requests", base.Requests.Total, new.Requests.Total)
	info("messages accepted", base.Requests.Accepted, new.Requests.Accepted)
	br, nr := base.Requests.Latency, new.Requests.Latency
	bd, nd := base.Delivery.Latency, new.Delivery.Latency
	for _, q := range []float64{50, 95, 99} {
		lat(fmt.Sprintf("request latency p%v", q), br, nr, q, reqB, reqN, tol.RequestFloor)
	}
	for _, q := range []float64{50, 95, 99} {
		lat(fmt.Sprintf("delivery latency p%v", q), bd, nd, q, delB, delN, tol.DeliveryFloor)
	}
	dcount("delivery lost", base.Delivery.Lost, new.Delivery.Lost, true)
	dcount("delivery duplicates", base.Delivery.Duplicates, new.Delivery.Duplicates, true)
	count("duplicate deliveries", base.Idempotency.DuplicateDeliveries, new.Idempotency.DuplicateDeliveries, true)
	count("idempotency mismatches", base.Idempotency.Mismatches, new.Idempotency.Mismatches, true)
	dcount("unmatched callbacks", base.Delivery.Unmatched, new.Delivery.Unmatched, false)
	dcount("malformed callbacks", base.Delivery.Malformed, new.Delivery.Malformed, true)
	count("excess accepted", base.RateLimit.ExcessAccepted, new.RateLimit.ExcessAccepted, true)
	b429, n429 := base.RateLimit.Rejected429, new.RateLimit.Rejected429
	r := row{Name: "429 answers", Base: fmt.Sprint(b429), New: fmt.Sprint(n429), Delta: fmt.Sprintf("%+d", n429-b429), Verdict: rowSame}
	switch {
	case (b429 == 0) != (n429 == 0):
		r.Verdict = RowRegression // the service started or stopped limiting
	case n429 != b429:
		r.Verdict = rowChanged
	}
	add(r)
	ba, na := base.RateLimit.Algorithm.Verdict, new.RateLimit.Algorithm.Verdict
	r = row{Name: "limiter", Base: ba, New: na, Delta: "", Verdict: rowSame}
	if ba != na {
		r.Verdict = rowChanged
		if named(ba) && named(na) {
			r.Verdict = RowRegression
		}
	}
	add(r)
	r = row{Name: "verdict", Base: base.verdictWord(), New: new.verdictWord(), Verdict: rowSame}
	if base.OK() != new.OK() {
		r.Verdict = rowBetter
		if !new.OK() {
			r.Verdict = RowRegression
		}
	}
	if r.Verdict == rowSame && r.Base != r.New {
		r.Verdict = rowChanged // fail ↔ incomplete ↔ error
	}
	add(r)
	return c
}

func relDelta(b, n float64) string {
	if b == 0 {
		if n == 0 {
			return "0%"
		}
		return "new"
	}
	return fmt.Sprintf("%+.1f%%", 100*(n-b)/b)
}

// describe says what a latency must do to be a regression, for the heading.
func (t Tolerance) describe() string {
	return fmt.Sprintf("latency tolerance %s%%, floor %s request / %s delivery, at least %d values, %s%% bootstrap interval",
		num(100*t.Latency), dur(t.RequestFloor), dur(t.DeliveryFloor), t.MinSamples, num(100*t.confidence()))
}

func (c Comparison) verdictLine() string {
	if c.Regression {
		return "REGRESSION"
	}
	return "no regression"
}

// WriteText writes the comparison as an aligned table.
func (c Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "compare %s → %s (%s): %s\n", c.Base, c.New, c.Tolerance.describe(), c.verdictLine())
	wn, wb, wnew, wd := len("figure"), len("base"), len("new"), len("delta")
	for _, r := range c.Rows {
		wn, wb, wnew, wd = max(wn, len(r.Name)), max(wb, len(r.Base)), max(wnew, len(r.New)), max(wd, len(r.Delta))
	}
	wv := len("verdict")
	for _, r := range c.Rows {
		wv = max(wv, len(r.Verdict))
	}
	line := func(cols ...string) {
		l := fmt.Sprintf("%-*s  %*s  %*s  %*s  %-*s  %s", wn, cols[0], wb, cols[1], wnew, cols[2], wd, cols[3], wv, cols[4], cols[5])
		b.WriteString(strings.TrimRight(l, " ") + "\n")
	}
	line("figure", "base", "new", "delta", "verdict", "note")
	for _, r := range c.Rows {
		line(r.Name, r.Base, r.New, r.Delta, r.Verdict, r.Note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the comparison as a Markdown table.
func (c Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## msgload compare: %s\n\n`%s` → `%s`, %s.\n\n", c.verdictLine(), c.Base, c.New, c.Tolerance.describe())
	b.WriteString("| Figure | Base | New | Delta | Verdict | Note |\n|---|---|---|---|---|---|\n")
	for _, r := range c.Rows {
		v := r.Verdict
		if v == RowRegression {
			v = "**regression**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(r.Name), mdEscape(r.Base), mdEscape(r.New), mdEscape(r.Delta), v, mdEscape(r.Note))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// named is a limiter verdict that names an algorithm ("cannot tell" and "not
// exercised" do not): only a change between two named ones is a regression.
func named(v string) bool { return v != algoUnknown && v != algoNotExercised && v != "" }

// latencyRow judges one latency percentile q of both runs. In order:
//   - a side without data: NEW losing data BASE had is a regression (it cannot
//     be vouched for), BASE without data is "changed";
//   - a side whose percentile is only a lower bound (its rank among the
//     messages without a final status): boundRow;
//   - equal, or moved by no more than the floor: "same";
//   - a run with fewer than MinSamples values: "inconclusive";
//   - with raw latencies (bs, ns; tested true), the bootstrap interval of the
//     change: one that holds 0 is "same" (not significant);
//   - lower: "better"; higher past the tolerance: "regression"; higher within
//     it: "worse".
//
// Without raw latencies (tested false) nothing can be tested and a change past
// the tolerance, the floor and the minimum is a regression, noted "not tested".
func latencyRow(name string, bp, np percentiles, q float64, bs, ns []float64, floor float64, tol Tolerance, tested bool) row {
	fig := "p" + num(q)
	b, bLow := bp.figure(fig)
	n, nLow := np.figure(fig)
	r := row{Name: name, Base: bp.showFigure(fig), New: np.showFigure(fig), Delta: relDelta(b, n)}
	switch {
	case !bp.Has() && !np.Has():
		r.Delta, r.Verdict = "", rowSame
		return r
	case !np.Has():
		r.Delta, r.Verdict = "", RowRegression
		return r
	case !bp.Has():
		r.Delta, r.Verdict = "", rowChanged
		return r
	case bLow || nLow:
		return boundRow(r, bp, np, b, n, bLow, nLow)
	case n == b:
		r.Verdict = rowSame
		return r
	case math.Abs(n-b) <= floor:
		r.Verdict, r.Note = rowSame, "within the floor of "+dur(floor)
		return r
	case bp.Count < tol.MinSamples || np.Count < tol.MinSamples:
		r.Verdict = rowInconclusive
		r.Note = fmt.Sprintf("too few values to tell (%d and %d; %d needed)", bp.Count, np.Count, tol.MinSamples)
		return r
	}
	switch {
	case !tested:
		r.Note = "not tested: no raw latencies"
	case int64(len(bs)) != bp.Count || int64(len(ns)) != np.Count:
		tested = false
		r.Note = "not tested: the raw latencies do not match summary.json"
	default:
		lo, hi := shiftInterval(bs, ns, q, tol.confidence())
		interval := fmt.Sprintf("%s%% interval of the change %s … %s", num(100*tol.confidence()), signedDur(lo), signedDur(hi))
		if lo <= 0 && hi >= 0 {
			r.Verdict, r.Note = rowSame, "not significant: "+interval
			return r
		}
		r.Note = "significant: " + interval
	}
	switch {
	case n < b:
		r.Verdict = rowBetter
	case b == 0 || n > b*(1+tol.Latency):
		r.Verdict = RowRegression
	default:
		r.Verdict = rowWorse
	}
	return r
}

// boundRow judges a percentile that is only a lower bound in one run or both
// (b, n: the value or the bound; bLow, nLow: which are bounds), the safe way:
//   - NEW a bound, BASE a value: a regression (NEW's is at least n; it cannot
//     be vouched no worse, and when n is already past BASE's value it is
//     surely worse: the slowdown survivorship would hide);
//   - BASE a bound, NEW a value: "better" when NEW's value is at or below
//     BASE's bound, else "changed" (BASE's true value is unknown);
//   - both bounds: "inconclusive" (delivery lost says how many more).
func boundRow(r row, bp, np percentiles, b, n float64, bLow, nLow bool) row {
	r.Delta = ""
	switch {
	case nLow && !bLow:
		r.Verdict = RowRegression
		r.Note = "NEW's is only a lower bound" + np.censoredNote()
		if n > b {
			r.Note += ", already above BASE's"
		}
	case bLow && !nLow:
		r.Verdict, r.Note = rowChanged, "BASE's is only a lower bound"+bp.censoredNote()
		if n <= b {
			r.Verdict = rowBetter
		}
	default:
		r.Verdict = rowInconclusive
		r.Note = fmt.Sprintf("both only lower bounds (%d of %d and %d of %d without a final status)", bp.Censored, bp.Count, np.Censored, np.Count)
	}
	return r
}

// signedDur prints a signed duration the way the tables do.
func signedDur(s float64) string {
	switch {
	case math.IsInf(s, 1):
		return "+∞"
	case math.IsInf(s, -1):
		return "−∞"
	case s > 0:
		return "+" + dur(s)
	case s < 0:
		return "−" + dur(-s)
	}
	return "0"
}
