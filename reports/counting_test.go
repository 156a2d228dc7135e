package reports

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCountingPassFigures: the counting pass (AnalyzeSendsCounting) gives
// every figure of the sends that Counted says it does exactly as the whole
// analysis (AnalyzeSends) gives it — every count, share, max and mean, on
// every generated shape of run and every run in testdata read in passes —
// and what it does not give (the percentiles, their bounds, the id
// collisions) only where Counted says so. A threshold on counted figures
// judged live on it is judged as on the whole analysis.
func TestCountingPassFigures(t *testing.T) {
	defer func(b, l int64) { onePassBytes, onePassLines = b, l }(onePassBytes, onePassLines)
	onePassBytes, onePassLines = 0, 0 // every run in passes, however small
	dirs := shapeAndTestdataRuns(t, 5_000)
	ths := []string{
		"requests.error_rate < 1%", `requests.codes["500"] < 10`, "requests.messages >= 1",
		"idempotency.mismatches == 0", "requests.latency.max < 1s", "rate_limit.rejected_429 < 5",
	}
	passes, decidedLater := 0, 0
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			counting, err := AnalyzeSendsCounting(dir)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := AnalyzeSends(dir)
			if err != nil {
				t.Fatal(err)
			}
			if twoPasses(maskFS{os.DirFS(dir), sendsHidden}) {
				passes++
			}
			var differ [][]any
			diffLeaves(nil, summaryTree(t, counting), summaryTree(t, whole), &differ)
			for _, p := range differ {
				if verdictPath(p) {
					continue
				}
				if spannedIn(t, p, counting, whole) {
					continue
				}
				if Counted(p) {
					t.Errorf("%v differs after the counting pass, and Counted says it is given", p)
				}
			}
			for _, src := range ths {
				th, err := CompileLive(src, whole.Delivery.Via)
				if err != nil {
					t.Fatal(err)
				}
				if !th.Counted() {
					t.Fatalf("%s: not counted", src)
				}
				if got, want := th.Judge(counting), th.Judge(whole); got != want {
					t.Errorf("%s: judged %+v after the counting pass, %+v on the whole analysis", src, got, want)
				}
			}
			// A percentile is judged at its span's ends: as on the whole
			// analysis, or Undecided — which a bound far from it never is.
			for _, pv := range []struct {
				path string
				v    percentiles
			}{{"requests.latency", whole.Requests.Latency}, {"requests.latency_intended", whole.Requests.LatencyIntended}} {
				for _, q := range []string{"p50", "p95", "p99"} {
					v, lower := pv.v.Figure(q)
					if lower || pv.v.Count == 0 {
						continue
					}
					for _, k := range []float64{0.5, 1, 2} {
						src := fmt.Sprintf("%s.%s < %.6f", pv.path, q, v*k)
						th, err := CompileLive(src, whole.Delivery.Via)
						if err != nil {
							t.Fatal(err)
						}
						got, want := th.Judge(counting), th.Judge(whole)
						got.Value, want.Value = 0, 0
						switch {
						case got.Undecided && k != 1:
							t.Errorf("%s: undecided after the counting pass, %.6f from its bound", src, v)
						case !got.Undecided && got != want:
							t.Errorf("%s: judged %+v after the counting pass, %+v on the whole analysis", src, got, want)
						}
						if got.Undecided {
							decidedLater++
						}
					}
				}
			}
		})
	}
	if passes < len(streamShapes)/2 {
		t.Fatalf("only %d runs analysed in passes: the counting pass was not tested", passes)
	}
	if decidedLater == 0 {
		t.Error("no threshold at its percentile's own value was left undecided: the corners were not tested")
	}
	for _, src := range []string{"idempotency.id_collisions == 0", "requests.latency.p99_at_least < 1", "requests.latency.p95_slope < 1ms"} {
		th, err := CompileLive(src, "none")
		if err == nil && th.Counted() {
			t.Errorf("%s: Counted, but the counting pass does not give it", src)
		}
	}
}

// spannedIn says whether p is a percentile (or its lower bound) that the
// counting pass gives as a span, and checks that the whole analysis's value
// lies in it (its bound at or above the counting pass's).
func spannedIn(t *testing.T, p []any, counting, whole *Summary) bool {
	t.Helper()
	if len(p) < 2 {
		return false
	}
	name, _ := p[len(p)-1].(string)
	q := map[string]int{"p50": 0, "p90": 1, "p95": 2, "p99": 3, "p50_at_least": 0, "p90_at_least": 1, "p95_at_least": 2, "p99_at_least": 3}
	i, ok := q[name]
	if !ok {
		return false
	}
	base := strings.TrimSuffix(name, "_at_least")
	at := append(append([]any(nil), p[:len(p)-1]...), base)
	c, _, ok1 := counting.latencyAt(at)
	w, _, ok2 := whole.latencyAt(at)
	if !ok1 || !ok2 {
		return true // a figure no threshold reads (latency_delivered): never judged live
	}
	wv, wLower := w.Figure(base)
	cv, cLower := c.Figure(base)
	switch {
	case !wLower && !cLower && math.IsNaN(cv) && c.Spans != nil:
		if lo, hi := c.Spans[i][0], c.Spans[i][1]; wv < lo || wv > hi {
			t.Errorf("%v: %.6f, outside the counting pass's span [%.6f, %.6f]", p, wv, lo, hi)
		}
	case wLower && cLower:
		if cv > wv {
			t.Errorf("%v: the counting pass's lower bound %.6f is above the whole analysis's %.6f", p, cv, wv)
		}
	default:
		t.Errorf("%v: the whole analysis gives %v (bound %v), the counting pass %v (bound %v; spans %v)", p, wv, wLower, cv, cLower, c.Spans)
	}
	return true
}

