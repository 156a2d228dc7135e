package reports

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
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
	dirs := map[string]string{}
	for _, sh := range streamShapes {
		dirs[sh.name] = sh.gen(5_000).write(t)
	}
	runs, err := filepath.Glob(filepath.Join("testdata", "runs", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range runs {
		dirs["testdata/"+filepath.Base(d)] = d
	}
	ths := []string{
		"requests.error_rate < 1%", `requests.codes["500"] < 10`, "requests.messages >= 1",
		"idempotency.mismatches == 0", "requests.latency.max < 1s", "rate_limit.rejected_429 < 5",
	}
	passes := 0
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
				if Counted(p) && !verdictPath(p) {
					t.Errorf("%v differs after the counting pass, and Counted says it is exact", p)
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
		})
	}
	if passes < len(streamShapes)/2 {
		t.Fatalf("only %d runs analysed in passes: the counting pass was not tested", passes)
	}
	for _, src := range []string{"requests.latency.p95 < 1s", "idempotency.id_collisions == 0", "requests.latency.p99_at_least < 1", "requests.latency.p95_slope < 1ms"} {
		th, err := CompileLive(src, "none")
		if err == nil && th.Counted() {
			t.Errorf("%s: Counted, but the counting pass does not give it", src)
		}
	}
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

// markNaN replaces every NaN under v with the largest float, so that the
// summary marshals and the figure differs from any computed one.
func markNaN(v reflect.Value) {
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		if v.CanSet() && math.IsNaN(v.Float()) {
			v.SetFloat(math.MaxFloat32)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			markNaN(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				markNaN(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			markNaN(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			markNaN(e)
			v.SetMapIndex(k, e)
		}
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
