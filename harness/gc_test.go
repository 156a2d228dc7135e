package harness

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
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

// The live loop's analyses (checkpoints, abortOnFail) run in a child process
// (livechild.go): the run's own process keeps its GOGC and its memory limit
// all through a run that checkpoints every 100 ms, and the checkpoints come —
// summary.json marked partial while the run goes (5 s of sends: a busy
// machine starts each analysis's process late, but not fifty times over).
func TestLiveAnalysisLeavesTheRunsGC(t *testing.T) {
	const own = 137
	before := debug.SetGCPercent(own)
	defer debug.SetGCPercent(before)
	src := `
name: lowgc
api: notify
target: embedded
load: { profile: constant, rate: 20/s, requests: 100 }
message: { recipient: "+79990000001", text: "x" }
delivery: { via: none }
`
	s, err := scenarios.Parse("lowgc.yaml", "", []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var (
		mu      sync.Mutex
		limits  []int64
		partial bool
	)
	stop := make(chan struct{})
	looked := make(chan struct{})
	go func() {
		defer close(looked)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			v := debug.SetMemoryLimit(-1)
			found := false
			if ms, _ := filepath.Glob(filepath.Join(out, "*", "summary.json")); len(ms) > 0 {
				b, _ := os.ReadFile(ms[0])
				found = strings.Contains(string(b), `"partial": true`)
			}
			mu.Lock()
			limits = append(limits, v)
			partial = partial || found
			mu.Unlock()
		}
	}()
	var stderr strings.Builder
	_, err = Run(context.Background(), Options{Scenario: s, Out: out, Stderr: &stderr, Checkpoint: 100 * time.Millisecond})
	close(stop)
	<-looked
	if err != nil {
		t.Fatal(err, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if !partial {
		t.Fatalf("no partial summary.json seen in a run of 5 s with a checkpoint every 100 ms:\n%s", stderr.String())
	}
	for _, v := range limits {
		// The run's own report after the attack lowers it (lowerGC); the
		// checkpoints before it never do.
		if v != math.MaxInt64 && v < reportMemHeadroom {
			t.Fatalf("memory limit %d during the run", v)
		}
	}
	if v := debug.SetMemoryLimit(-1); v != math.MaxInt64 {
		t.Errorf("memory limit %d after the run, want none (the process's)", v)
	}
	if v := debug.SetGCPercent(own); v != own {
		t.Errorf("GOGC %d after the run, want the process's own %d", v, own)
	}
}

// The soft memory limit the run's report runs under (lowerGC) follows the
// rest of the process, which may still be sending (another part's attack):
// what it comes to hold while the report reads (here 32 MB kept, as a stall's connections in flight would
// be) raises it within a few of the follower's looks, so that it still leaves the
// headroom above what is retained and the collector is not left without room.
// Metamorphic: when nothing grows the limit stays what was set, and so it
// does when the analysis made 32 MB of garbage (as it does, decoding every
// line again), held by the runtime until it gives it back: a limit raised by
// that would never bind. The process's own limit is back after. (The
// collector's CPU is too noisy to assert on: the limit is.)
// garbageSink makes TestLowerGCLimitFollowsTheProcess's garbage escape to
// the heap, dropped again before a collection sees it.
var garbageSink atomic.Pointer[[]byte]

func TestLowerGCLimitFollowsTheProcess(t *testing.T) {
	// slack is what the runtime's own bookkeeping may move between two reads.
	const slack = 1 << 20
	beforeLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(beforeLimit)
	for _, c := range []struct{ grow, garbage int }{{0, 0}, {0, 32 << 20}, {32 << 20, 0}} {
		grow := c.grow
		var set, after, held, retained int64
		analysis := func() {
			set = debug.SetMemoryLimit(-1)
			kept := make([]byte, grow) // the attack's growth
			debug.FreeOSMemory()       // a collection finds it live; the free heap given back, what is held is kept
			held, retained = memoryNow()
			if c.garbage > 0 {
				// The analysis's: decoded, dropped, collected, held by the
				// runtime until it gives it back. Collected while nothing
				// allocates: what a collection counts live of what was
				// allocated while it marked is followGC's bounded allowance,
				// not asserted here (it depends on the machine's pace).
				// Dropped before any collection: kept alive across the
				// first one (as before), it was 32 MB live at that
				// collection, and a look of the follower's between the two
				// saw it retained and raised the limit (CI, a busy machine).
				// And made while the follower cannot look: the 32 MB asked
				// for at once, over the lowered limit, starts a collection
				// that counts them live (allocated while it marks), and a
				// look of the follower's before runtime.GC's own collection
				// ended saw them retained and raised the limit (CI, twice).
				// A look then is followGC's bounded allowance, not this
				// test's; it holds lowGC's lock, which followGC takes
				// before it reads the memory.
				lowGC.Lock()
				junk := make([]byte, c.garbage)
				garbageSink.Store(&junk) // escapes: the allocation is made
				garbageSink.Store(nil)
				junk = nil
				runtime.GC()
				lowGC.Unlock()
			}
			// lowerGC's follower looks every followInterval: growth shows
			// within a few looks (waited for up to 10 s on a busy machine),
			// and nothing may have moved the limit after eight.
			time.Sleep(8 * followInterval)
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(followInterval) {
				after = debug.SetMemoryLimit(-1)
				if grow == 0 || after >= retained+reportMemHeadroom-slack || time.Now().After(deadline) {
					break
				}
			}
			runtime.KeepAlive(kept)
		}
		// The limit is set against the live heap of now, with no free heap
		// held beside it: room that growth could use without a raise.
		debug.FreeOSMemory()
		restore := lowerGC()
		analysis()
		restore()
		if set == math.MaxInt64 {
			t.Fatal("no memory limit set during the report")
		}
		t.Logf("grew %d MB, %d MB of garbage: limit %d at the start, %d after the pause; held %d, retained %d", grow>>20, c.garbage>>20, set, after, held, retained)
		if grow == 0 && after != set {
			t.Errorf("nothing grew (%d MB of garbage made), and the limit went from %d to %d", c.garbage>>20, set, after)
		}
		if grow > 0 && after < retained+reportMemHeadroom-slack {
			t.Errorf("the process came to retain %d bytes (%d MB more) during the analysis, and the limit stayed at %d: want at least %d, the headroom above what is retained",
				retained, grow>>20, after, retained+reportMemHeadroom)
		}
		if v := debug.SetMemoryLimit(-1); v != math.MaxInt64 {
			t.Errorf("memory limit %d after the analysis, want none (the process's)", v)
		}
	}
}

// The run's report comes after the attack, whose heap still holds the
// collector's room for its garbage: the report works in that room (its
// limit is what the process holds, lowerGC) instead of adding
// reportMemHeadroom to the run's peak. The floor is kept: when the process holds
// less free heap than the headroom, the room is the headroom above what it
// retains (TestLowerGCLimitFollowsTheProcess).
func TestLowerGCWorksInTheAttacksRoom(t *testing.T) {
	const slack = 1 << 20
	beforeLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(beforeLimit)
	var set, held, retained int64
	// The attack's room: 64 MB of its garbage collected, the free heap
	// still held by the runtime (not given back), as between two of its
	// collections.
	debug.FreeOSMemory()
	junk := make([]byte, 64<<20)
	for i := range junk {
		junk[i] = 1 // touched: held, as the attack's heap is
	}
	runtime.KeepAlive(junk)
	junk = nil
	runtime.GC()
	restore := lowerGC()
	set = debug.SetMemoryLimit(-1)
	held, retained = memoryNow()
	restore()
	t.Logf("limit %d MB, held %d MB, retained %d MB", set>>20, held>>20, retained>>20)
	if held-retained < reportMemHeadroom+2*slack {
		t.Skipf("the runtime gave the free heap back before the analysis (held %d, retained %d): no room to look at", held, retained)
	}
	if set > held+slack {
		t.Errorf("report after the attack: limit %d, want at most what is held, %d (the attack's own room, %d MB free): not %d MB more",
			set, held, (held-retained)>>20, reportMemHeadroom>>20)
	}
	if set < retained+reportMemHeadroom {
		t.Errorf("limit %d under what is retained and the headroom, %d", set, retained+reportMemHeadroom)
	}
}

// The run's own report, built after the attack, works in the room the
// attack's heap left (lowerGC), and its limit follows the process while it
// is built (followEvery): what it comes to hold (its bounded state) raises
// the limit instead of leaving the collector without room.
func TestRunReportLimitFollows(t *testing.T) {
	debug.FreeOSMemory()
	beforeLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(beforeLimit)
	defer func(f func(string) (*reports.Summary, error)) { buildDir = f }(buildDir)
	var (
		set, raised, retained int64
		seen                  bool
	)
	buildDir = func(dir string) (*reports.Summary, error) {
		seen = true
		set = debug.SetMemoryLimit(-1)
		// The report's state, as if it grew past the whole room the limit
		// left: without a raise the collector would run without end.
		_, before := memoryNow()
		kept := make([]byte, max(set-before, 0)+reportMemHeadroom)
		for i := range kept {
			kept[i] = 1
		}
		runtime.GC() // a collection finds it live
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if raised = debug.SetMemoryLimit(-1); raised > set {
				break
			}
		}
		_, retained = memoryNow()
		runtime.KeepAlive(kept)
		return render.Build(dir)
	}
	src := `
name: reportgc
api: notify
target: embedded
load: { profile: constant, rate: 20/s, requests: 10 }
message: { recipient: "+79990000001", text: "x" }
delivery: { via: none }
`
	s, err := scenarios.Parse("reportgc.yaml", "", []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	if _, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr, Checkpoint: -1}); err != nil {
		t.Fatal(err, stderr.String())
	}
	if !seen {
		t.Fatal("the run's report was not built through buildDir")
	}
	t.Logf("limit %d MB at the start, %d MB after the room and the headroom kept; retained %d MB", set>>20, raised>>20, retained>>20)
	if set == math.MaxInt64 {
		t.Fatal("no memory limit set while the run's report was built")
	}
	if raised <= set || raised-retained < reportMemHeadroom/2 {
		t.Errorf("the report came to keep more than its room: limit %d (%d at the start), retained %d, want it raised, at least %d above", raised, set, retained, reportMemHeadroom/2)
	}
	if v := debug.SetMemoryLimit(-1); v != math.MaxInt64 {
		t.Errorf("memory limit %d after the run, want none (the process's)", v)
	}
}
