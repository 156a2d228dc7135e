package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// nearestRank is the oracle: sort a copy, then take the smallest 1-based rank k
// with k/n ≥ q/100 (counted up in integers, no ceiling, no floating rank).
func nearestRank(vals []float64, q int) float64 {
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	n := len(s)
	k := 1
	for k*100 < q*n {
		k++
	}
	return s[k-1]
}

func checkExact(t *testing.T, name string, vals []float64) {
	t.Helper()
	h := newHist()
	var sum, mx float64
	for _, v := range vals {
		h.observe(v)
		sum += v
		mx = math.Max(mx, v)
	}
	p := h.percentiles()
	if p.Count != int64(len(vals)) {
		t.Errorf("%s: count %d, want %d", name, p.Count, len(vals))
	}
	for _, c := range []struct {
		q   int
		got float64
	}{{50, p.P50}, {90, p.P90}, {95, p.P95}, {99, p.P99}, {100, p.Max}} {
		if want := round6(nearestRank(vals, c.q)); c.got != want {
			t.Errorf("%s (n=%d): p%d = %v, want the nearest-rank %v", name, len(vals), c.q, c.got, want)
		}
	}
	if p.Max != round6(mx) {
		t.Errorf("%s: max %v, want %v", name, p.Max, round6(mx))
	}
	if want := round6(sum / float64(len(vals))); math.Abs(p.Mean-want) > 1e-6 {
		t.Errorf("%s: mean %v, want %v", name, p.Mean, want)
	}
	// Asking again (values already sorted) gives the same.
	if again := h.percentiles(); again != p {
		t.Errorf("%s: second read %+v differs from %+v", name, again, p)
	}
}

func TestHistExactPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 151))
	lognormal := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Round(math.Exp(rng.NormFloat64()-6)*1e6) / 1e6 // around 2.5 ms, µs grain
		}
		return v
	}
	checkExact(t, "one value", []float64{0.0042})
	checkExact(t, "two values", []float64{0.002, 0.001})
	// n = 151, the case: the histogram gave p99 0.99 ms against the
	// nearest-rank 1.35 ms. Rank ceil(0.99·151) = 150, the second largest.
	v151 := make([]float64, 151)
	for i := range v151 {
		v151[i] = 0.0005 + float64(i)*0.000001
	}
	v151[149], v151[150] = 0.00135, 0.009
	checkExact(t, "n=151", v151)
	h := newHist()
	for _, v := range v151 {
		h.observe(v)
	}
	if got := h.quantile(99); got != 0.00135 {
		t.Errorf("n=151: p99 %v, want 0.00135 (rank 150 of 151)", got)
	}
	checkExact(t, "ties", []float64{0.003, 0.001, 0.003, 0.003, 0.002, 0.003, 0.001, 0.003, 0.003, 0.003})
	checkExact(t, "all equal", []float64{0.5, 0.5, 0.5, 0.5})
	checkExact(t, "ranks exactly on a boundary (n=100)", lognormal(100))
	checkExact(t, "n=200", lognormal(200))
	checkExact(t, "zeros and negatives (recorded as 0)", []float64{0, 0, 0.001})
	for _, n := range []int{3, 7, 19, 20, 99, 101, 590, 1000, 4099} {
		checkExact(t, "random lognormal", lognormal(n))
	}
	wide := make([]float64, 2000) // 1 µs to an hour: no range limit, no bucket
	for i := range wide {
		wide[i] = math.Round(math.Pow(10, rng.Float64()*9.5-6)*1e6) / 1e6
	}
	checkExact(t, "wide range", wide)
	if p := newHist().percentiles(); p != (percentiles{}) {
		t.Errorf("empty: %+v, want zero (no data)", p)
	}
}

