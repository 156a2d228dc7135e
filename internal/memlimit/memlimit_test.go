package memlimit

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestReportMemoryLimit: `msgload report` caps the collector's headroom at
// reportMemFloor while the analysis's live heap is small (its state is
// bounded: the peak RSS must not follow the garbage of a longer run), and
// above that lets it follow the live heap (twice it, as GOGC=100 would, and
// the runtime's own memory), so a report whose bounded state is larger is
// not made to collect without end.
func TestReportMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, reportMemFloor},
		{4 << 20, reportMemFloor},
		{(reportMemFloor - reportMemSlack) / 2, reportMemFloor},
		{20 << 20, 40<<20 + reportMemSlack},
	} {
		if got := memoryLimitFor(c.live); got != c.want {
			t.Errorf("live %d B: limit %d B, want %d", c.live, got, c.want)
		}
	}
}

// TestReportMemoryLimitSetAndRestored: the limit holds while the report runs
// and the one before is back after it; a limit the user set (GOMEMLIMIT) is
// left as it is.
func TestReportMemoryLimitSetAndRestored(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	stop := ForReport()
	if got := debug.SetMemoryLimit(-1); got == math.MaxInt64 || got < reportMemFloor {
		t.Errorf("while reporting the memory limit is %d, want at least %d and set", got, reportMemFloor)
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("after the report the memory limit is %d, want none (as before)", got)
	}
	debug.SetMemoryLimit(64 << 20)
	stop = ForReport()
	if got := debug.SetMemoryLimit(-1); got != 64<<20 {
		t.Errorf("with GOMEMLIMIT set the report changed the limit to %d", got)
	}
	stop()
}
