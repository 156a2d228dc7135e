package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
)

// FsyncMode says when the event log is flushed to stable storage.
type FsyncMode string

// Fsync modes.
const (
	FsyncBatch  FsyncMode = "batch"  // group commit: one fsync per batch of queued events (default)
	fsyncAlways FsyncMode = "always" // one write and one fsync per event
	fsyncNone   FsyncMode = "none"   // written to the OS before the answer, never fsynced (survives a process kill, not a power cut)
)

// ParseFsyncMode reads a --fsync value.
func ParseFsyncMode(s string) (FsyncMode, error) {
	switch FsyncMode(s) {
	case "", FsyncBatch:
		return FsyncBatch, nil
	case fsyncAlways, fsyncNone:
		return FsyncMode(s), nil
	}
	return "", fmt.Errorf("%w: %q (want batch, always or none)", errFsyncMode, s)
}

// Errors of the event log.
var (
	errFsyncMode = errors.New("unknown fsync mode")
	errClosed    = errors.New("sink closed")
	// errLogBroken: a failed write or fsync left bytes past the last complete
	// line and cutting them off failed too; the log takes nothing until it can.
	errLogBroken = errors.New("event log needs repair")
	// errLogStalled: the log did not take a line in appendWait (storage
	// stalled: fsfreeze, a hung disk); the call is answered 503 and retried.
	errLogStalled = errors.New("event log stalled")
)

// Bounds of a log on storage that stalls or fails (vars: tests shorten them).
var (
	// appendWait bounds how long a call waits for its line to be written:
	// past it the call is answered 503 (not acknowledged) instead of hanging.
	appendWait = 10 * time.Second
	// unhealthyFor is how long /healthz says 503 after a failed write, and
	// how long a write may be pending before it does.
	unhealthyFor = 10 * time.Second
	// closeWait bounds the wait for a pending write at close (SIGTERM).
	closeWait = 10 * time.Second
)

// maxBatch bounds the events written by one write and one fsync.
const maxBatch = 4096

// logReq is one encoded event waiting for the writer; done receives the outcome.
type logReq struct {
	line []byte
	done chan error
}

// LogFile is what the event log needs of its file. *os.File (opened O_APPEND)
// is the one in use; tests put a file that fails on purpose in its place
// (Options.WrapLog). Its methods are called one at a time: by the log's
// writer goroutine, then by its close.
type LogFile interface {
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// eventLog appends lines to a file through one writer goroutine (group commit).
//
// Acknowledged means durable: a call is answered 2xx only after its line was
// written whole (and fsynced, by mode). committed is the size of the file up to
// its last line so written; after a failed or short write or a failed fsync the
// bytes past it are of calls answered 5xx (a torn line, or whole lines that may
// not be on disk), and the file is cut back to committed before anything else
// is written. Until that cut succeeds, every commit fails (the calls are
// answered 500 and retried by the service) rather than append to a torn line.
type eventLog struct {
	f     LogFile
	mode  FsyncMode
	queue chan *logReq

	committed int64        // file size at the end of the last complete, acknowledged line
	published atomic.Int64 // committed, for readers of the file (the read API)
	broken    atomic.Bool  // a cut back failed: the log takes nothing until one succeeds
	// writingSince is when the write in progress started (unix ns; 0: none),
	// failedAt when the last write failed (0: it succeeded), failure why:
	// what /healthz tells.
	writingSince, failedAt atomic.Int64
	failure                atomic.Pointer[string]
	dirty                  error // why bytes past committed may be in the file; nil: none are

	// reqs recycles requests and their done channels. It belongs to this log
	// (not the package): a channel made in one synctest bubble must not be
	// used by another goroutine group.
	reqs sync.Pool

	mu     sync.RWMutex // guards closed against sends on queue
	closed bool
	wg     sync.WaitGroup

	writeDur  prometheus.Observer
	batchSize prometheus.Observer
	buf       []byte
}

// openLog opens (or creates) path for appending. A last line cut by a crash is
// ended with a newline first, so the next event starts a line of its own.
// wrap, when set (tests), replaces the file the log writes through.
func openLog(path string, mode FsyncMode, writeDur, batchSize prometheus.Observer, wrap func(*os.File) LogFile) (*eventLog, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, rundir.FileMode)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	if errors.Is(statErr, os.ErrNotExist) && mode != fsyncNone {
		// A new file: make its directory entry durable too, or a power cut could
		// lose the whole log although every batch in it was fsynced.
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, fmt.Errorf("fsync event log directory: %w", err)
		}
	}
	if err := endLastLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("repair event log %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("event log %s: %w", path, err)
	}
	var lf LogFile = f
	if wrap != nil {
		lf = wrap(f)
	}
	l := &eventLog{
		f: lf, mode: mode, queue: make(chan *logReq, maxBatch), committed: st.Size(),
		writeDur: writeDur, batchSize: batchSize,
	}
	l.published.Store(l.committed)
	l.reqs.New = func() any { return &logReq{done: make(chan error, 1)} }
	l.wg.Add(1)
	go l.run()
	return l, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func endLastLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() == 0 {
		return nil
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, st.Size()-1); err != nil && err != io.EOF {
		return err
	}
	if b[0] == '\n' {
		return nil
	}
	if _, err := f.Write([]byte{'\n'}); err != nil {
		return err
	}
	return f.Sync()
}

