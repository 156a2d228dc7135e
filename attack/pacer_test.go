package attack

import (
	"math"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestRampPace(t *testing.T) {
	t.Parallel()
	sec := time.Second
	for _, tc := range []struct {
		name    string
		Ramp    Ramp
		elapsed time.Duration
		hits    uint64
		wait    time.Duration
		stop    bool
	}{
		// A flat ramp behaves like a constant rate: hit 1 is due at 1/rate.
		{"flat first hit", Ramp{From: 10, To: 10, Over: 10 * sec}, 0, 0, 100 * time.Millisecond, false},
		// 0→10/s over 10 s: hits(t)=t²/2, so hit 2 is due at t=2 s.
		{"rising second hit", Ramp{From: 0, To: 10, Over: 10 * sec}, sec, 1, sec, false},
		// At the end of the ramp 50 hits are due; hit 51 comes 1/10 s later.
		{"after ramp holds To", Ramp{From: 0, To: 10, Over: 10 * sec}, 10 * sec, 50, 100 * time.Millisecond, false},
		// Behind schedule: 5 hits due at t=1 s for 5/s flat, only 2 sent → at once.
		{"behind sends at once", Ramp{From: 5, To: 5, Over: sec}, sec, 2, 0, false},
		// Falling to zero: 10→0 over 2 s gives 10 hits; hit 11 never comes.
		{"falls to zero stops", Ramp{From: 10, To: 0, Over: 2 * sec}, 2 * sec, 10, 0, true},
		// Negative rates are a broken profile: stop.
		{"negative stops", Ramp{From: -1, To: 5, Over: sec}, 0, 0, 0, true},
		// No ramp time: To at once.
		{"zero length ramp", Ramp{From: 1, To: 4, Over: 0}, 0, 0, 250 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wait, stop := tc.Ramp.Pace(tc.elapsed, tc.hits)
			if stop != tc.stop || (!stop && absDur(wait-tc.wait) > time.Microsecond) {
				t.Fatalf("Pace(%v, %d) = %v, %v; want %v, %v", tc.elapsed, tc.hits, wait, stop, tc.wait, tc.stop)
			}
		})
	}
}

func TestRampRate(t *testing.T) {
	t.Parallel()
	r := Ramp{From: 0, To: 10, Over: 10 * time.Second}
	for _, tc := range []struct {
		elapsed time.Duration
		want    float64
	}{
		{0, 0},                 // start of the ramp
		{5 * time.Second, 5},   // half way
		{20 * time.Second, 10}, // after the ramp: To
	} {
		if got := r.Rate(tc.elapsed); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Rate(%v) = %g, want %g", tc.elapsed, got, tc.want)
		}
	}
}

func TestStepsPace(t *testing.T) {
	t.Parallel()
	sec := time.Second
	s := Steps{{vegeta.Rate{Freq: 2, Per: sec}, 2 * sec}, {vegeta.Rate{Freq: 0, Per: sec}, sec}, {vegeta.Rate{Freq: 10, Per: sec}, sec}}
	for _, tc := range []struct {
		name    string
		steps   Steps
		elapsed time.Duration
		hits    uint64
		wait    time.Duration
		stop    bool
	}{
		// First step at 2/s: hit 1 due at 0.5 s.
		{"first step", s, 0, 0, 500 * time.Millisecond, false},
		// Hit 4 is the last of step 1 (2 s × 2/s), due at 2 s.
		{"end of first step", s, 1500 * time.Millisecond, 3, 500 * time.Millisecond, false},
		// Hit 5 skips the zero-rate pause: due 0.1 s into step 3, at 3.1 s.
		{"pause skipped", s, 2 * sec, 4, 1100 * time.Millisecond, false},
		// A pause written as the zero Rate (no Per): the same.
		{"zero Rate pause", Steps{s[0], {vegeta.Rate{}, sec}, s[2]}, 2 * sec, 4, 1100 * time.Millisecond, false},
		// The last step holds: hit 20 is due at 3 s + 16/10 s.
		{"last step holds", s, 3 * sec, 19, 1600 * time.Millisecond, false},
		// Behind schedule: at once.
		{"behind", s, 5 * sec, 4, 0, false},
		// No steps is a broken profile: stop.
		{"empty stops", Steps{}, 0, 0, 0, true},
		// A last step at zero rate: no more hits after step 1.
		{"zero tail stops", Steps{{vegeta.Rate{Freq: 1, Per: sec}, sec}, {vegeta.Rate{Freq: 0, Per: sec}, sec}}, sec, 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wait, stop := tc.steps.Pace(tc.elapsed, tc.hits)
			if stop != tc.stop || (!stop && absDur(wait-tc.wait) > time.Microsecond) {
				t.Fatalf("Pace(%v, %d) = %v, %v; want %v, %v", tc.elapsed, tc.hits, wait, stop, tc.wait, tc.stop)
			}
		})
	}
	// Rate follows the step in force.
	for _, tc := range []struct {
		elapsed time.Duration
		want    float64
	}{{sec, 2}, {2500 * time.Millisecond, 0}, {100 * sec, 10}} {
		if got := s.Rate(tc.elapsed); got != tc.want {
			t.Errorf("Rate(%v) = %g, want %g", tc.elapsed, got, tc.want)
		}
	}
}

// TestPacersTotalHits drives each constructor the way vegeta's attack loop
// does, on a simulated clock, and checks the number of hits sent in a window.
func TestPacersTotalHits(t *testing.T) {
	t.Parallel()
	sec := time.Second
	for _, tc := range []struct {
		name string
		p    vegeta.Pacer
		du   time.Duration
		want uint64
	}{
		// 50/s for 10 s.
		{"constant", Constant(vegeta.Rate{Freq: 50, Per: sec}), 10 * sec, 500},
		// 150/min for 2 min (per-minute rates).
		{"per minute", Constant(vegeta.Rate{Freq: 150, Per: time.Minute}), 2 * time.Minute, 300},
		// 0→20/s over 10 s: triangle of 100 hits.
		{"ramp", NewRamp(vegeta.Rate{}, vegeta.Rate{Freq: 20, Per: sec}, 10*sec), 10 * sec, 100},
		// 10/s for 2 s then 30/s for 2 s.
		{"steps", Steps{{vegeta.Rate{Freq: 10, Per: sec}, 2 * sec}, {vegeta.Rate{Freq: 30, Per: sec}, 2 * sec}}, 4 * sec, 80},
		// a whole sine period averages the mean: 10/s for 20 s.
		{"sine", Sine(vegeta.Rate{Freq: 10, Per: sec}, vegeta.Rate{Freq: 5, Per: sec}, 20*sec), 20 * sec, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var elapsed time.Duration
			var hits uint64
			for {
				wait, stop := tc.p.Pace(elapsed, hits)
				if stop {
					break
				}
				elapsed += wait
				if elapsed > tc.du {
					break
				}
				hits++
			}
			if d := int64(hits) - int64(tc.want); d < -1 || d > 1 {
				t.Fatalf("%s: %d hits in %v, want %d±1", tc.name, hits, tc.du, tc.want)
			}
		})
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
