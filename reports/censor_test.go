package reports

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// survivorRun is issue 21's first case by construction: 40 messages accepted
// in a burst (one every 100 ms from 0 s), the attack over at 4 s, a grace of
// 5 s (deadline 9 s); the first two are delivered in 4.48 s and 4.58 s, the
// other 38 have no final status by the deadline (their callbacks would come
// some 20 s after the send, after the run).
func survivorRun() *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8080" // no truth.json to require
	r.meta.AttackEnd, r.meta.End = at(4), at(9)
	r.meta.Delivery.Grace = rundir.Duration(5 * time.Second)
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: 10, Requests: 40, Duration: rundir.Duration(4 * time.Second)}
	r.meta.Thresholds = []string{"delivery.latency.p95 < 10s"}
	for i := range 40 {
		r.send(int64(i+1), "c1", 0.1*float64(i), 200, 0.01)
	}
	r.callback(1, 4.48, "DELIVERED", "sms", true, false)
	r.callback(2, 0.1+4.48+0.1, "DELIVERED", "sms", true, false)
	return r
}

// A final status after the deadline (late) is censored at the deadline too:
// the figure is what the wait saw; the late value is among the delivered
// alone.
func TestLateArrivalIsCensored(t *testing.T) {
	r := survivorRun()
	r.callback(3, 0.2+20, "DELIVERED", "sms", true, false) // late: after 9 s
	s, _ := build(t, r)
	if d := s.Delivery; d.Late != 1 || d.Latency.Censored != 38 || d.LatencyDelivered.Count != 3 || d.LatencyDelivered.Max != 20 {
		t.Errorf("late %d, latency %+v, delivered alone %+v: want the late one censored in the first, its 20 s in the second",
			d.Late, d.Latency, d.LatencyDelivered)
	}
}

// Per channel: a message without a final status counts on the channel it
// was on at the end (the chain's item, after the steps its records showed).
// The failover step out of that channel counts it as censored too.
func TestCensoredByChannelAndStep(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8080"
	r.meta.Chain = []string{"viber:DELIVERED", "sms"}
	for i := range 4 {
		r.send(int64(i+1), "c1", float64(i), 200, 0.01)
	}
	r.callback(1, 2, "DELIVERED", "viber", true, false)      // delivered on viber in 2 s
	r.callback(2, 3, "EXPIRED", "viber", false, false)       // a step to sms in 2 s…
	r.callback(2, 5, "DELIVERED", "sms", true, false)        // …delivered there in 4 s
	r.callback(3, 4, "NOT_DELIVERED", "viber", false, false) // a step to sms at 4 s, then nothing: on sms
	// Message 4: nothing at all, on viber (sent at 3 s, deadline 70 s).
	s, _ := build(t, r)
	d := s.Delivery
	if p := d.ByChannel["viber"]; p.Count != 2 || p.Censored != 1 || p.MaxAtLeast == nil || *p.MaxAtLeast != 67 {
		t.Errorf("viber %+v: want message 1 and message 4 censored at 67 s", p)
	}
	if p := d.ByChannel["sms"]; p.Count != 2 || p.Censored != 1 || p.MaxAtLeast == nil || *p.MaxAtLeast != 68 {
		t.Errorf("sms %+v: want message 2 and message 3 censored at 68 s", p)
	}
	if len(d.Failover.Steps) != 1 {
		t.Fatalf("steps %+v, want viber → sms", d.Failover.Steps)
	}
	// Steps taken: 2 (2 s) and 3 (2 s); message 4, on viber, might yet have
	// stepped: censored at 67 s. Message 3 is on sms, the chain's end.
	if st := d.Failover.Steps[0]; st.Count != 2 || st.Time.Count != 3 || st.Time.Censored != 1 || st.Time.P50 != 2 || st.Time.P99AtLeast == nil || *st.Time.P99AtLeast != 67 {
		t.Errorf("step %+v (time %+v): want 2 taken, message 4 censored at 67 s", st, st.Time)
	}
}

