package harness

import (
	"context"
	"io/fs"
	"math"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/scenarios"
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

// The live loop's analyses (checkpoints, abortOnFail) run under the soft
// memory limit of the run's own report (lowerGC): each decodes every line
// again, and at the default GOGC alone a checkpoint lifted the heap to twice
// what was live — the run's peak of memory, growing twice as fast as the live
// state (issue 23). The process's own setting is back once the run is over.
func TestLiveAnalysisLowersGC(t *testing.T) {
	const own = 137
	before := debug.SetGCPercent(own)
	defer debug.SetGCPercent(before)
	var (
		mu   sync.Mutex
		seen []int64
	)
	defer func(f func(fs.FS, string) (*reports.Summary, error)) { liveAnalysis = f }(liveAnalysis)
	liveAnalysis = func(fsys fs.FS, dir string) (*reports.Summary, error) {
		v := debug.SetMemoryLimit(-1)
		mu.Lock()
		seen = append(seen, v)
		mu.Unlock()
		return reports.AnalyzeFS(fsys, dir)
	}
	src := `
name: lowgc
api: notify
target: embedded
load: { profile: constant, rate: 20/s, requests: 40 }
message: { recipient: "+79990000001", text: "x" }
delivery: { via: none }
`
	s, err := scenarios.Parse("lowgc.yaml", "", []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if _, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr, Checkpoint: 100 * time.Millisecond}); err != nil {
		t.Fatal(err, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("no checkpoint was taken in a run of 2 s with one every 100 ms")
	}
	for i, v := range seen {
		if v < reportMemHeadroom || v == math.MaxInt64 {
			t.Fatalf("live analysis %d of %d ran with the memory limit %d, want one set, at least %d", i+1, len(seen), v, reportMemHeadroom)
		}
	}
	if v := debug.SetMemoryLimit(-1); v != math.MaxInt64 {
		t.Errorf("memory limit %d after the run, want none (the process's)", v)
	}
	if v := debug.SetGCPercent(own); v != own {
		t.Errorf("GOGC %d after the run, want the process's own %d", v, own)
	}
}
