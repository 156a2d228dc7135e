package harness

import (
	"runtime/debug"
	"testing"
)

// Two reports built at once in one process (overlapping runs) lower GOGC
// while either is being built, and the process's own setting comes back when
// the last ends, whichever order they end in. Restoring what each saw on
// entry would leave the lowered value behind.
func TestLowerGCOverlapping(t *testing.T) {
	const own = 137
	before := debug.SetGCPercent(own)
	defer debug.SetGCPercent(before)
	current := func() int { v := debug.SetGCPercent(-1); debug.SetGCPercent(v); return v }

	restoreA := lowerGC()
	restoreB := lowerGC()
	if got := current(); got != reportGCPercent {
		t.Fatalf("GOGC %d while two reports are built, want %d", got, reportGCPercent)
	}
	restoreA()
	if got := current(); got != reportGCPercent {
		t.Fatalf("GOGC %d while one report is still built, want %d", got, reportGCPercent)
	}
	restoreB()
	if got := current(); got != own {
		t.Fatalf("GOGC %d after both, want the process's own %d", got, own)
	}
}
