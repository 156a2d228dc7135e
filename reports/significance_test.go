package reports

import (
	"math"
	mrand "math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

// TestMannWhitneyExact checks the exact p-values against values worked out
// by hand from the permutation distribution (textbook tables).
func TestMannWhitneyExact(t *testing.T) {
	seq := func(from float64, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = from + float64(i)
		}
		return v
	}
	for _, tc := range []struct {
		name      string
		base, new []float64
		u, p      float64
	}{
		// Every NEW above every BASE: one arrangement of C(6,3) = 20 in each tail.
		{"3 below 3", seq(1, 3), seq(10, 3), 9, 2.0 / 20},
		// U = 1 of 4 × 5: P(U ≤ 1) = 2/126 (Mann & Whitney's table).
		{"4 and 5, one pair reversed", []float64{1, 2, 3, 6}, []float64{5, 7, 8, 9, 10}, 19, 2 * 2.0 / 126},
		// 24 all above 23: 2/C(47,23).
		{"24 above 23", seq(0, 23), seq(100, 24), 23 * 24, 2.0 / 16123801841550},
		// Interleaved: no tendency, U at its mean.
		{"interleaved", []float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 10, 2 * 24.0 / 70},
	} {
		m := mannWhitneyTest(tc.base, tc.new)
		if !m.Exact || m.U != tc.u || !near(m.P, min(tc.p, 1), 1e-9) {
			t.Errorf("%s: U %v p %v exact %v; want U %v p %v", tc.name, m.U, m.P, m.Exact, tc.u, tc.p)
		}
	}
	// Ties (censored values are +Inf, all tied): {1, 2, ∞} against {∞, ∞, ∞}.
	// Doubled mid-ranks 2, 4, 10, 10, 10, 10; NEW's sum 30 is the largest of
	// C(6,3) = 20 choices, reached by 4 of them (any three of the four
	// tied): P = 2 · 4/20.
	inf := math.Inf(1)
	if m := mannWhitneyTest([]float64{1, 2, inf}, []float64{inf, inf, inf}); !near(m.P, 0.4, 1e-12) || m.U != 7.5 {
		t.Errorf("ties: U %v p %v, want 7.5 and 0.4", m.U, m.P)
	}
}

// TestMannWhitneyNormal: past the exact sizes the normal approximation with
// the tie correction is used; at the boundary it is within a factor 1.5 of
// the exact p-value down to 1e-4, and not below it.
func TestMannWhitneyNormal(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	draw := func(n int, shift float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Round(10*(rng.NormFloat64()+shift)) / 10 // ties
		}
		slices.Sort(v)
		return v
	}
	for range 20 {
		a, b := draw(30, 0), draw(30, 0.6)
		m := mannWhitneyTest(a, b)
		ranks, _ := midRanks2(a, b)
		approx := normalRankSumP(m.U, 30, 30, ranks)
		if !m.Exact || approx < 0.95*m.P || approx > 1.5*m.P {
			t.Errorf("exact p %v, normal approximation %v", m.P, approx)
		}
	}
	if m := mannWhitneyTest(draw(31, 0), draw(40, 0)); m.Exact {
		t.Error("31 values: want the normal approximation")
	}
	// 100 against the same 100 shifted by a constant: z = 12.2, p ~ 1e-34.
	a := draw(100, 0)
	b := make([]float64, len(a))
	for i := range a {
		b[i] = a[i] + 100
	}
	if m := mannWhitneyTest(a, b); m.P > 1e-30 || m.P <= 0 || m.slower() != 1 {
		t.Errorf("all slower: p %v, slower %v", m.P, m.slower())
	}
}

// TestFisherExact checks Fisher's exact test against textbook values.
func TestFisherExact(t *testing.T) {
	for _, tc := range []struct {
		a, n1, b, n2 int64
		p            float64
	}{
		{3, 4, 1, 4, 0.4857142857},   // the lady tasting tea: 3 of 4 against 1 of 4
		{1, 10, 9, 10, 0.0010933339}, // 1/10 against 9/10 (R fisher.test)
		{0, 20, 3, 20, 0.2307692308}, // 0 against 3 of 20: 2 × C(20,3)/C(40,3)
		{11, 100, 12, 100, 1},
		{5, 5, 5, 5, 1},
	} {
		if p := fisherExact(tc.a, tc.n1, tc.b, tc.n2); !near(p, tc.p, 1e-8) {
			t.Errorf("%d of %d, %d of %d: p %v, want %v", tc.a, tc.n1, tc.b, tc.n2, p, tc.p)
		}
	}
}