func TestRank(t *testing.T) {
	for _, c := range []struct {
		q       float64
		n, want int
	}{
		{50, 1, 1}, {99, 1, 1}, {99, 151, 150}, {99, 100, 99}, {99, 101, 100}, {50, 2, 1}, {50, 3, 2},
		{95, 20, 19}, {95, 21, 20}, {90, 10, 9}, {29, 100, 29}, {100, 7, 7}, {0, 7, 1},
	} {
		if got := rank(c.q, c.n); got != c.want {
			t.Errorf("rank(%v, %d) = %d, want %d", c.q, c.n, got, c.want)
		}
	}
}

// vegetaReport runs `go tool vegeta report -type=json` on a results.bin.
func vegetaReport(t *testing.T, bin string) vegeta.Metrics {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs go tool vegeta")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command(goBin, "tool", "vegeta", "report", "-type=json", bin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool vegeta report: %v\n%s", err, stderr.String())
	}
	var m vegeta.Metrics
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("vegeta report output: %v\n%s", err, out)
	}
	return m
}

// writeResultsBin writes the run's attempts as results.bin, as the attacker
// does (attack/run.go: Latency = time.Duration(latency_s · 1e9)), and returns
// the latencies in seconds.
func writeResultsBin(t *testing.T, dir string) []float64 {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	enc := vegeta.NewEncoder(f)
	var lats []float64
	var seq uint64
	in := &interner{}
	decode := func(b []byte, a *rundir.Attempt) error { return decodeAttempt(in, b, a) }
	err = readJSONLFunc(os.DirFS(dir), rundir.AttemptsFile, decode, func(a rundir.Attempt) error {
		lats = append(lats, a.Latency)
		r := vegeta.Result{Attack: "t", Seq: seq, Code: uint16(a.Code), Timestamp: a.Sent,
			Latency: time.Duration(a.Latency * 1e9), Method: "POST", URL: "http://127.0.0.1/api"}
		seq++
		return enc.Encode(&r)
	}, nil)
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return lats
}

// tdigestBand is how many ranks either side of the nearest rank vegeta's
// estimate may come from. vegeta v12.12.0 (lib/metrics.go) estimates
// quantiles with influxdata/tdigest v0.0.1 at compression δ = 100: a centroid
// near quantile q holds at most max(1, 4·n·q(1−q)/δ) values, and the estimate
// interpolates between the means of the two centroids around rank q·n, so it
// lies within two centroids' width (plus one rank for the interpolation) of
// the exact value.
func tdigestBand(q float64, n int) int {
	return 2*int(math.Ceil(max(1, 4*float64(n)*q*(1-q)/100))) + 1
}

func compareWithVegeta(t *testing.T, dir string) {
	t.Helper()
	lats := writeResultsBin(t, dir)
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := vegetaReport(t, filepath.Join(dir, rundir.ResultsFile))
	sorted := append([]float64(nil), lats...)
	sort.Float64s(sorted)
	n := len(sorted)
	l := s.Requests.Latency
	if int(l.Count) != n || m.Requests != uint64(n) {
		t.Fatalf("counts: msgload %d, vegeta %d, attempts %d", l.Count, m.Requests, n)
	}
	const ns = 1e-9
	for _, c := range []struct {
		name   string
		q      float64
		ours   float64
		theirs time.Duration
	}{
		{"p50", 0.50, l.P50, m.Latencies.P50}, {"p90", 0.90, l.P90, m.Latencies.P90},
		{"p95", 0.95, l.P95, m.Latencies.P95}, {"p99", 0.99, l.P99, m.Latencies.P99},
	} {
		r := rank(100*c.q, n)
		k := tdigestBand(c.q, n)
		lo, hi := sorted[max(r-1-k, 0)], sorted[min(r-1+k, n-1)]
		v := c.theirs.Seconds()
		// 1 µs: summary.json keeps microseconds, vegeta truncates to ns.
		if v < lo-1e-6 || v > hi+1e-6 {
			t.Errorf("%s (n=%d): vegeta %v outside ranks %d±%d [%v, %v] around msgload's %v", c.name, n, v, r, k, lo, hi, c.ours)
		}
		t.Logf("%s n=%d: msgload %.6f s (rank %d), vegeta %.6f s, band ±%d ranks [%.6f, %.6f]", c.name, n, c.ours, r, v, k, lo, hi)
	}
	if d := math.Abs(l.Max - m.Latencies.Max.Seconds()); d > 1e-6+ns {
		t.Errorf("max: msgload %v, vegeta %v", l.Max, m.Latencies.Max.Seconds())
	}
	if d := math.Abs(l.Mean - m.Latencies.Mean.Seconds()); d > 1e-6+ns {
		t.Errorf("mean: msgload %v, vegeta %v", l.Mean, m.Latencies.Mean.Seconds())
	}
	t.Logf("max n=%d: msgload %.6f s, vegeta %.6f s; mean msgload %.6f s, vegeta %.6f s", n, l.Max, m.Latencies.Max.Seconds(), l.Mean, m.Latencies.Mean.Seconds())
}

