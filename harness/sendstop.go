package harness

import (
	"context"
	"sync"

	"github.com/msgload/msgload/rundir"
)

// sendStop stops the sends of every part of a run, once, and keeps what
// stopped them: an abortOnFail threshold of one of them that failed live
// (trip), or the run's disk running low (tripDisk, disk.go).
type sendStop struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	abort  *rundir.Abort
	disk   *rundir.DiskLow
}

// trip records a and stops the sends, unless another threshold already did;
// it reports whether a was the first.
func (t *sendStop) trip(a rundir.Abort) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.abort != nil {
		return false
	}
	t.abort = &a
	t.cancel()
	return true
}

// tripDisk records d and stops the sends, unless the disk already did.
func (t *sendStop) tripDisk(d rundir.DiskLow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.disk == nil {
		t.disk = &d
	}
	t.cancel()
}

// stopped is what stopped the sends: the threshold that failed live and
// what the disk guard saw, each nil when it did not. Each is set once and
// never changed after, so the two are shared, not copied.
func (t *sendStop) stopped() (*rundir.Abort, *rundir.DiskLow) {
	if t == nil {
		return nil, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.abort, t.disk
}
