package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/msgload/msgload/rundir"
)

// barrierPoll is how often a shard waiting on the start barrier looks for
// the others' ready markers: the shards begin within about this of each
// other when no start instant is given.
var barrierPoll = 100 * time.Millisecond

// defaultBarrierTimeout bounds the wait on the barrier when none is given.
const defaultBarrierTimeout = 10 * time.Minute

// barrierMarker is the name of shard i's ready marker in the barrier
// directory.
func barrierMarker(i int) string { return "ready-" + strconv.Itoa(i) }

// barrier writes this shard's ready marker in the barrier directory and waits
// until every shard's is there: with a start instant, until that instant at
// most (the attack then begins on it); without, BarrierTimeout after reaching
// the barrier at most. Shards still missing then are named in meta and on
// stderr: the attack begins without them.
func (r *partRun) barrier(ctx context.Context, meta *rundir.Meta) error {
	index, count := 0, 1
	if r.shard != nil {
		index, count = r.shard.Index, r.shard.Count
	}
	deadline := r.o.StartAt
	if deadline.IsZero() {
		timeout := r.o.BarrierTimeout
		if timeout <= 0 {
			timeout = defaultBarrierTimeout
		}
		deadline = r.o.Now().Add(timeout)
	}
	missing, err := waitBarrier(ctx, r.o.Barrier, index, count, deadline, r.o.Now)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		meta.BarrierMissing = missing
		fmt.Fprintf(r.o.Stderr, "msgload: %s: starting without shards %v of %d: not ready in %s by %s\n",
			r.s.Name, missing, count, r.o.Barrier, deadline.UTC().Format(time.RFC3339))
	}
	return nil
}

// waitBarrier writes shard index's ready marker in dir and waits until the
// markers of all count shards are there, the deadline passes or ctx is done;
// it returns the shards whose markers are still missing.
func waitBarrier(ctx context.Context, dir string, index, count int, deadline time.Time, now func() time.Time) ([]int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start barrier: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, barrierMarker(index)), []byte(now().UTC().Format(time.RFC3339Nano)+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("start barrier: %w", err)
	}
	t := time.NewTicker(barrierPoll)
	defer t.Stop()
	for {
		missing := missingMarkers(dir, count)
		if len(missing) == 0 || !now().Before(deadline) || ctx.Err() != nil {
			return missing, nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// missingMarkers lists the shards of count with no ready marker in dir.
func missingMarkers(dir string, count int) []int {
	var missing []int
	for i := range count {
		if _, err := os.Stat(filepath.Join(dir, barrierMarker(i))); err != nil {
			missing = append(missing, i)
		}
	}
	return missing
}
