package harness

import (
	"math"
	"runtime/debug"
	"testing"
)

// Two reports built at once in one process (overlapping runs) set the soft
// memory limit while either is being built, and the process's own limit
// comes back when the last ends, whichever order they end in. GOGC is left
// as the process has it: a lowered GOGC lowered the runtime's minimum heap
// too, and a small report was collected again and again.
func TestLowerGCOverlapping(t *testing.T) {
	const own = 137
	before := debug.SetGCPercent(own)
	defer debug.SetGCPercent(before)
	beforeLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(beforeLimit)
	gogc := func() int { v := debug.SetGCPercent(-1); debug.SetGCPercent(v); return v }
	limit := func() int64 { return debug.SetMemoryLimit(-1) }

	restoreA := lowerGC()
	restoreB := lowerGC()
	if got := gogc(); got != own {
		t.Errorf("GOGC %d while two reports are built, want the process's %d", got, own)
	}
	if got := limit(); got < reportMemHeadroom || got == math.MaxInt64 {
		t.Errorf("memory limit %d while two reports are built, want at least %d and set", got, reportMemHeadroom)
	}
	restoreA()
	if got := limit(); got < reportMemHeadroom || got == math.MaxInt64 {
		t.Errorf("memory limit %d while one report is still built", got)
	}
	restoreB()
	if got := limit(); got != math.MaxInt64 {
		t.Errorf("memory limit %d after both, want none (the process's)", got)
	}
	if got := gogc(); got != own {
		t.Errorf("GOGC %d after both, want the process's own %d", got, own)
	}
}

// A memory limit the user set (GOMEMLIMIT) is kept while a report is built.
func TestLowerGCKeepsTheUsersLimit(t *testing.T) {
	const users = 3 << 30
	before := debug.SetMemoryLimit(users)
	defer debug.SetMemoryLimit(before)
	restore := lowerGC()
	if got := debug.SetMemoryLimit(-1); got != users {
		t.Errorf("memory limit %d while a report is built, want the user's %d", got, users)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != users {
		t.Errorf("memory limit %d after, want the user's %d", got, users)
	}
}
