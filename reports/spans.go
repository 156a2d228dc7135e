package reports

import (
	"math"
	"reflect"
	"strconv"
)

// A percentile of the counting pass (AnalyzeSendsCounting) is known only to
// its span: the bucket of the counts holding its rank, 1/1024 of the value
// wide (summary.Spans). A live threshold that reads one is judged at every
// corner — each such percentile at the least and at the most it can be,
// in every combination — and is known when every corner judges it alike:
// exactly the judgement of the value itself for any threshold monotone in
// each percentile (a comparison, a sum, a difference). When the corners
// disagree the threshold is Undecided, and the whole analysis (its third
// pass keeps the values of the wanted buckets) judges it. A threshold with
// a percentile near its bound (within 0.1 %) is the only one that costs the
// third pass.

// maxSpanned is the most percentiles a threshold judged at its corners
// reads (2^4 judgements); one that reads more is Undecided.
const maxSpanned = 4

// spanned is a percentile a threshold reads whose value the counting pass
// did not give: where it is in the summary, and its span.
type spanned struct {
	path   []any // to the percentiles object, its fields by expr name
	q      int   // 0..3: p50, p90, p95, p99
	lo, hi float64
}

// spannedReads are the percentiles c reads that s knows only to their span,
// and whether there is any.
func spannedReads(c *compiled, s *Summary) ([]spanned, bool) {
	var out []spanned
	for _, p := range c.Paths {
		pv, name, ok := s.latencyAt(p)
		if !ok || pv.Spans == nil {
			continue
		}
		q := map[string]int{"p50": 0, "p90": 1, "p95": 2, "p99": 3}
		i, ok := q[name]
		if !ok || !math.IsNaN(percentileField(&pv, i).Float()) {
			continue
		}
		out = append(out, spanned{path: p[:len(p)-1], q: i, lo: pv.Spans[i][0], hi: pv.Spans[i][1]})
	}
	return out, len(out) > 0
}

// percentileField is p's P50, P90, P95 or P99 (q 0..3).
func percentileField(p *percentiles, q int) reflect.Value {
	return reflect.ValueOf(p).Elem().FieldByName("P" + []string{"50", "90", "95", "99"}[q])
}

// judgeCorners judges l on s with each of cs at each end of its span.
func (l *LiveThreshold) judgeCorners(s *Summary, cs []spanned) LiveState {
	undecided := LiveState{Expr: l.Expr(), Undecided: true,
		Why: "a percentile it reads is only known within 0.1 % yet, and its bound is there: judged on the whole analysis"}
	if len(cs) > maxSpanned {
		return undecided
	}
	var first LiveState
	for corner := range 1 << len(cs) {
		c := *s
		for i, sp := range cs {
			v := sp.lo
			if corner>>i&1 == 1 {
				v = sp.hi
			}
			if !setPercentile(&c, sp, v) {
				return undecided
			}
		}
		st := l.judge(&c)
		if corner == 0 {
			first = st
			continue
		}
		if st.Known != first.Known || st.OK != first.OK || st.Final != first.Final || st.Why != first.Why {
			return undecided
		}
	}
	return first
}

// setPercentile sets, in c (a copy of a summary: its structs its own), the
// percentile sp to v. Only a path through struct fields is set (the sends'
// figures: requests.latency…); one through a map or a list is not, and
// false says so.
func setPercentile(c *Summary, sp spanned, v float64) bool {
	f := reflect.ValueOf(&c.Summary).Elem()
	for _, e := range sp.path {
		name, ok := e.(string)
		if !ok || f.Kind() != reflect.Struct {
			return false
		}
		i, ok := fieldByExpr(f.Type(), name)
		if !ok {
			return false
		}
		f = f.Field(i)
	}
	if f.Type() != reflect.TypeFor[percentiles]() {
		return false
	}
	f.FieldByName("P" + strconv.Itoa([]int{50, 90, 95, 99}[sp.q])).SetFloat(v)
	return true
}
