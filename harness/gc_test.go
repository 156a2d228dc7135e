package harness

import (
	"context"
	"io/fs"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/scenarios"
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

// The live loop's analyses (checkpoints, abortOnFail) run at the lowered
// GOGC of the run's own report: each decodes every line again, and at the
// default GOGC a checkpoint lifted the heap to twice what was live — the
// run's peak of memory, growing twice as fast as the live state (issue 23).
// The process's own setting is back once the run is over.
func TestLiveAnalysisLowersGC(t *testing.T) {
	const own = 137
	before := debug.SetGCPercent(own)
	defer debug.SetGCPercent(before)
	var (
		mu   sync.Mutex
		seen []int
	)
	defer func(f func(fs.FS, string) (*reports.Summary, error)) { liveAnalysis = f }(liveAnalysis)
	liveAnalysis = func(fsys fs.FS, dir string) (*reports.Summary, error) {
		v := debug.SetGCPercent(-1)
		debug.SetGCPercent(v)
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
		if v != reportGCPercent {
			t.Fatalf("live analysis %d of %d ran at GOGC %d, want %d", i+1, len(seen), v, reportGCPercent)
		}
	}
	if v := debug.SetGCPercent(own); v != own {
		t.Errorf("GOGC %d after the run, want the process's own %d", v, own)
	}
}
