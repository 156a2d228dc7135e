package memlimit

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// The analysis of a run directory alone in a process (`msgload report`, the
// run's live analysis: harness) holds a bounded state (issue 23: spills'
// chunks, hists, the census; a few MB), but reads gigabytes of JSON lines:
// ~8 KB of garbage a message, decoded and dropped. With the collector's
// default headroom (GOGC=100: the heap may reach twice what was live) its
// peak RSS followed the live heap's small growth twice over, and the
// garbage made while a collection was slow (a busy machine): a 1 M-message
// report's heap went 8 → 22 MB during one collection. A soft memory limit
// bounds both, so the peak stays flat as the run grows.

// reportMemFloor is the soft limit while the live heap is small: about
// 2.5 times the most the bounded analysis held live on the callbacks runs
// of 1 and 3 minutes (6 MB), so the collector keeps room.
const reportMemFloor = 16 << 20

// reportMemSlack is the runtime's memory beyond the heap (its metadata,
// stacks, spans not yet returned) counted in the limit.
const reportMemSlack = 4 << 20

// memoryLimitFor is the soft limit for a live heap of live bytes: the floor,
// or twice the live heap and the slack when that is more — the collector's
// own goal, so a larger bounded state is not collected without end.
func memoryLimitFor(live uint64) int64 {
	return max(reportMemFloor, 2*int64(min(live, math.MaxInt64/4))+reportMemSlack)
}

// ForReport sets the report's soft memory limit and follows the live
// heap until the returned stop is called, which puts back the limit before.
// A limit already set (GOMEMLIMIT) is the user's and left alone.
func ForReport() (stop func()) {
	prev := debug.SetMemoryLimit(-1)
	if prev != math.MaxInt64 {
		return func() {}
	}
	debug.SetMemoryLimit(reportMemFloor)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		followLiveHeap(done, 100*time.Millisecond)
	}()
	return func() {
		close(done)
		<-exited
		debug.SetMemoryLimit(prev)
	}
}

// followLiveHeap sets the limit for the live heap as the last collection
// found it, every interval until done is closed.
func followLiveHeap(done <-chan struct{}, interval time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(memoryLimitFor(sample[0].Value.Uint64()))
		}
	}
}
