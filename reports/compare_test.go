package reports

import (
	"math"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"testing"

	"golang.org/x/exp/rand"
)

func TestCompareRegressions(t *testing.T) {
	base := func() *Summary {
		s := &Summary{Schema: schemaVersion}
		s.Run.ID = "base"
		s.Requests.Latency = percentiles{Count: 10, P50: 0.1, P95: 0.2, P99: 0.3}
		s.Delivery.Latency = percentiles{Count: 10, P50: 1, P95: 2, P99: 3}
		s.Delivery.Via, s.Delivery.Measured = "sink", true
		s.RateLimit.Rejected429 = 10
		s.RateLimit.Algorithm.Verdict = algoFixed
		return s
	}
	for _, tc := range []struct {
		name       string
		change     func(*Summary)
		regression bool
		row        string // the row that must carry the verdict
		verdict    string
	}{
		{"identical runs", func(*Summary) {}, false, "delivery latency p95", rowSame},
		{"latency within tolerance", func(s *Summary) { s.Delivery.Latency.P95 = 2.1 }, false, "delivery latency p95", rowWorse},
		{"latency beyond tolerance", func(s *Summary) { s.Delivery.Latency.P95 = 2.5 }, true, "delivery latency p95", RowRegression},
		{"faster is better", func(s *Summary) { s.Requests.Latency.P99 = 0.1 }, false, "request latency p99", rowBetter},
		{"a new lost message", func(s *Summary) { s.Delivery.Lost = 1 }, true, "delivery lost", RowRegression},
		{"a new duplicate delivery", func(s *Summary) { s.Idempotency.DuplicateDeliveries = 1 }, true, "duplicate deliveries", RowRegression},
		{"429s stop: the limit changed", func(s *Summary) { s.RateLimit.Rejected429 = 0 }, true, "429 answers", RowRegression},
		{"more 429s: changed, not a regression", func(s *Summary) { s.RateLimit.Rejected429 = 12 }, false, "429 answers", rowChanged},
		{"another limiter", func(s *Summary) { s.RateLimit.Algorithm.Verdict = algoTokenBucket }, true, "limiter", RowRegression},
		// The limiter was not exercised in the new run: no named verdict to differ from.
		{"limiter not exercised", func(s *Summary) { s.RateLimit.Algorithm.Verdict = algoNotExercised }, false, "limiter", rowChanged},
		{"more accepted beyond the limit", func(s *Summary) { s.RateLimit.ExcessAccepted = 3 }, true, "excess accepted", RowRegression},
		{"nothing delivered: no data is a regression", func(s *Summary) { s.Delivery.Latency = percentiles{} }, true, "delivery latency p95", RowRegression},
		{"delivery no longer measured", func(s *Summary) { s.Delivery.Via, s.Delivery.Measured = "none", false }, true, "delivery lost", RowRegression},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			n.Run.ID = "new"
			tc.change(n)
			c := compare(base(), n, Tolerance{Latency: 0.1})
			if c.Regression != tc.regression {
				t.Errorf("regression %v, want %v: %+v", c.Regression, tc.regression, c.Rows)
			}
			found := false
			for _, r := range c.Rows {
				if r.Name == tc.row {
					found = true
					if r.Verdict != tc.verdict {
						t.Errorf("row %q: %+v, want %s", tc.row, r, tc.verdict)
					}
				}
			}
			if !found {
				t.Errorf("no row %q", tc.row)
			}
			var text, md strings.Builder
			if err := c.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := c.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text.String(), "REGRESSION") != tc.regression || strings.Contains(md.String(), "**regression**") != tc.regression {
				t.Errorf("the written verdict disagrees:\n%s\n%s", text.String(), md.String())
			}
		})
	}
}

func TestParseSummaryRefuses(t *testing.T) {
	if _, err := parseSummary([]byte(`{"ok":true}`)); err == nil {
		t.Error("a summary without a schema version must be refused")
	}
	if _, err := parseSummary([]byte(`{"schema":3}`)); err == nil {
		t.Error("a newer schema must be refused")
	}
}

// spreadLatencies returns n request latencies around mid (seconds), spread evenly
// over ±spread, deterministic, in no particular order.
func spreadLatencies(n int, mid, spread float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = mid - spread + 2*spread*float64((i*37)%n)/float64(max(n-1, 1))
	}
	return v
}

// withTail is n values around 10 ms and the slow ones.
func withTail(n int, slow ...float64) []float64 {
	return append(spreadLatencies(n, 0.010, 0.002), slow...)
}

// runOf makes a Run whose request latencies are v (its summary's percentiles
// computed from them, as Analyze would).
func runOf(id string, v []float64) Run {
	h := newHist()
	for _, x := range v {
		h.observe(x)
	}
	s := &Summary{Schema: schemaVersion}
	s.Run.ID = id
	s.Requests.Latency = h.percentiles()
	s.Delivery.Via, s.Delivery.Measured = "sink", true
	return Run{Summary: s, Samples: &Samples{Request: h.v}}
}

