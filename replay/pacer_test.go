package replay

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

const ms = time.Millisecond

func TestPacerPace(t *testing.T) {
	p, err := newPacerOffsets([]time.Duration{0, 100 * ms, 100 * ms, 300 * ms}, 2)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		elapsed time.Duration
		hits    uint64
		wait    time.Duration
		stop    bool
	}{
		{0, 0, 0, false},             // the first hit is due at once
		{10 * ms, 1, 40 * ms, false}, // offset 100ms at speed 2 is due at 50ms
		{50 * ms, 2, 0, false},       // a second hit at the same offset goes at once (burst)
		{60 * ms, 3, 90 * ms, false}, // 300ms/2 = 150ms
		{400 * ms, 3, 0, false},      // behind plan: send at once, never a negative wait
		{400 * ms, 4, 0, true},       // all sent: stop
		{400 * ms, 100, 0, true},     // more hits than planned (never happens) still stops
	}
	for _, tt := range tests {
		wait, stop := p.Pace(tt.elapsed, tt.hits)
		if wait != tt.wait || stop != tt.stop {
			t.Errorf("Pace(%v, %d) = %v, %v; want %v, %v", tt.elapsed, tt.hits, wait, stop, tt.wait, tt.stop)
		}
	}
}

func TestPacerRejectsBadSpeed(t *testing.T) {
	for _, s := range []float64{0, -1} { // zero and negative speeds mean nothing
		if _, err := newPacerOffsets([]time.Duration{0}, s); !errors.Is(err, ErrBadSpeed) {
			t.Errorf("speed %v: err %v, want ErrBadSpeed", s, err)
		}
	}
}

func TestPacerIntendedIsScaledAndSorted(t *testing.T) {
	// Out-of-order offsets (as a careless file might give) are sorted, and scaled.
	p, err := newPacerOffsets([]time.Duration{3 * time.Second, 0, time.Second}, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 100 * ms, 300 * ms}
	for i, w := range want {
		if got := p.Intended(i); got != w {
			t.Errorf("Intended(%d) = %v, want %v", i, got, w)
		}
	}
	if p.Duration() != 300*ms {
		t.Errorf("Duration = %v", p.Duration())
	}
}

func TestPacerRate(t *testing.T) {
	offs := make([]time.Duration, 0, 30)
	for i := range 20 { // 20 hits in the first second
		offs = append(offs, time.Duration(i)*50*ms)
	}
	for i := range 10 { // then 10 hits at 10s
		offs = append(offs, 10*time.Second+time.Duration(i))
	}
	p, _ := newPacerOffsets(offs, 1)
	if r := p.Rate(500 * ms); r != 20 {
		t.Errorf("Rate(0.5s) = %v, want 20", r)
	}
	if r := p.Rate(5 * time.Second); r != 0 {
		t.Errorf("Rate(5s) = %v, want 0", r)
	}
	if r := p.Rate(10 * time.Second); r != 10 {
		t.Errorf("Rate(10s) = %v, want 10", r)
	}
}

// runLikeVegeta drives p as vegeta's attacker does (Pace, sleep, hand the hit
// over), where handing over hit i takes cost(i) (a busy worker pool).
func runLikeVegeta(p *Pacer, cost func(i int) time.Duration) (sent []time.Duration) {
	began := time.Now()
	for hits := uint64(0); ; {
		wait, stop := p.Pace(time.Since(began), hits)
		if stop {
			return sent
		}
		time.Sleep(wait)
		time.Sleep(cost(int(hits)))
		sent = append(sent, time.Since(began))
		hits++
	}
}

func TestPacerKeepsPaceAndReportsLateness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A burst of 5 hits at 1s, then hits at 2s and 3s, at speed 1. Handing a hit
		// over takes 100ms during the burst, nothing otherwise.
		offs := []time.Duration{0, time.Second, time.Second, time.Second, time.Second, time.Second, 2 * time.Second, 3 * time.Second}
		p, _ := newPacerOffsets(offs, 1)
		sent := runLikeVegeta(p, func(i int) time.Duration {
			if i >= 1 && i <= 5 {
				return 100 * ms
			}
			return 0
		})
		want := []time.Duration{0, 1100 * ms, 1200 * ms, 1300 * ms, 1400 * ms, 1500 * ms, 2 * time.Second, 3 * time.Second}
		if len(sent) != len(want) {
			t.Fatalf("sent %d hits, want %d", len(sent), len(want))
		}
		for i := range want {
			if sent[i] != want[i] {
				t.Errorf("hit %d sent at %v, want %v", i, sent[i], want[i])
			}
		}
		l := p.Lateness()
		// Lateness of the burst: 100..500ms; the hit after it is on time again.
		// Sorted lateness 0,0,0,100,200,300,400,500ms: nearest-rank p50 is 100ms.
		if l.Hits != 8 || l.Late != 5 || l.Max != 500*ms || l.MaxHit != 5 || l.P50 != 100*ms || l.P99 != 500*ms {
			t.Errorf("Lateness = %+v", l)
		}
	})
}
