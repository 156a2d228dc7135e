package reports

import (
	"encoding/json"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

func TestCompareRegressions(t *testing.T) {
	base := func() *Summary {
		s := &Summary{Summary: summary.Summary{Schema: schemaVersion}}
		s.Run.ID = "base"
		s.Requests.Latency = percentiles{Count: 10, P50: 0.1, P95: 0.2, P99: 0.3}
		s.Delivery.Latency = percentiles{Count: 10, P50: 1, P95: 2, P99: 3}
		s.Delivery.Via, s.Delivery.Measured = "sink", true
		s.RateLimit.Rejected429, s.RateLimit.Window = 10, 60
		s.RateLimit.Algorithm.Verdict = algoFixed
		s.Idempotency.Compared, s.Idempotency.Measured = 5, true
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
		// A count over nothing is no data: NEW lost it.
		{"no answer compared", func(s *Summary) { s.Idempotency.Compared = 0 }, true, "idempotency mismatches", RowRegression},
		{"no limit known", func(s *Summary) { s.RateLimit.Window = 0 }, true, "excess accepted", RowRegression},
		{"duplicate deliveries not measured", func(s *Summary) { s.Idempotency.Measured = false }, true, "duplicate deliveries", RowRegression},
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
	s := &Summary{Summary: summary.Summary{Schema: schemaVersion}}
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
// past the tolerance and the floor that the tests tell from noise is a
// regression, at any sample size.
func TestCompareNoise(t *testing.T) {
	const ms = 1e-3
	base24 := spreadLatencies(24, 6*ms, 0.5*ms)
	outlier := append(append([]float64(nil), base24[1:]...), 12.1*ms) // one of 24 replaced by an outlier
	for _, tc := range []struct {
		name      string
		base, new []float64
		tol       Tolerance
		row       string
		verdict   string
		note      string // a substring of the row's note
	}{
		{"equal is same", spreadLatencies(200, 10*ms, 2*ms), spreadLatencies(200, 10*ms, 2*ms), DefaultTolerance(), "request latency p99", rowSame, ""},
		{"an outlier on 24 requests: not significant", base24, outlier, DefaultTolerance(), "request latency p99", rowSame, "not significant: p99 +5.6ms [−∞, +∞] (99%, exact): 24 and 24 values cannot bound a p99"},
		{"within the floor", spreadLatencies(200, 10*ms, 2*ms), spreadLatencies(200, 13*ms, 2*ms), DefaultTolerance(), "request latency p50", rowSame, "within the floor of 5.0ms: Mann–Whitney p = "},
		{"50 ms slower", spreadLatencies(200, 10*ms, 2*ms), spreadLatencies(200, 60*ms, 2*ms), DefaultTolerance(), "request latency p95", RowRegression, "p95 +50.0ms ["},
		{"50 ms slower, the median", spreadLatencies(200, 10*ms, 2*ms), spreadLatencies(200, 60*ms, 2*ms), DefaultTolerance(), "request latency p50", RowRegression, "(normal approximation); p50 +50.0ms ["},
		{"50 ms faster", spreadLatencies(200, 60*ms, 2*ms), spreadLatencies(200, 10*ms, 2*ms), DefaultTolerance(), "request latency p50", rowBetter, "Mann–Whitney p = "},
		{"significant but within tolerance", spreadLatencies(2000, 100*ms, 5*ms), spreadLatencies(2000, 106*ms, 5*ms), DefaultTolerance(), "request latency p50", rowWorse, "within the tolerance"},
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
	// Without the raw latencies nothing can be tested: past tolerance and
	// floor it is a regression, and says it was not tested.
	b, n := runOf("base", spreadLatencies(200, 10*ms, 2*ms)), runOf("new", spreadLatencies(200, 60*ms, 2*ms))
	c := compare(b.Summary, n.Summary, DefaultTolerance())
	if r := rowNamed(t, c, "request latency p50"); r.Verdict != RowRegression || !strings.Contains(r.Note, "not tested") {
		t.Errorf("without samples: %+v", r)
	}
}

// simRun is a hand-built run directory of msgs messages like the smoke
// scenario's on a busy machine, drawn from seed: one every 250 ms; the
// answer takes about 0.8 ms (lognormal), a share `stalls` of answers waits
// 5–50 ms more (the machine busy elsewhere), plus shift for every answer;
// the delivery (one terminal callback) lognormal with median 200 ms and p95
// 1 s, as smoke's simulator profiles. dupRate of the messages have their
// callback delivered twice.
type simRun struct {
	msgs          int
	seed          uint64
	stalls        float64
	shift         float64
	dupRate       float64
	deliveryScale float64 // 1 unless slower
}

func (s simRun) build(t *testing.T) Run {
	t.Helper()
	rng := mrand.New(mrand.NewPCG(s.seed, 77))
	r := newRun(rundir.APIMessaging)
	r.meta.ID = fmt.Sprintf("sim-%d", s.seed)
	r.meta.Target = "http://127.0.0.1:8080" // a service without truth.json
	sigma := math.Log(5) / 1.6449           // median 200 ms, p95 1 s
	for i := range s.msgs {
		seq, sent := int64(i+1), 0.25*float64(i)
		lat := 0.0008*math.Exp(0.5*rng.NormFloat64()) + s.shift
		if rng.Float64() < s.stalls {
			lat += 0.005 + 0.045*rng.Float64()
		}
		r.send(seq, "c1", sent, 202, lat)
		end := sent + lat + max(s.deliveryScale, 1)*0.2*math.Exp(sigma*rng.NormFloat64())
		r.callback(seq, end, "DELIVERED", "sms", true, false)
		if rng.Float64() < s.dupRate {
			r.callback(seq, end+0.05, "DELIVERED", "sms", true, true)
		}
	}
	dir := r.write(t)
	sum, err := conclude(dir)
	if err != nil || sum.Verdict != VerdictPass {
		t.Fatalf("%v: %s %v", err, sum.Verdict, sum.VerdictReasons)
	}
	smp, err := ReadSamples(dir)
	if err != nil {
		t.Fatal(err)
	}
	return Run{Summary: sum, Samples: smp}
}

func comparisonText(c Comparison) string {
	var b strings.Builder
	c.WriteText(&b)
	return b.String()
}

// TestCompareSameScenarioTwice: two runs of one scenario — the same
// distributions drawn twice with other seeds — are no regression: 100 pairs
// of smoke-sized runs (20–24 messages) all, and 20 pairs of 100-message runs
// with a heavy tail of stalled answers (p99 is then the 99th of 100 values:
// one stall more or less moves it by tens of ms) at least 19. The bootstrap
// at 95% that compare used called a third of those regressions.
func TestCompareSameScenarioTwice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		msgs    func(i int) (int, int)
		stalls  float64
		pairs   int
		atLeast int
	}{
		{"smoke-sized", func(i int) (int, int) { return 20 + i%5, 24 - i%5 }, 0.03, 100, 100},
		{"100 messages, heavy tail", func(int) (int, int) { return 100, 100 }, 0.04, 20, 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() {
				tc.pairs, tc.atLeast = 20, min(tc.atLeast, 20)
			}
			same := 0
			for i := range tc.pairs {
				nb, nn := tc.msgs(i)
				b := simRun{msgs: nb, seed: uint64(2*i + 1), stalls: tc.stalls}.build(t)
				n := simRun{msgs: nn, seed: uint64(2*i + 2), stalls: tc.stalls}.build(t)
				c := CompareRuns(b, n, DefaultTolerance())
				if !c.Regression {
					same++
					continue
				}
				t.Logf("pair %d: a regression\n%s", i, comparisonText(c))
			}
			if same < tc.atLeast {
				t.Errorf("%d of %d pairs the same, want at least %d", same, tc.pairs, tc.atLeast)
			}
		})
	}
}

// TestCompareSmallSlowdown: 24 messages whose every answer came 50 ms later
// than the 23 of the run before are a regression — each of the 24 values
// above each of the 23 is p ≈ 1e-13 — and the row says which test decided,
// its p-value and the interval of the change.
func TestCompareSmallSlowdown(t *testing.T) {
	base := simRun{msgs: 23, seed: 1}.build(t)
	slow := simRun{msgs: 24, seed: 2, shift: 0.050}.build(t)
	c := CompareRuns(base, slow, DefaultTolerance())
	if !c.Regression {
		t.Fatalf("50 ms more on each of 24 answers: no regression\n%s", comparisonText(c))
	}
	r := rowNamed(t, c, "request latency p50")
	want := regexp.MustCompile(`^Mann–Whitney p = 1.2e-13 \(exact\); p50 \+50\.\dms \[\+4\d\.\dms, \+5\d\.\dms\] \(99%, exact\)$`)
	if r.Verdict != RowRegression || r.DecidedBy != decidedBoth || !want.MatchString(r.Note) {
		t.Errorf("%+v, want a regression noted like %s", r, want)
	}
	if r.Test.P > 1e-6 || !r.Test.HasShift || r.Test.Low <= 0.040 {
		t.Errorf("evidence %+v: want p < 1e-6 and the interval above +40 ms", r.Test)
	}
	// The text table and the JSON carry it too.
	if text := comparisonText(c); !strings.Contains(text, r.Note) {
		t.Errorf("text without the note:\n%s", text)
	}
	var js strings.Builder
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	type jsonRow struct {
		Name, Verdict string
		DecidedBy     string `json:"decided_by"`
		P             *float64
		PMethod       string `json:"p_method"`
		Interval      *struct {
			Low, High  *float64
			Confidence float64
		}
	}
	var got struct {
		Regression bool
		Rows       []jsonRow
	}
	if err := json.Unmarshal([]byte(js.String()), &got); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(got.Rows, func(r jsonRow) bool { return r.Name == "request latency p50" })
	if !got.Regression || i < 0 {
		t.Fatalf("JSON: %s", js.String())
	}
	jr := got.Rows[i]
	if jr.Verdict != RowRegression || jr.DecidedBy != decidedBoth || jr.P == nil || *jr.P != r.Test.P || jr.PMethod != "exact" ||
		jr.Interval == nil || jr.Interval.Low == nil || *jr.Interval.Low != r.Test.Low || jr.Interval.Confidence != 0.99 {
		t.Errorf("JSON row %+v, want the row's evidence", jr)
	}
	// The p99 of 24 values cannot be bounded above: its interval is
	// unbounded, and JSON says so with null.
	if p99 := rowNamed(t, c, "request latency p99"); p99.Verdict != rowSame || !math.IsInf(p99.Test.Low, -1) {
		t.Errorf("p99 of 24: %+v, want same on an unbounded interval", p99)
	}
	if !strings.Contains(js.String(), `"low": null`) {
		t.Errorf("JSON without an unbounded end: %s", js.String())
	}
}

// TestCompareRandomCounts: counts drawn at random are judged against their
// binomial spread, not against zero: duplicates 11 → 12 of about 100
// messages drawn at 10% are the same; 20 pairs drawn at 10% are the same at
// least 19 times; 5 → 40 of 100 is a regression.
func TestCompareRandomCounts(t *testing.T) {
	mk := func(dups, callbacks, lost, expected int64) *Summary {
		s := &Summary{Summary: summary.Summary{Schema: schemaVersion}}
		s.Delivery.Via, s.Delivery.Measured = "sink", true
		s.Delivery.Duplicates, s.Delivery.Events = dups, callbacks
		s.Delivery.Lost, s.Delivery.Expected = lost, expected
		s.Requests.Accepted = expected
		return s
	}
	c := compare(mk(11, 111, 0, 100), mk(12, 112, 0, 100), DefaultTolerance())
	if r := rowNamed(t, c, "delivery duplicates"); r.Verdict != rowSame || c.Regression || r.DecidedBy != decidedFisher || !strings.Contains(r.Note, "within the binomial spread: Fisher p = 1 (11 of 111 → 12 of 112)") {
		t.Errorf("duplicates 11 → 12: %+v", r)
	}
	if r := rowNamed(t, compare(mk(5, 105, 0, 100), mk(40, 140, 0, 100), DefaultTolerance()), "delivery duplicates"); r.Verdict != RowRegression || !strings.HasPrefix(r.Note, "Fisher p = ") {
		t.Errorf("duplicates 5 → 40: %+v, want a regression", r)
	}
	if r := rowNamed(t, compare(mk(0, 100, 12, 100), mk(0, 100, 1, 100), DefaultTolerance()), "delivery lost"); r.Verdict != rowBetter {
		t.Errorf("lost 12 → 1: %+v, want better", r)
	}
	// Real draws: each of 100 messages has its callback doubled at 10%.
	same := 0
	for i := range 20 {
		b := simRun{msgs: 100, seed: uint64(100 + 2*i), dupRate: 0.1}.build(t)
		n := simRun{msgs: 100, seed: uint64(101 + 2*i), dupRate: 0.1}.build(t)
		if b.Delivery.Duplicates == 0 || n.Delivery.Duplicates == 0 {
			t.Fatalf("no duplicates drawn: %d, %d", b.Delivery.Duplicates, n.Delivery.Duplicates)
		}
		if r := rowNamed(t, CompareRuns(b, n, DefaultTolerance()), "delivery duplicates"); r.Verdict != RowRegression {
			same++
		} else {
			t.Logf("pair %d: %+v", i, r)
		}
	}
	if same < 19 {
		t.Errorf("duplicates drawn at 10%%: %d of 20 pairs not a regression, want 19", same)
	}
}

// compare is CompareRuns without raw latencies: a latency change past the
// tolerance and the floor is a regression untested.
func compare(base, new *Summary, tol Tolerance) Comparison {
	return CompareRuns(Run{Summary: base}, Run{Summary: new}, tol)
}