// The censored rank rule: a percentile whose rank is among the observed
// values is the rank-th of them; from the first censored rank on, it is a
// lower bound, the rank-th of the observed values and the censoring times
// merged — not the smallest censoring time.
func TestHistCensoredRank(t *testing.T) {
	h := newHist()
	for v := 1; v <= 8; v++ {
		h.observe(float64(v))
	}
	h.censor(6)
	h.censor(5) // ten values, ranks 9 and 10 censored; merged: 1 2 3 4 5 5 6 6 7 8
	for _, c := range []struct {
		q       float64
		v       float64
		atLeast float64 // 0: exact
	}{
		{80, 8, 0},    // rank 8: just before the first censored rank
		{81, 0, 7},    // rank 9: the first censored rank, the 9th merged
		{90, 0, 7},    // rank 9
		{91, 0, 8},    // rank 10: after it; the 10th merged is an observed value
		{100, 0, 8},   // the max
		{50, 5, 0},    // rank 5
		{0.001, 1, 0}, // rank 1
	} {
		v, b := h.censoredQuantile(c.q)
		switch {
		case c.atLeast == 0 && (b != nil || v != c.v):
			t.Errorf("q%v: %v, bound %v; want exactly %v", c.q, v, b, c.v)
		case c.atLeast != 0 && (b == nil || *b != c.atLeast):
			t.Errorf("q%v: %v, bound %v; want at least %v", c.q, v, b, c.atLeast)
		}
	}
	p := h.percentiles()
	if p.Count != 10 || p.Censored != 2 || p.P50 != 5 || p.P90AtLeast == nil || *p.P90AtLeast != 7 ||
		p.MaxAtLeast == nil || *p.MaxAtLeast != 8 || p.MeanAtLeast == nil || *p.MeanAtLeast != (36.0+11)/10 {
		t.Errorf("percentiles %+v", p)
	}
	if pts := h.cdf(); pts[len(pts)-1] != [2]float64{8, 0.8} {
		t.Errorf("cdf ends at %v, want 8 s at 80%%: two of ten had no value", pts[len(pts)-1])
	}
}

// Whatever the censored values turn out to be (each more than its censoring
// time), a lower bound is at most the true percentile and an exact figure
// (the censored ranked last) at least it: the figure is never better than
// the truth. Random hists against random completions.
func TestHistCensoredBoundsHold(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	for trial := range 500 {
		h := newHist()
		var obs, cens []float64
		for range 1 + rng.IntN(30) {
			v := math.Round(rng.Float64()*1e4) / 1e3
			obs = append(obs, v)
			h.observe(v)
		}
		for range rng.IntN(30) {
			c := math.Round(rng.Float64()*1e4) / 1e3
			cens = append(cens, c)
			h.censor(c)
		}
		for range 20 {
			all := slices.Clone(obs)
			for _, c := range cens {
				all = append(all, c+0.001+rng.Float64()*5) // a true value past its wait
			}
			slices.Sort(all)
			for _, q := range []float64{1, 50, 90, 95, 99, 100} {
				truth := all[rank(q, len(all))-1]
				v, b := h.censoredQuantile(q)
				switch {
				case b != nil && *b > truth+1e-9:
					t.Fatalf("trial %d q%v: bound %v above a possible truth %v (observed %v, censored %v)", trial, q, *b, truth, obs, cens)
				case b == nil && v < truth-1e-9:
					t.Fatalf("trial %d q%v: exact %v below a possible truth %v (observed %v, censored %v)", trial, q, v, truth, obs, cens)
				}
			}
		}
	}
}