func rowNamed(t *testing.T, c Comparison, name string) row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", name, c.Rows)
	return row{}
}

// TestCompareNoise: the decision on latencies with raw samples: only a change
// past the tolerance, past the floor, with enough values and significant is a
// regression.
func TestCompareNoise(t *testing.T) {
	const ms = 1e-3
	base24 := spreadLatencies(24, 6*ms, 0.5*ms)
	outlier := append(append([]float64(nil), base24[1:]...), 12.1*ms) // one of 24 replaced by an outlier
	few := DefaultTolerance()
	few.MinSamples = 10 // let the test, not the minimum, judge 24 values
	for _, tc := range []struct {
		name      string
		base, new []float64
		tol       Tolerance
		row       string
		verdict   string
		note      string // a substring of the row's note
	}{
		{"equal is same", spreadLatencies(200, 10*ms, 2*ms), spreadLatencies(200, 10*ms, 2*ms), DefaultTolerance(), "request latency p99", rowSame, ""},
		{"an outlier on 24 requests: too few values", base24, outlier, DefaultTolerance(), "request latency p99", rowInconclusive, "too few values"},
		{"an outlier on 24 requests: not significant", base24, outlier, few, "request latency p99", rowSame, "not significant"},
		{"within the floor", spreadLatencies(200, 10*ms, 2*ms), spreadLatencies(200, 13*ms, 2*ms), DefaultTolerance(), "request latency p50", rowSame, "within the floor of 5.0ms"},
		{"50 ms slower", spreadLatencies(200, 10*ms, 2*ms), spreadLatencies(200, 60*ms, 2*ms), DefaultTolerance(), "request latency p95", RowRegression, "significant: 95% interval"},
		{"50 ms faster", spreadLatencies(200, 60*ms, 2*ms), spreadLatencies(200, 10*ms, 2*ms), DefaultTolerance(), "request latency p50", rowBetter, "significant"},
		{"significant but within tolerance", spreadLatencies(2000, 100*ms, 5*ms), spreadLatencies(2000, 106*ms, 5*ms), DefaultTolerance(), "request latency p50", rowWorse, "significant"},
		{"two slow values of 60 got slower", withTail(58, 50*ms, 80*ms), withTail(58, 80*ms, 120*ms), DefaultTolerance(), "request latency p99", rowSame, "not significant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CompareRuns(runOf("base", tc.base), runOf("new", tc.new), tc.tol)
			r := rowNamed(t, c, tc.row)
			if r.Verdict != tc.verdict || !strings.Contains(r.Note, tc.note) {
				t.Errorf("%+v, want %s with a note saying %q", r, tc.verdict, tc.note)
			}
			if c.Regression != (tc.verdict == RowRegression) {
				t.Errorf("regression %v: %+v", c.Regression, c.Rows)
			}
			again := CompareRuns(runOf("base", tc.base), runOf("new", tc.new), tc.tol)
			if rowNamed(t, again, tc.row) != r {
				t.Errorf("not repeatable: %+v then %+v", r, rowNamed(t, again, tc.row))
			}
		})
	}
	// Without the raw latencies nothing can be tested: past tolerance, floor and
	// minimum it is a regression, and says it was not tested.
	b, n := runOf("base", spreadLatencies(200, 10*ms, 2*ms)), runOf("new", spreadLatencies(200, 60*ms, 2*ms))
	c := compare(b.Summary, n.Summary, DefaultTolerance())
	if r := rowNamed(t, c, "request latency p50"); r.Verdict != RowRegression || !strings.Contains(r.Note, "not tested") {
		t.Errorf("without samples: %+v", r)
	}
}

// TestShiftInterval checks the bootstrap against plain resampling on a small
// sample: the Beta shortcut must give the same interval.
func TestShiftInterval(t *testing.T) {
	base := spreadLatencies(40, 0.010, 0.002)
	slices.Sort(base)
	lo, hi := shiftInterval(base, base, 95, 0.95)
	if lo > 0 || hi < 0 || lo < -0.004 || hi > 0.004 {
		t.Errorf("a run against itself: interval %v … %v, want around 0", lo, hi)
	}
	// The bootstrap distribution of the nearest-rank p95 of 40 values: drawn
	// by resampling all values, its mean agrees with the Beta draws'.
	rng := mrand.New(mrand.NewPCG(1, 2))
	var sumResample float64
	const reps = 20000
	rs := make([]float64, len(base))
	for range reps {
		for i := range rs {
			rs[i] = base[rng.IntN(len(base))]
		}
		slices.Sort(rs)
		sumResample += rs[rank(95, len(rs))-1]
	}
	var sumBeta float64
	for _, v := range percentileDraws(base, 95, rand.NewSource(3)) {
		sumBeta += v
	}
	mr, mb := sumResample/reps, sumBeta/bootstrapReplicates
	if math.Abs(mr-mb) > 0.00005 {
		t.Errorf("mean bootstrap p95: resampling %v, Beta draws %v", mr, mb)
	}
}
