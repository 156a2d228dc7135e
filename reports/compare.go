package reports

import (
	"fmt"
	"io"
	"strings"
)

// Tolerance is how much worse NEW may be than BASE before compare calls it a
// regression.
type Tolerance struct {
	Latency float64 // relative: 0.10 lets a latency grow by 10%
}

// Row verdicts.
const (
	RowSame       = "same"
	RowBetter     = "better"
	RowWorse      = "worse" // worse, but within tolerance
	RowRegression = "regression"
	RowChanged    = "changed" // different, neither better nor worse
)

// Row is one key figure of both runs.
type Row struct {
	Name    string `json:"name"`
	Base    string `json:"base"`
	New     string `json:"new"`
	Delta   string `json:"delta"`
	Verdict string `json:"verdict"`
}

// Comparison is BASE against NEW, row by row.
type Comparison struct {
	Base, New  string // run ids
	Tolerance  Tolerance
	Rows       []Row
	Regression bool
}

// Compare puts the key figures of two runs side by side. A regression is a
// latency beyond the tolerance, any new lost or duplicate delivery, more
// accepted beyond the limit, or a change in 429 behaviour (429s appearing or
// disappearing, a different limiter verdict).
func Compare(base, new *Summary, tol Tolerance) Comparison {
	c := Comparison{Base: base.Run.ID, New: new.Run.ID, Tolerance: tol}
	add := func(r Row) {
		if r.Verdict == RowRegression {
			c.Regression = true
		}
		c.Rows = append(c.Rows, r)
	}
	// lat compares one percentile; a side without data shows "no data", and
	// NEW losing data BASE had is a regression (it cannot be vouched for).
	lat := func(name string, bp, np Percentiles, b, n float64) {
		r := Row{Name: name, Base: bp.show(b), New: np.show(n), Delta: relDelta(b, n)}
		switch {
		case !bp.Has() && !np.Has():
			r.Delta, r.Verdict = "", RowSame
		case !np.Has():
			r.Delta, r.Verdict = "", RowRegression
		case !bp.Has():
			r.Delta, r.Verdict = "", RowChanged
		case n == b:
			r.Verdict = RowSame
		case n < b:
			r.Verdict = RowBetter
		case b == 0 || n > b*(1+tol.Latency):
			r.Verdict = RowRegression
		default:
			r.Verdict = RowWorse
		}
		add(r)
	}
	count := func(name string, b, n int64, regressOnRise bool) {
		r := Row{Name: name, Base: fmt.Sprint(b), New: fmt.Sprint(n), Delta: fmt.Sprintf("%+d", n-b)}
		switch {
		case n == b:
			r.Verdict = RowSame
		case n < b:
			r.Verdict = RowBetter
		case regressOnRise:
			r.Verdict = RowRegression
		default:
			r.Verdict = RowWorse
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
		r := Row{Name: name, Base: NotMeasured, New: NotMeasured, Verdict: RowSame}
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
			r.Verdict = RowChanged
		}
		add(r)
	}
	info := func(name string, b, n int64) {
		r := Row{Name: name, Base: fmt.Sprint(b), New: fmt.Sprint(n), Delta: fmt.Sprintf("%+d", n-b), Verdict: RowSame}
		if n != b {
			r.Verdict = RowChanged
		}
		add(r)
	}
	info("requests", base.Requests.Total, new.Requests.Total)
	info("messages accepted", base.Requests.Accepted, new.Requests.Accepted)
	br, nr := base.Requests.Latency, new.Requests.Latency
	lat("request latency p50", br, nr, br.P50, nr.P50)
	lat("request latency p95", br, nr, br.P95, nr.P95)
	lat("request latency p99", br, nr, br.P99, nr.P99)
	bd, nd := base.Delivery.Latency, new.Delivery.Latency
	lat("delivery latency p50", bd, nd, bd.P50, nd.P50)
	lat("delivery latency p95", bd, nd, bd.P95, nd.P95)
	lat("delivery latency p99", bd, nd, bd.P99, nd.P99)
	dcount("delivery lost", base.Delivery.Lost, new.Delivery.Lost, true)
	dcount("delivery duplicates", base.Delivery.Duplicates, new.Delivery.Duplicates, true)
	count("duplicate deliveries", base.Idempotency.DuplicateDeliveries, new.Idempotency.DuplicateDeliveries, true)
	count("idempotency mismatches", base.Idempotency.Mismatches, new.Idempotency.Mismatches, true)
	dcount("unmatched callbacks", base.Delivery.Unmatched, new.Delivery.Unmatched, false)
	dcount("malformed callbacks", base.Delivery.Malformed, new.Delivery.Malformed, true)
	count("excess accepted", base.RateLimit.ExcessAccepted, new.RateLimit.ExcessAccepted, true)
	b429, n429 := base.RateLimit.Rejected429, new.RateLimit.Rejected429
	r := Row{Name: "429 answers", Base: fmt.Sprint(b429), New: fmt.Sprint(n429), Delta: fmt.Sprintf("%+d", n429-b429), Verdict: RowSame}
	switch {
	case (b429 == 0) != (n429 == 0):
		r.Verdict = RowRegression // the service started or stopped limiting
	case n429 != b429:
		r.Verdict = RowChanged
	}
	add(r)
	ba, na := base.RateLimit.Algorithm.Verdict, new.RateLimit.Algorithm.Verdict
	r = Row{Name: "limiter", Base: ba, New: na, Delta: "", Verdict: RowSame}
	if ba != na {
		r.Verdict = RowChanged
		if named(ba) && named(na) {
			r.Verdict = RowRegression
		}
	}
	add(r)
	r = Row{Name: "verdict", Base: base.verdictWord(), New: new.verdictWord(), Verdict: RowSame}
	if base.OK() != new.OK() {
		r.Verdict = RowBetter
		if !new.OK() {
			r.Verdict = RowRegression
		}
	}
	if r.Verdict == RowSame && r.Base != r.New {
		r.Verdict = RowChanged // fail ↔ incomplete ↔ error
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

func (c Comparison) verdictLine() string {
	if c.Regression {
		return "REGRESSION"
	}
	return "no regression"
}

// WriteText writes the comparison as an aligned table.
func (c Comparison) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "compare %s → %s (latency tolerance %s%%): %s\n", c.Base, c.New, num(100*c.Tolerance.Latency), c.verdictLine())
	wn, wb, wnew, wd := len("figure"), len("base"), len("new"), len("delta")
	for _, r := range c.Rows {
		wn, wb, wnew, wd = max(wn, len(r.Name)), max(wb, len(r.Base)), max(wnew, len(r.New)), max(wd, len(r.Delta))
	}
	fmt.Fprintf(&b, "%-*s  %*s  %*s  %*s  %s\n", wn, "figure", wb, "base", wnew, "new", wd, "delta", "verdict")
	for _, r := range c.Rows {
		fmt.Fprintf(&b, "%-*s  %*s  %*s  %*s  %s\n", wn, r.Name, wb, r.Base, wnew, r.New, wd, r.Delta, r.Verdict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the comparison as a Markdown table.
func (c Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## msgload compare: %s\n\n`%s` → `%s`, latency tolerance %s%%.\n\n", c.verdictLine(), c.Base, c.New, num(100*c.Tolerance.Latency))
	b.WriteString("| Figure | Base | New | Delta | Verdict |\n|---|---|---|---|---|\n")
	for _, r := range c.Rows {
		v := r.Verdict
		if v == RowRegression {
			v = "**regression**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdEscape(r.Name), mdEscape(r.Base), mdEscape(r.New), mdEscape(r.Delta), v)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// named is a limiter verdict that names an algorithm ("cannot tell" and "not
// exercised" do not): only a change between two named ones is a regression.
func named(v string) bool { return v != AlgoUnknown && v != AlgoNotExercised && v != "" }