// compare: a delivery twice as slow, whose slow part falls past the deadline,
// shows in the percentile it moved. Over the survivors NEW's p95 was lower
// than BASE's (the slow ones had simply gone); counted over every accepted
// message it is a lower bound already above BASE's value: a regression,
// with the raw latencies or without.
func TestCompareCensoredSlowdown(t *testing.T) {
	mk := func(id string, factor float64) *run {
		r := newRun(rundir.APIMessaging)
		r.meta.ID = id
		r.meta.Target = "http://127.0.0.1:8080"
		r.meta.AttackEnd, r.meta.End = at(1), at(6)
		r.meta.Delivery.Grace = rundir.Duration(5 * time.Second) // deadline 6 s
		for i := range 60 {
			seq, sent := int64(i+1), 0.01*float64(i)
			lat := 1.0 + 0.01*float64(i%30) // 48 fast ones, 1 to 1.3 s…
			if i%5 == 4 {
				lat = 3.1 + 0.01*float64(i%7) // …and 12 slow ones from 3.1 s
			}
			r.send(seq, "c1", sent, 200, 0.01)
			if end := sent + factor*lat; end <= 6 { // the sink saw nothing after the deadline
				r.callback(seq, end, "DELIVERED", "sms", true, false)
			}
		}
		return r
	}
	baseDir, newDir := mk("base", 1).write(t), mk("slow", 2).write(t)
	base, err := conclude(baseDir)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := conclude(newDir)
	if err != nil {
		t.Fatal(err)
	}
	if base.Delivery.Latency.Censored != 0 || slow.Delivery.Latency.Censored == 0 {
		t.Fatalf("base %+v, slow %+v: want every base message delivered, some slow ones not", base.Delivery.Latency, slow.Delivery.Latency)
	}
	if b, n := base.Delivery.Latency.P95, slow.Delivery.LatencyDelivered.P95; n > b*1.1 {
		t.Fatalf("the survivors' p95 (%v) should hide the slowdown against %v", n, b)
	}
	bs, err := ReadSamples(baseDir)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := ReadSamples(newDir)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(ns.Delivery)) != slow.Delivery.Latency.Count || !math.IsInf(ns.Delivery[len(ns.Delivery)-1], 1) {
		t.Errorf("samples %v: want every accepted message, the censored last as +Inf", ns.Delivery)
	}
	for _, c := range []Comparison{
		compare(base, slow, DefaultTolerance()),
		CompareRuns(Run{Summary: base, Samples: bs}, Run{Summary: slow, Samples: ns}, DefaultTolerance()),
	} {
		i := slices.IndexFunc(c.Rows, func(r row) bool { return r.Name == "delivery latency p95" })
		if r := c.Rows[i]; r.Verdict != RowRegression || !strings.HasPrefix(r.New, "> ") || !strings.Contains(r.Note, "already above BASE's") {
			t.Errorf("delivery latency p95: %+v, want a regression on NEW's lower bound", r)
		}
	}
	// The median is exact in both and twice as slow: the tests on the raw
	// values, the censored ranked last (+Inf), call it a regression.
	c := CompareRuns(Run{Summary: base, Samples: bs}, Run{Summary: slow, Samples: ns}, DefaultTolerance())
	if r := c.Rows[slices.IndexFunc(c.Rows, func(r row) bool { return r.Name == "delivery latency p50" })]; r.Verdict != RowRegression || r.DecidedBy != decidedBoth || r.Test.P > 1e-6 {
		t.Errorf("delivery latency p50: %+v, want a regression by both tests", r)
	}
	// The other way round, NEW's value at or below BASE's bound is better.
	c = compare(slow, base, DefaultTolerance())
	if r := c.Rows[slices.IndexFunc(c.Rows, func(r row) bool { return r.Name == "delivery latency p95" })]; r.Verdict != rowBetter {
		t.Errorf("back to fast: %+v, want better", r)
	}
}

// The truth side by the same rule: a measured lower bound agrees with true
// bounds censored at the same rank; a measured value where the truth had no
// final status by the deadline, or a bound where the truth surely had one,
// disagrees.
func TestJudgeLatencyCensored(t *testing.T) {
	mk := func(vals []float64, cens ...float64) *hist {
		h := newHist()
		for _, v := range vals {
			h.observe(v)
		}
		for _, c := range cens {
			h.censor(c)
		}
		return h
	}
	delivered := []float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9}
	// Ten delivered, ten censored at the same waits on both sides and measured.
	waits := []float64{5, 5.1, 5.2, 5.3, 5.4, 5.5, 5.6, 5.7, 5.8, 5.9}
	lo, hi := mk(delivered, waits...), mk(delivered, waits...)
	if dis := judgeLatency(mk(delivered, waits...), lo, hi); len(dis) != 0 {
		t.Errorf("bounds censored at the same rank: %q, want agreement", dis)
	}
	// Measured: every message delivered; truth: ten of them past the deadline.
	all := append(slices.Clone(delivered), 2, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7, 2.8, 2.9)
	if dis := judgeLatency(mk(all), lo, hi); len(dis) == 0 || !strings.Contains(dis[0], "true more than") {
		t.Errorf("measured values where the truth had none: %q, want a disagreement", dis)
	}
	// Measured: ten censored; truth: all surely delivered.
	if dis := judgeLatency(mk(delivered, waits...), mk(all), mk(all)); len(dis) == 0 || !strings.Contains(dis[0], "measured more than") {
		t.Errorf("measured bounds where the truth had values: %q, want a disagreement", dis)
	}
}
