package sink

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// FsyncMode says when the event log is flushed to stable storage.
type FsyncMode string

// Fsync modes.
const (
	FsyncBatch  FsyncMode = "batch"  // group commit: one fsync per batch of queued events (default)
	FsyncAlways FsyncMode = "always" // one write and one fsync per event
	FsyncNone   FsyncMode = "none"   // written to the OS before the answer, never fsynced (survives a process kill, not a power cut)
)

// ParseFsyncMode reads a --fsync value.
func ParseFsyncMode(s string) (FsyncMode, error) {
	switch FsyncMode(s) {
	case "", FsyncBatch:
		return FsyncBatch, nil
	case FsyncAlways, FsyncNone:
		return FsyncMode(s), nil
	}
	return "", fmt.Errorf("%w: %q (want batch, always or none)", ErrFsyncMode, s)
}

// Errors of the event log.
var (
	ErrFsyncMode = errors.New("unknown fsync mode")
	ErrClosed    = errors.New("sink closed")
)

// maxBatch bounds the events written by one write and one fsync.
const maxBatch = 4096

// logReq is one encoded event waiting for the writer; done receives the outcome.
type logReq struct {
	line []byte
	done chan error
}

// eventLog appends lines to a file through one writer goroutine (group commit).
type eventLog struct {
	f     *os.File
	mode  FsyncMode
	queue chan *logReq

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
func openLog(path string, mode FsyncMode, writeDur, batchSize prometheus.Observer) (*eventLog, error) {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	if errors.Is(statErr, os.ErrNotExist) && mode != FsyncNone {
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
	l := &eventLog{
		f: f, mode: mode, queue: make(chan *logReq, maxBatch),
		writeDur: writeDur, batchSize: batchSize,
	}
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
	l.mu.RLock()
	if l.closed {
		l.mu.RUnlock()
		l.reqs.Put(r)
		return ErrClosed
	}
	l.queue <- r
	l.mu.RUnlock()
	err := <-r.done
	r.line = nil
	l.reqs.Put(r)
	return err
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
	var err error
	if l.mode == FsyncAlways {
		for _, r := range batch {
			if _, werr := l.f.Write(r.line); werr != nil {
				r.done <- fmt.Errorf("write event log: %w", werr)
				continue
			}
			if serr := l.f.Sync(); serr != nil {
				r.done <- fmt.Errorf("fsync event log: %w", serr)
				continue
			}
			r.done <- nil
		}
		l.observe(start, len(batch))
		return
	}
	l.buf = l.buf[:0]
	for _, r := range batch {
		l.buf = append(l.buf, r.line...)
	}
	if _, werr := l.f.Write(l.buf); werr != nil {
		err = fmt.Errorf("write event log: %w", werr)
	} else if l.mode != FsyncNone {
		if serr := l.f.Sync(); serr != nil {
			err = fmt.Errorf("fsync event log: %w", serr)
		}
	}
	if cap(l.buf) > 4<<20 {
		l.buf = nil // do not keep a huge buffer after one burst of large bodies
	}
	l.observe(start, len(batch))
	for _, r := range batch {
		r.done <- err
	}
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
	l.wg.Wait()
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
