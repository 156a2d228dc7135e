package attack

import (
	"math"
	"testing"
)

// TestRingSize: the ring of intended send times holds at least twice the
// workers that can stand between the pacer and the targeter, and no more
// than scheduleSlots however many workers are allowed.
func TestRingSize(t *testing.T) {
	for _, tc := range []struct {
		workers uint64
		want    int64
	}{
		{0, 4096},
		{10, 4096},
		{DefaultMaxInFlight + 64, 4096},
		{2049, 8192},
		{20000, 1 << 16},
		{math.MaxUint64, scheduleSlots},       // vegeta's unbounded default
		{math.MaxUint64/2 + 1, scheduleSlots}, // twice it does not wrap to a small ring
	} {
		if got := ringSize(tc.workers); got != tc.want {
			t.Errorf("ringSize(%d) = %d, want %d", tc.workers, got, tc.want)
		}
	}
}
