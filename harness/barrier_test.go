package harness

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestWaitBarrier: N shards (goroutines) on one barrier directory all return
// once every marker is there, none missing, and none returns before the last
// one wrote its marker; a shard alone returns at its deadline naming the
// others.
func TestWaitBarrier(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ready")
	const n = 3
	far := time.Now().Add(time.Hour)
	var wg sync.WaitGroup
	missing := make([][]int, n)
	returned := make(chan int, n)
	for i := range n - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			missing[i], _ = waitBarrier(context.Background(), dir, i, n, far, time.Now)
			returned <- i
		}()
	}
	// The last shard comes when the others wait: none may have returned.
	for {
		if len(missingMarkers(dir, n-1)) == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case i := <-returned:
		t.Fatalf("shard %d left the barrier before shard %d was ready", i, n-1)
	default:
	}
	var err error
	missing[n-1], err = waitBarrier(context.Background(), dir, n-1, n, far, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, m := range missing {
		if len(m) != 0 {
			t.Errorf("shard %d: missing %v, want none", i, m)
		}
	}

	alone := filepath.Join(t.TempDir(), "ready")
	m, err := waitBarrier(context.Background(), alone, 1, n, time.Now(), time.Now)
	if err != nil || !slices.Equal(m, []int{0, 2}) {
		t.Errorf("alone at the deadline: missing %v (%v), want [0 2]", m, err)
	}
	if _, err := os.Stat(filepath.Join(alone, barrierMarker(1))); err != nil {
		t.Errorf("no ready marker written: %v", err)
	}
}
