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

// get is the threshold that stopped the sends, or nil.
func (t *sendStop) get() *rundir.Abort {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.abort == nil {
		return nil
	}
	a := *t.abort
	return &a
}

// diskLow is what the disk guard saw when it stopped the sends, or nil.
func (t *sendStop) diskLow() *rundir.DiskLow {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.disk == nil {
		return nil
	}
	d := *t.disk
	return &d
}