// append queues line (which ends in '\n') and waits until it is written (and
// fsynced, by mode). The caller keeps ownership of line after it returns.
func (l *eventLog) append(line []byte) error {
	r := l.reqs.Get().(*logReq)
	r.line = line
	t := time.NewTimer(appendWait)
	defer t.Stop()
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		l.reqs.Put(r)
		return errClosed
	}
	select {
	case l.queue <- r:
	case <-t.C: // the writer is stuck and the queue full
		l.mu.RUnlock()
		l.reqs.Put(r)
		return errLogStalled
	}
	l.mu.RUnlock()
	select {
	case err := <-r.done:
		r.line = nil
		l.reqs.Put(r)
		return err
	case <-t.C:
		// r stays with the writer (its done is buffered): not recycled, and
		// the caller must not reuse line (the writer may still read it)
		return errLogStalled
	}
}

// unhealthy says why the log cannot take calls now ("" when it can): a cut
// back that failed, a write pending longer than unhealthyFor (stalled
// storage), or a write that failed in the last unhealthyFor (a full disk;
// after that a probe lets calls try again).
func (l *eventLog) unhealthy() string {
	now := time.Now().UnixNano()
	if l.broken.Load() {
		return "event log needs repair: calls are refused"
	}
	if since := l.writingSince.Load(); since != 0 && now-since > int64(unhealthyFor) {
		return fmt.Sprintf("a write to the event log has been pending for %v: storage stalled, calls time out with 503", time.Duration(now-since).Round(time.Second))
	}
	if at := l.failedAt.Load(); at != 0 && now-at < int64(unhealthyFor) {
		why := ""
		if p := l.failure.Load(); p != nil {
			why = *p
		}
		return "the last write to the event log failed (" + why + "): calls are answered 500"
	}
	return ""
}

// health records the outcome of one write for /healthz.
func (l *eventLog) health(err error) {
	if err == nil {
		l.failedAt.Store(0)
		return
	}
	msg := err.Error()
	l.failure.Store(&msg)
	l.failedAt.Store(time.Now().UnixNano())
}

func (l *eventLog) run() {
	defer l.wg.Done()
	batch := make([]*logReq, 0, maxBatch)
	for r := range l.queue {
		batch = append(batch[:0], r)
	drain:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-l.queue:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		l.commit(batch)
	}
}

