package reports

import (
	"math"
	"reflect"
)

// A percentile of the counting pass (AnalyzeSendsCounting) is known only to
// its span: the bucket of the counts holding its rank, 1/1024 of the value
// wide (summary.Spans), whose every value is a whole microsecond (the
// resolution of every figure). A live threshold that reads one is judged
// at every value the span holds — each such percentile at each of its
// microseconds, in every combination: a few dozen to a few thousand
// judgements — and is known when every one judges it alike: then the
// value's own judgement is that, whatever the threshold's shape. When they
// disagree (its bound is inside the span: within 0.1 % of the value), or
// there are more than maxSpanJudgements of them, the threshold is
// Undecided, and the whole analysis (its third pass keeps the values of the
// wanted buckets) judges it.

// maxSpanJudgements is the most judgements of one threshold at the values
// its spans hold (a percentile of 10 s lies in a span of 8,192 µs).
const maxSpanJudgements = 1 << 14

// spanned is a percentile a threshold reads whose value the counting pass
// did not give: where it is in the summary, and its span.
type spanned struct {
	path   []any // to the percentiles object, its fields by expr name
	q      int   // 0..3: p50, p90, p95, p99
	lo, hi float64
}

// spannedQ is the index in summary.Spans of each percentile it holds.
var spannedQ = map[string]int{"p50": 0, "p90": 1, "p95": 2, "p99": 3}

// spannedReads are the percentiles c reads that s knows only to their span
// (no value: NaN), and whether there is any.
func spannedReads(c *compiled, s *Summary) ([]spanned, bool) {
	var out []spanned
	for _, p := range c.Paths {
		pv, name, ok := s.latencyAt(p)
		if !ok || pv.Spans == nil {
			continue
		}
		i, ok := spannedQ[name]
		if v, lower := pv.Figure(name); !ok || lower || !math.IsNaN(v) {
			continue
		}
		out = append(out, spanned{path: p[:len(p)-1], q: i, lo: pv.Spans[i][0], hi: pv.Spans[i][1]})
	}
	return out, len(out) > 0
}

// judgeSpans judges l on s with each of cs at each value its span
// holds, in every combination.
func (l *LiveThreshold) judgeSpans(s *Summary, cs []spanned) LiveState {
	undecided := LiveState{Expr: l.Expr(), Undecided: true,
		Why: "a percentile it reads is only known within 0.1 % yet, and its bound is there: judged on the whole analysis"}
	lo, n := make([]uint64, len(cs)), make([]uint64, len(cs))
	total := uint64(1)
	for i, sp := range cs {
		lo[i] = toMicros(sp.lo)
		hi := toMicros(sp.hi)
		if hi < lo[i] {
			return undecided
		}
		n[i] = hi - lo[i] + 1
		if total *= n[i]; total > maxSpanJudgements {
			return undecided
		}
	}
	var first LiveState
	for j := range total {
		c := *s
		k := j // its digits, one a span, are each percentile's microsecond
		for i, sp := range cs {
			us := lo[i] + k%n[i]
			k /= n[i]
			if !setPercentile(&c, sp, float64(us)/1e6) {
				return undecided
			}
		}
		st := l.judge(&c)
		if j == 0 {
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
	f.FieldByName([]string{"P50", "P90", "P95", "P99"}[sp.q]).SetFloat(v)
	return true
}
