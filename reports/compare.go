package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/msgload/msgload/reports/summary"
)

// Tolerance is how much worse NEW may be than BASE before compare calls it a
// regression, and the confidence of the tests that tell a change from noise.
type Tolerance struct {
	Latency float64 `json:"latency"` // relative: 0.10 lets a latency grow by 10%
	// RequestFloor and DeliveryFloor (seconds) are absolute floors: a request
	// or delivery latency percentile that moved by no more than this is "same".
	RequestFloor  float64 `json:"request_floor_s"`
	DeliveryFloor float64 `json:"delivery_floor_s"`
	// Confidence of the tests (0.99 when 0): a change is significant when
	// "no change" is rejected at this level.
	Confidence float64 `json:"confidence"`
}

// DefaultTolerance is what `msgload compare` uses without flags.
func DefaultTolerance() Tolerance {
	return Tolerance{Latency: 0.10, RequestFloor: 0.005, DeliveryFloor: 0.020, Confidence: 0.99}
}

func (t Tolerance) confidence() float64 {
	if t.Confidence <= 0 || t.Confidence >= 1 {
		return 0.99
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
	rowInconclusive = "inconclusive" // both percentiles only lower bounds
)

// row is one key figure of both runs.
type row struct {
	Name    string `json:"name"`
	Base    string `json:"base"`
	New     string `json:"new"`
	Delta   string `json:"delta"`
	Verdict string `json:"verdict"`
	Note    string `json:"note,omitempty"` // what decided: the test, its p-value and interval, the floor, the rule
	// DecidedBy names what decided the verdict (decided* below).
	DecidedBy string  `json:"decided_by,omitempty"`
	Test      rowTest `json:"-"` // written by MarshalJSON
}

// What decides a row's verdict.
const (
	decidedEqual    = "equal"
	decidedFloor    = "floor"                                // moved by no more than the absolute floor
	decidedInterval = "percentile interval"                  // the exact interval of the percentile's change (tails)
	decidedBoth     = "mann-whitney and percentile interval" // the median: both must reject
	decidedFisher   = "fisher exact"                         // a count drawn at random, against its binomial spread
	decidedRule     = "rule"                                 // no test: any change counts (a count that is never drawn at random, a verdict)
	decidedNoData   = "no data"
	decidedBound    = "lower bound" // a censored percentile (boundRow)
	decidedUntested = "not tested"  // no raw latencies: tolerance and floor only
)

// rowTest is the evidence behind a row, for --json: the two-sided p-value
// of its test and the interval of the change NEW − BASE (seconds; ±Inf
// unbounded). Plain values, so rows stay comparable.
type rowTest struct {
	HasP     bool
	P        float64
	PMethod  string // "exact" or "normal approximation"
	HasShift bool
	Low      float64
	High     float64
	Conf     float64
}

// MarshalJSON writes the row with its evidence: "p", "p_method" and
// "interval" {low, high, confidence} (an unbounded end is null), each only
// when the row has it.
func (r row) MarshalJSON() ([]byte, error) {
	type plain row
	type interval struct {
		Low        *float64 `json:"low"`
		High       *float64 `json:"high"`
		Confidence float64  `json:"confidence"`
	}
	out := struct {
		plain
		P        *float64  `json:"p,omitempty"`
		PMethod  string    `json:"p_method,omitempty"`
		Interval *interval `json:"interval,omitempty"`
	}{plain: plain(r)}
	if r.Test.HasP {
		out.P, out.PMethod = &r.Test.P, r.Test.PMethod
	}
	finite := func(v float64) *float64 {
		if math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	if r.Test.HasShift {
		out.Interval = &interval{finite(r.Test.Low), finite(r.Test.High), r.Test.Conf}
	}
	return json.Marshal(out)
}

// Comparison is BASE against NEW, row by row.
type Comparison struct {
	Base       string    `json:"base"` // run ids
	New        string    `json:"new"`
	Tolerance  Tolerance `json:"tolerance"`
	Rows       []row     `json:"rows"`
	Regression bool      `json:"regression"`
}

// CompareRuns puts the key figures of two runs side by side. A regression is a
// latency percentile that grew past the tolerance and the absolute floor by a
// change the tests on both runs' raw latencies tell from noise (latencyRow);
// more lost or duplicate deliveries than their binomial spread allows
// (countRow); any new idempotency mismatch, malformed callback or message
// accepted beyond the limit; a change in 429 behaviour (429s appearing or
// disappearing, a different limiter verdict); the verdict leaving pass.
func CompareRuns(baseRun, newRun Run, tol Tolerance) Comparison {
	base, new := baseRun.Summary, newRun.Summary
	c := Comparison{Base: base.Run.ID, New: new.Run.ID, Tolerance: tol}
	add := func(r row) {
		if r.Verdict == RowRegression {
			c.Regression = true
		}
		c.Rows = append(c.Rows, r)
	}
	var req, del latencyEvidence
	if baseRun.Samples != nil && newRun.Samples != nil {
		req = newLatencyEvidence(baseRun.Samples.Request, newRun.Samples.Request, base.Requests.Latency, new.Requests.Latency)
		del = newLatencyEvidence(baseRun.Samples.Delivery, newRun.Samples.Delivery, base.Delivery.Latency, new.Delivery.Latency)
	} else {
		req.why, del.why = "not tested: no raw latencies", "not tested: no raw latencies"
	}
	req.lacked, del.lacked = summary.NoAnswer, summary.NoFinalStatus
	// count is a count that is never drawn at random: any rise is one.
	count := func(name string, b, n int64, regressOnRise bool) {
		add(ruleCountRow(name, b, n, regressOnRise))
	}
	// dcount is a delivery figure, which a run with delivery: none does not
	// have: "not measured", a regression when NEW lost it. Against its
	// binomial spread over per (the accepted messages or callbacks each run
	// had) when random, else by the rule.
	dcount := func(name string, b, n int64, per func(*Summary) int64, random, regressOnRise bool) {
		bm, nm := base.Delivery.Measured, new.Delivery.Measured
		switch {
		case bm && nm && random:
			add(countRow(name, b, per(base), n, per(new), regressOnRise, tol))
		case bm && nm:
			count(name, b, n, regressOnRise)
		default:
			add(noDataRow(name, b, n, bm, nm))
		}
	}
	// hcount is a count that has data only where has says (a count over
	// nothing is no data: nodata.go).
	hcount := func(name string, b, n int64, has func(*Summary) bool) {
		if bh, nh := has(base), has(new); !bh || !nh {
			add(noDataRow(name, b, n, bh, nh))
			return
		}
		count(name, b, n, true)
	}
	info := func(name string, b, n int64) {
		r := row{Name: name, Base: fmt.Sprint(b), New: fmt.Sprint(n), Delta: fmt.Sprintf("%+d", n-b), Verdict: rowSame, DecidedBy: decidedRule}
		if n != b {
			r.Verdict = rowChanged
		}
		add(r)
	}
	info("requests", base.Requests.Total, new.Requests.Total)
	info("messages accepted", base.Requests.Accepted, new.Requests.Accepted)
	for _, q := range []float64{50, 95, 99} {
		add(latencyRow(fmt.Sprintf("request latency p%v", q), base.Requests.Latency, new.Requests.Latency, q, req, tol.RequestFloor, tol))
	}
	for _, q := range []float64{50, 95, 99} {
		add(latencyRow(fmt.Sprintf("delivery latency p%v", q), base.Delivery.Latency, new.Delivery.Latency, q, del, tol.DeliveryFloor, tol))
	}
	expected := func(s *Summary) int64 { return s.Delivery.Expected }
	callbacks := func(s *Summary) int64 { return s.Delivery.Events }
	accepted := func(s *Summary) int64 { return s.Requests.Accepted }
	dcount("delivery lost", base.Delivery.Lost, new.Delivery.Lost, expected, true, true)
	dcount("delivery duplicates", base.Delivery.Duplicates, new.Delivery.Duplicates, callbacks, true, true)
	if bm, nm := base.Idempotency.Measured, new.Idempotency.Measured; bm && nm {
		add(countRow("duplicate deliveries", base.Idempotency.DuplicateDeliveries, accepted(base), new.Idempotency.DuplicateDeliveries, accepted(new), true, tol))
	} else {
		add(noDataRow("duplicate deliveries", base.Idempotency.DuplicateDeliveries, new.Idempotency.DuplicateDeliveries, bm, nm))
	}
	hcount("idempotency mismatches", base.Idempotency.Mismatches, new.Idempotency.Mismatches, func(s *Summary) bool { return s.Idempotency.MismatchesMeasured() })
	dcount("unmatched callbacks", base.Delivery.Unmatched, new.Delivery.Unmatched, callbacks, true, false)
	dcount("malformed callbacks", base.Delivery.Malformed, new.Delivery.Malformed, nil, false, true)
	hcount("excess accepted", base.RateLimit.ExcessAccepted, new.RateLimit.ExcessAccepted, func(s *Summary) bool { return s.RateLimit.Window > 0 })
	for _, r := range rateLimitRows(base, new) {
		add(r)
	}
	add(verdictRow(base, new))
	return c
}

// noDataRow is the row of a count one run or both have no data for ("not
// measured"): a regression when NEW lost it, a change when NEW gained it.
func noDataRow(name string, b, n int64, bHas, nHas bool) row {
	r := row{Name: name, Base: notMeasured, New: notMeasured, Verdict: rowSame, DecidedBy: decidedNoData}
	if bHas {
		r.Base = fmt.Sprint(b)
	}
	if nHas {
		r.New = fmt.Sprint(n)
	}
	switch {
	case bHas && !nHas:
		r.Verdict = RowRegression
	case nHas && !bHas:
		r.Verdict = rowChanged
	}
	return r
}

// rateLimitRows compare the 429 answers (a service that started or stopped
// limiting regressed) and the limiter named (another named algorithm is a
// regression; named ↔ cannot tell a change).
func rateLimitRows(base, new *Summary) []row {
	b429, n429 := base.RateLimit.Rejected429, new.RateLimit.Rejected429
	r := row{Name: "429 answers", Base: fmt.Sprint(b429), New: fmt.Sprint(n429), Delta: fmt.Sprintf("%+d", n429-b429), Verdict: rowSame, DecidedBy: decidedRule}
	switch {
	case (b429 == 0) != (n429 == 0):
		r.Verdict = RowRegression // the service started or stopped limiting
	case n429 != b429:
		r.Verdict = rowChanged
	}
	ba, na := base.RateLimit.Algorithm.Verdict, new.RateLimit.Algorithm.Verdict
	l := row{Name: "limiter", Base: ba, New: na, Delta: "", Verdict: rowSame, DecidedBy: decidedRule}
	if ba != na {
		l.Verdict = rowChanged
		if named(ba) && named(na) {
			l.Verdict = RowRegression
		}
	}
	return []row{r, l}
}

// verdictRow compares the two verdicts: NEW failing where BASE passed is a
// regression, the other way better, fail ↔ incomplete ↔ error a change.
func verdictRow(base, new *Summary) row {
	r := row{Name: "verdict", Base: base.VerdictWord(), New: new.VerdictWord(), Verdict: rowSame, DecidedBy: decidedRule}
	if base.OK() != new.OK() {
		r.Verdict = rowBetter
		if !new.OK() {
			r.Verdict = RowRegression
		}
	}
	if r.Verdict == rowSame && r.Base != r.New {
		r.Verdict = rowChanged // fail ↔ incomplete ↔ error
	}
	return r
}

// ruleCountRow judges a count that a working service never draws at random
// (idempotency mismatches, malformed callbacks, accepted beyond the limit):
// fewer is better, more a regression (regressOnRise) or worse.
func ruleCountRow(name string, b, n int64, regressOnRise bool) row {
	r := row{Name: name, Base: fmt.Sprint(b), New: fmt.Sprint(n), Delta: fmt.Sprintf("%+d", n-b), DecidedBy: decidedRule}
	r.Verdict = rowSame
	if n != b {
		r.Verdict = moved(n > b, regressOnRise)
	}
	return r
}

// moved is the verdict of a count that rose (up) or fell, told apart: a
// fall is better, a rise a regression (regressOnRise) or worse.
func moved(up, regressOnRise bool) string {
	switch {
	case !up:
		return rowBetter
	case regressOnRise:
		return RowRegression
	}
	return rowWorse
}

// countRow judges a count the service (or the simulator's faults) may draw
// at random — b of bn in BASE against n of nn in NEW (lost of the accepted
// messages, duplicates of the callbacks) — against its binomial spread:
// Fisher's exact test of one rate for both runs. Only a rate that the test
// tells apart at the tolerance's confidence is better, or a regression
// (regressOnRise; else worse). Without a denominator to test against (none,
// or a count above it), ruleCountRow judges it.
func countRow(name string, b, bn, n, nn int64, regressOnRise bool, tol Tolerance) row {
	if bn <= 0 || nn <= 0 || b > bn || n > nn {
		return ruleCountRow(name, b, n, regressOnRise)
	}
	r := row{Name: name, Base: fmt.Sprint(b), New: fmt.Sprint(n), Delta: fmt.Sprintf("%+d", n-b), Verdict: rowSame, DecidedBy: decidedFisher}
	if n == b && (bn == nn || b == 0) {
		r.DecidedBy = decidedEqual // the same rate, or none of it in either run
		return r
	}
	p := fisherExact(b, bn, n, nn)
	r.Test = rowTest{HasP: true, P: p, PMethod: "exact"}
	rates := fmt.Sprintf("%d of %d → %d of %d", b, bn, n, nn)
	if p >= 1-tol.confidence() {
		r.Note = fmt.Sprintf("within the binomial spread: Fisher p = %s (%s)", pValue(p), rates)
		return r
	}
	r.Note = fmt.Sprintf("Fisher p = %s (%s)", pValue(p), rates)
	r.Verdict = moved(float64(n)/float64(nn) > float64(b)/float64(bn), regressOnRise)
	return r
}

// pValue prints a p-value with two significant digits: 0.42, 3.1e-14.
func pValue(p float64) string { return strconv.FormatFloat(p, 'g', 2, 64) }

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
	return fmt.Sprintf("latency tolerance %s%%, floor %s request / %s delivery; tests at %s%%: Mann–Whitney U, exact percentile intervals, Fisher's exact test for counts drawn at random",
		Num(100*t.Latency), dur(t.RequestFloor), dur(t.DeliveryFloor), Num(100*t.confidence()))
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
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", MDEscape(r.Name), MDEscape(r.Base), MDEscape(r.New), MDEscape(r.Delta), v, MDEscape(r.Note))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the comparison as one JSON object: the runs, the
// tolerance, regression, and every row with its verdict, what decided it
// (decided_by), its test's p-value and the interval of the change.
func (c Comparison) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// named is a limiter verdict that names an algorithm ("cannot tell" and "not
// exercised" do not): only a change between two named ones is a regression.
func named(v string) bool { return v != algoUnknown && v != algoNotExercised && v != "" }

// latencyEvidence is what the tests have of one latency of both runs: the
// raw values and the Mann–Whitney test on them, or why there is none.
type latencyEvidence struct {
	base, new []float64
	mw        mannWhitney
	why       string // "not tested: …" when the latency cannot be tested
	lacked    string // what a censored value lacked (summary.NoAnswer, NoFinalStatus)
}

// newLatencyEvidence runs the rank test on one latency's raw values of both
// runs, when they are the values behind both summaries' percentiles.
func newLatencyEvidence(bs, ns []float64, bp, np percentiles) latencyEvidence {
	if int64(len(bs)) != bp.Count || int64(len(ns)) != np.Count {
		return latencyEvidence{why: "not tested: the raw latencies do not match summary.json"}
	}
	e := latencyEvidence{base: bs, new: ns}
	if len(bs) > 0 && len(ns) > 0 {
		e.mw = mannWhitneyTest(bs, ns)
	}
	return e
}

// latencyRow judges one latency percentile q of both runs. In order:
//   - a side without data: NEW losing data BASE had is a regression (it cannot
//     be vouched for), BASE without data is "changed";
//   - a side whose percentile is only a lower bound (its rank among the
//     messages without a final status): boundRow;
//   - without raw latencies: untestedRow;
//   - equal, or moved by no more than the floor: "same";
//   - not significant at the tolerance's confidence: "same". Significant is
//     the exact interval of the percentile's change (shiftInterval) wholly
//     on one side of 0 — and for the median also the Mann–Whitney test on
//     the whole distribution rejecting "no change" the same way;
//   - lower: "better"; higher past the tolerance: "regression"; higher within
//     it: "worse".
//
// The note says what decided, with the p-value and the interval.
func latencyRow(name string, bp, np percentiles, q float64, ev latencyEvidence, floor float64, tol Tolerance) row {
	fig := "p" + Num(q)
	b, bLow := bp.Figure(fig)
	n, nLow := np.Figure(fig)
	r := row{Name: name, Base: bp.ShowFigure(fig), New: np.ShowFigure(fig), Delta: relDelta(b, n)}
	switch {
	case !bp.Has() && !np.Has():
		r.Delta, r.Verdict, r.DecidedBy = "", rowSame, decidedNoData
		return r
	case !np.Has():
		r.Delta, r.Verdict, r.DecidedBy = "", RowRegression, decidedNoData
		return r
	case !bp.Has():
		r.Delta, r.Verdict, r.DecidedBy = "", rowChanged, decidedNoData
		return r
	case bLow || nLow:
		r.DecidedBy = decidedBound
		return boundRow(r, bp, np, b, n, bLow, nLow, ev.lacked)
	case ev.why != "":
		return untestedRow(r, b, n, floor, tol, ev.why)
	}
	conf := tol.confidence()
	lo, hi := shiftInterval(ev.base, ev.new, q, conf)
	r.Test = rowTest{HasShift: true, Low: lo, High: hi, Conf: conf}
	evidence := fmt.Sprintf("%s %s [%s, %s] (%s%%, exact)", fig, signedDur(n-b), signedDur(lo), signedDur(hi), Num(100*conf))
	if lo == math.Inf(-1) || hi == math.Inf(1) {
		evidence += fmt.Sprintf(": %d and %d values cannot bound a %s on both sides", len(ev.base), len(ev.new), fig)
	}
	up, down := lo > 0, hi < 0
	r.DecidedBy = decidedInterval
	if q == 50 { // the median: the rank test on the whole distribution too
		r.DecidedBy = decidedBoth
		r.Test.HasP, r.Test.P, r.Test.PMethod = true, ev.mw.P, ev.mw.method()
		rejects := ev.mw.P < 1-conf
		up = up && rejects && ev.mw.slower() > 0.5
		down = down && rejects && ev.mw.slower() < 0.5
		evidence = fmt.Sprintf("Mann–Whitney p = %s (%s); %s", pValue(ev.mw.P), ev.mw.method(), evidence)
	}
	switch {
	case n == b && !up && !down:
		r.Verdict, r.DecidedBy, r.Note = rowSame, decidedEqual, evidence
	case math.Abs(n-b) <= floor:
		r.Verdict, r.DecidedBy, r.Note = rowSame, decidedFloor, "within the floor of "+dur(floor)+": "+evidence
	case !up && !down:
		r.Verdict, r.Note = rowSame, "not significant: "+evidence
	case down && n < b:
		r.Verdict, r.Note = rowBetter, evidence
	case down || n < b: // the interval and the point disagree on the side
		r.Verdict, r.Note = rowChanged, evidence
	case b == 0 || n > b*(1+tol.Latency):
		r.Verdict, r.Note = RowRegression, evidence
	default:
		r.Verdict, r.Note = rowWorse, "within the tolerance: "+evidence
	}
	return r
}

// untestedRow judges a latency percentile without raw latencies to test
// (why says so): equal or within the floor is "same", lower "better",
// higher past the tolerance a regression (it cannot be vouched no worse),
// else "worse".
func untestedRow(r row, b, n, floor float64, tol Tolerance, why string) row {
	r.DecidedBy = decidedUntested
	switch {
	case n == b:
		r.Verdict, r.DecidedBy = rowSame, decidedEqual
	case math.Abs(n-b) <= floor:
		r.Verdict, r.DecidedBy, r.Note = rowSame, decidedFloor, "within the floor of "+dur(floor)
	case n < b:
		r.Verdict, r.Note = rowBetter, why
	case b == 0 || n > b*(1+tol.Latency):
		r.Verdict, r.Note = RowRegression, why
	default:
		r.Verdict, r.Note = rowWorse, why
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
func boundRow(r row, bp, np percentiles, b, n float64, bLow, nLow bool, what string) row {
	r.Delta = ""
	switch {
	case nLow && !bLow:
		r.Verdict = RowRegression
		r.Note = "NEW's is only a lower bound" + np.CensoredNoteOf(what)
		if n > b {
			r.Note += ", already above BASE's"
		}
	case bLow && !nLow:
		r.Verdict, r.Note = rowChanged, "BASE's is only a lower bound"+bp.CensoredNoteOf(what)
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