// commit writes a batch: one write and one fsync (batch mode), one of each per
// event (always), or one write (none); then releases every waiting handler.
func (l *eventLog) commit(batch []*logReq) {
	start := time.Now()
	l.writingSince.Store(start.UnixNano())
	defer l.writingSince.Store(0)
	if l.mode == fsyncAlways {
		for _, r := range batch {
			err := l.writeSynced(r.line)
			l.health(err)
			r.done <- err
		}
		l.observe(start, len(batch))
		return
	}
	l.buf = l.buf[:0]
	for _, r := range batch {
		l.buf = append(l.buf, r.line...)
	}
	err := l.writeSynced(l.buf)
	l.health(err)
	if cap(l.buf) > 4<<20 {
		l.buf = nil // do not keep a huge buffer after one burst of large bodies
	}
	l.observe(start, len(batch))
	for _, r := range batch {
		r.done <- err
	}
}

// writeSynced appends b (whole lines) and fsyncs it (unless mode is none). On
// success b is committed: it reads back after a crash (a power cut too, when
// fsynced). On failure nothing of b stays in the file: it is cut back to the
// last committed line, now or, if that fails, before the next write.
func (l *eventLog) writeSynced(b []byte) error {
	if err := l.repair(); err != nil {
		return err
	}
	n, err := l.f.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return l.failed(fmt.Errorf("write event log: %w", err))
	}
	if l.mode != fsyncNone {
		if err := l.f.Sync(); err != nil {
			// The bytes are in the file but maybe not on disk (after a failed
			// fsync the kernel may have dropped them): they were not acknowledged,
			// so they go, lest a reader take them for acknowledged events.
			return l.failed(fmt.Errorf("fsync event log: %w", err))
		}
	}
	l.committed += int64(n)
	l.published.Store(l.committed)
	return nil
}

// acknowledged is the size of the log up to its last acknowledged line: what a
// reader may read (past it: a batch being written, or one to be cut back).
func (l *eventLog) acknowledged() int64 { return l.published.Load() }

// failed marks the bytes past committed as not acknowledged and cuts them off.
func (l *eventLog) failed(err error) error {
	l.dirty = err
	if rerr := l.repair(); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// repair cuts the file back to its last committed line (and fsyncs the cut)
// when a failed write or fsync may have left bytes past it. While it fails the
// log takes nothing: appending to a torn line would lose the next event.
func (l *eventLog) repair() error {
	if l.dirty == nil {
		return nil
	}
	if err := l.f.Truncate(l.committed); err != nil {
		l.broken.Store(true)
		return fmt.Errorf("%w: cut back to the last complete line at byte %d after %v: %w", errLogBroken, l.committed, l.dirty, err)
	}
	if l.mode != fsyncNone {
		if err := l.f.Sync(); err != nil {
			l.broken.Store(true)
			return fmt.Errorf("%w: fsync the cut back to byte %d after %v: %w", errLogBroken, l.committed, l.dirty, err)
		}
	}
	l.dirty = nil
	l.broken.Store(false)
	return nil
}

func (l *eventLog) observe(start time.Time, n int) {
	l.writeDur.Observe(time.Since(start).Seconds())
	l.batchSize.Observe(float64(n))
}

// close stops accepting events, writes what is queued, fsyncs and closes the file.
func (l *eventLog) close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.queue)
	l.mu.Unlock()
	drained := make(chan struct{})
	go func() { l.wg.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(closeWait):
		// stalled storage: the file stays open to the stuck write; what it
		// holds was never acknowledged, so stopping loses nothing promised
		return fmt.Errorf("%w: a write still pending after %v at close; its calls were not acknowledged", errLogStalled, closeWait)
	}
	if err := l.repair(); err != nil {
		l.f.Close()
		return err
	}
	serr := l.f.Sync()
	cerr := l.f.Close()
	if serr != nil {
		return fmt.Errorf("fsync event log: %w", serr)
	}
	if cerr != nil {
		return fmt.Errorf("close event log: %w", cerr)
	}
	return nil
}
