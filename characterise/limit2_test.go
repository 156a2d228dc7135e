package characterise

import (
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// accepted is n sends answered 200 in 10 ms, every gap apart from at.
func accepted(at time.Time, n int, gap time.Duration) []rundir.Attempt {
	as := make([]rundir.Attempt, n)
	for i := range as {
		as[i] = rundir.Attempt{Op: "send", Code: 200, Sent: at.Add(time.Duration(i) * gap), Latency: 0.01}
	}
	return as
}

// The most accepted within one window: a fixed window of 20 per 2 s whose
// quota went in the last half second before a boundary and the first half
// second after it admitted 40 within one second — surely; a sliding log's
// 20 a window apart are 20 at most, and two groups 1.99 s apart are 40 at
// most, 20 surely (their answers came later than a window after the first).
func TestWindowMax(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := 2 * time.Second
	straddle := append(accepted(t0.Add(1500*time.Millisecond), 20, 25*time.Millisecond), accepted(t0.Add(2*time.Second), 20, 25*time.Millisecond)...)
	sliding := append(accepted(t0, 20, 10*time.Millisecond), accepted(t0.Add(2200*time.Millisecond), 20, 10*time.Millisecond)...)
	edge := append(accepted(t0, 20, 0), accepted(t0.Add(1995*time.Millisecond), 20, 0)...)
	refused := append(accepted(t0, 5, 0), rundir.Attempt{Op: "send", Code: 429, Sent: t0, Latency: 0.01})
	for _, tc := range []struct {
		name             string
		as               []rundir.Attempt
		surely, possibly int
	}{
		{"fixed window across its boundary", straddle, 40, 40},
		{"sliding log", sliding, 20, 20},
		{"two groups within the answer time of a window", edge, 20, 40},
		{"429s are not accepted", refused, 5, 5},
		{"none", nil, 0, 0},
	} {
		s, p := windowMax(tc.as, w)
		if s != tc.surely || p != tc.possibly {
			t.Errorf("%s: %d surely, %d at most; want %d, %d", tc.name, s, p, tc.surely, tc.possibly)
		}
	}
}