// shapeAndTestdataRuns are the directories of a generated run of n
// messages of every shape (streamShapes) and of every run in testdata, by
// name.
func shapeAndTestdataRuns(t *testing.T, n int) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, sh := range streamShapes {
		dirs[sh.name] = sh.gen(n).write(t)
	}
	runs, err := filepath.Glob(filepath.Join("testdata", "runs", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range runs {
		dirs["testdata/"+filepath.Base(d)] = d
	}
	return dirs
}

// verdictPath says whether p is of the verdict (its reasons, warnings,
// thresholds judged), which depends on every threshold of the run.
func verdictPath(p []any) bool {
	switch p[0] {
	case "reasons", "verdict_reasons", "warnings", "verdict", "ok", "thresholds":
		return true
	}
	return false
}

// summaryTree is s as summary.json's tree, a figure not computed (NaN)
// written as a string that no figure can equal.
func summaryTree(t *testing.T, s *Summary) any {
	t.Helper()
	c := *s
	markNaN(reflect.ValueOf(&c.Summary).Elem())
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// markNaN replaces every NaN under v (a copy of a summary: its lists and
// maps are copied before they are changed) with the largest float32, so
// that the summary marshals and the figure differs from any computed one.
func markNaN(v reflect.Value) {
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		if v.CanSet() && math.IsNaN(v.Float()) {
			v.SetFloat(math.MaxFloat32)
		}
	case reflect.Pointer: // a copy, as a slice
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(v.Elem())
		markNaN(c.Elem())
		v.Set(c)
	case reflect.Interface:
		if !v.IsNil() {
			markNaN(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				markNaN(v.Field(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			markNaN(v.Index(i))
		}
	case reflect.Slice: // a copy: the summary's own is left as it is
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		for i := range c.Len() {
			markNaN(c.Index(i))
		}
		v.Set(c)
	case reflect.Map: // a copy, as a slice
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			markNaN(e)
			c.SetMapIndex(k, e)
		}
		v.Set(c)
	}
}

// diffLeaves adds to out the path of every leaf of a and b that differs.
func diffLeaves(p []any, a, b any, out *[][]any) {
	at := func(k any) []any { return append(append([]any(nil), p...), k) }
	switch x := a.(type) {
	case map[string]any:
		y, _ := b.(map[string]any)
		for k, v := range x {
			diffLeaves(at(k), v, y[k], out)
		}
		for k, v := range y {
			if _, ok := x[k]; !ok {
				diffLeaves(at(k), nil, v, out)
			}
		}
	case []any:
		y, _ := b.([]any)
		for i := range max(len(x), len(y)) {
			var u, w any
			if i < len(x) {
				u = x[i]
			}
			if i < len(y) {
				w = y[i]
			}
			diffLeaves(at(i), u, w, out)
		}
	default:
		if m, ok := b.(map[string]any); ok && a == nil {
			diffLeaves(p, map[string]any{}, m, out)
			return
		}
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, p)
		}
	}
}

// A threshold judged on a percentile's span is judged at every value the
// span holds, not only at its ends: one that is not monotone in the
// percentile (it fails at one microsecond inside the span and holds at
// both ends) is Undecided, never judged on the ends alone.
func TestSpanJudgedAtEveryValue(t *testing.T) {
	defer func(b, l int64) { onePassBytes, onePassLines = b, l }(onePassBytes, onePassLines)
	onePassBytes, onePassLines = 0, 0
	dir := streamShapes[0].gen(5_000).write(t)
	counting, err := AnalyzeSendsCounting(dir)
	if err != nil {
		t.Fatal(err)
	}
	sp := counting.Requests.Latency.Spans
	if sp == nil || toMicros(sp[2][1])-toMicros(sp[2][0]) < 2 {
		t.Fatalf("p95's span %v: too narrow for a value strictly inside", sp)
	}
	inside := float64(toMicros(sp[2][0])+1) / 1e6
	for src, undecided := range map[string]bool{
		fmt.Sprintf("requests.latency.p95 != %.6f", inside):            true,
		fmt.Sprintf("requests.latency.p95 != %.6f", sp[2][1]+0.001):    false,
		fmt.Sprintf("requests.latency.p95 > %.6f", sp[2][0]-0.000001):  false,
		fmt.Sprintf("requests.latency.p95 >= %.6f", sp[2][0]+0.000001): true,
	} {
		th, err := CompileLive(src, "none")
		if err != nil {
			t.Fatal(err)
		}
		if st := th.Judge(counting); st.Undecided != undecided {
			t.Errorf("%s on the span [%.6f, %.6f]: %+v, want undecided %v", src, sp[2][0], sp[2][1], st, undecided)
		}
	}
}