// TestPercentilesAgreeWithVegeta builds results.bin from runs' attempts (as the
// attacker writes it) and compares msgload's exact figures with `vegeta report`.
func TestPercentilesAgreeWithVegeta(t *testing.T) {
	for _, name := range []string{"sample", "sim-ex-token-bucket"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.EventsFile, rundir.TruthFile} {
				b, err := os.ReadFile(filepath.Join("testdata", "runs", name, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			compareWithVegeta(t, dir)
		})
	}
	t.Run("20000 lognormal", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 99))
		r := newRun(rundir.APIMessaging)
		for i := range 20000 {
			r.send(int64(i+1), "c1", float64(i)/1000, 200, math.Round(math.Exp(rng.NormFloat64()*0.8-5)*1e9)/1e9)
		}
		compareWithVegeta(t, r.write(t))
	})
}

// TestCompactHistReportsTheSame: a compact hist (µs in a uint32) reports
// exactly, to the bit, what a float hist of the same values reports — values
// at and around half a microsecond, negative, NaN, repeated, and past uint32's
// range (it turns into a float hist then) — at every percentile.
func TestCompactHistReportsTheSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	gens := map[string]func() float64{
		"loopback":  func() float64 { return 0.0001 + rng.ExpFloat64()*0.002 },
		"half µs":   func() float64 { return (float64(rng.IntN(50)) + 0.5 + float64(rng.IntN(3)-1)*1e-12) / 1e6 },
		"odd ones":  func() float64 { return []float64{-1, 0, math.NaN(), 1e-7, 0.0000005, 30, 4294.967295}[rng.IntN(7)] },
		"overflows": func() float64 { return rng.Float64() * 5000 },
		"seconds":   func() float64 { return rng.ExpFloat64() * 0.8 }, // counted and listed
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 7, 1000, countFrom - 1, countFrom, 20_000, 150_000} {
			raw, compact := newHist(), newCompactHist()
			for range n {
				v := gen()
				raw.observe(v)
				compact.observe(v)
			}
			if name == "overflows" && n >= 1000 && compact.compact {
				t.Errorf("%s/%d: still compact after values past 4295 s", name, n)
			}
			if name == "loopback" && !compact.compact {
				t.Errorf("%s/%d: not compact", name, n)
			}
			if counted := compact.counted != nil; compact.compact && counted != (compact.n() >= countFrom) {
				t.Errorf("%s/%d: counted %v", name, n, counted)
			}
			if name == "loopback" && n == 150_000 && len(compact.us) != 0 {
				t.Errorf("%s/%d: %d values listed, all are under %d µs", name, n, len(compact.us), countBelow)
			}
			if got, want := compact.percentiles(), raw.percentiles(); got != want {
				t.Errorf("%s/%d: compact %+v, float %+v", name, n, got, want)
			}
			for q := 0.0; q <= 100; q += 0.5 {
				if got, want := compact.quantile(q), raw.quantile(q); math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%s/%d: p%v compact %v, float %v", name, n, q, got, want)
				}
			}
		}
	}
}