// TestQuantileBounds: the order statistics bound the quantile with at least
// the confidence asked, each side missing with at most half the rest, and no
// narrower pair of ranks would.
func TestQuantileBounds(t *testing.T) {
	// Hand-computed from Binomial(24, ½): P(B ≤ 4) = 0.00077, P(B ≤ 5) = 0.0033,
	// P(B ≤ 6) = 0.0113.
	if lo, hi := quantileBounds(24, 0.5, math.Sqrt(0.99)); lo != 5 || hi != 20 {
		t.Errorf("median of 24 at 99.5%%: ranks %d, %d; want 5, 20", lo, hi)
	}
	if lo, hi := quantileBounds(24, 0.5, 0.99); lo != 6 || hi != 19 {
		t.Errorf("median of 24 at 99%%: ranks %d, %d; want 6, 19", lo, hi)
	}
	if lo, hi := quantileBounds(100, 0.99, math.Sqrt(0.99)); hi != 101 || lo < 90 {
		t.Errorf("p99 of 100: ranks %d, %d; want an unbounded top (101)", lo, hi)
	}
	for _, n := range []int{1, 5, 24, 100, 117, 1000, 100000} {
		for _, q := range []float64{0.5, 0.95, 0.99} {
			conf := math.Sqrt(0.99)
			alpha := (1 - conf) / 2
			lo, hi := quantileBounds(n, q, conf)
			b := distuv.Binomial{N: float64(n), P: q}
			missLow := b.CDF(float64(lo - 1)) // x₍lo₎ above the quantile
			if lo == 0 {
				missLow = 0
			}
			missHigh := 1 - b.CDF(float64(hi-1)) // x₍hi₎ below it
			if hi == n+1 {
				missHigh = 0
			}
			if missLow > alpha || missHigh > alpha+1e-12 {
				t.Errorf("n %d q %v: ranks %d, %d miss with %v and %v, more than %v", n, q, lo, hi, missLow, missHigh, alpha)
			}
			if lo < n && b.CDF(float64(lo)) <= alpha {
				t.Errorf("n %d q %v: rank %d would bound from below too", n, q, lo+1)
			}
			if hi > 1 && hi <= n && 1-b.CDF(float64(hi-2)) <= alpha {
				t.Errorf("n %d q %v: rank %d would bound from above too", n, q, hi-1)
			}
		}
	}
}

// TestShiftIntervalCoverage: the interval of the change of a percentile
// between two runs of one distribution holds 0 in at least 99% of draws
// (here: every one of 300), and an unbounded end is ±Inf, never NaN.
func TestShiftIntervalCoverage(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(5, 6))
	draw := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Exp(rng.NormFloat64())
		}
		slices.Sort(v)
		return v
	}
	for i := range 300 {
		q := []float64{50, 95, 99}[i%3]
		lo, hi := shiftInterval(draw(200), draw(300), q, 0.99)
		if lo > 0 || hi < 0 {
			t.Errorf("draw %d: p%v interval [%v, %v] misses 0", i, q, lo, hi)
		}
	}
	inf := math.Inf(1)
	lo, hi := shiftInterval([]float64{1, 2, inf, inf}, []float64{inf, inf, inf, inf}, 50, 0.99)
	if math.IsNaN(lo) || math.IsNaN(hi) || lo != math.Inf(-1) || hi != inf {
		t.Errorf("censored: [%v, %v], want unbounded", lo, hi)
	}
}

// TestBinomialCDF holds binomialCDF, which quantileBounds uses instead of
// linking gonum into the binary, to gonum's distuv: small and large n, both
// tails and the middle, p near 0, ½ and 1.
func TestBinomialCDF(t *testing.T) {
	for _, n := range []int{1, 2, 7, 24, 100, 1000, 100000, 3000000} {
		for _, p := range []float64{1e-4, 0.01, 0.5, 0.95, 0.99, 0.9999} {
			b := distuv.Binomial{N: float64(n), P: p}
			mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
			ks := []int{-1, 0, 1, n / 2, n - 1, n, int(mean), int(mean - 3*sd), int(mean + 3*sd), int(mean - sd), int(mean + sd)}
			for _, k := range ks {
				want := b.CDF(float64(k))
				if k < 0 {
					want = 0
				}
				got := binomialCDF(k, n, p)
				// Beyond 10⁵ both lose digits to the log-gamma of large
				// arguments: at n 3·10⁶, p ½ distuv gives P(B ≤ n/2) 0.5002248,
				// 5·10⁻⁶ off the exact ½ + P(B = n/2)/2 = 0.5002303 this gives.
				tol := 1e-9
				if n > 100000 {
					tol = 1e-5
				}
				if math.Abs(got-want) > tol {
					t.Errorf("P(B ≤ %d) for Binomial(%d, %v) = %v, want %v", k, n, p, got, want)
				}
			}
		}
	}
}
