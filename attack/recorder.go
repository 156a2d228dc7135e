package attack

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// File names written by fileRecorder in the run directory.
const (
	attemptsFile = "attempts.jsonl"
	resultsFile  = "results.bin"
)

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// Recorder receives every attempt with its vegeta result. Record is called
// from many goroutines at once. a is the engine's to reuse once Record
// returns (a send's attempts are pooled): a Recorder keeps a copy, never a.
type Recorder interface {
	Record(a *rundir.Attempt, r *vegeta.Result) error
}

// How far behind the run the files on disk are at most: every flushEvery
// the recorder writes attempts.jsonl's buffer, and the results sent more than
// resultsHold before to results.bin (a result younger than that may still be
// preceded by one that finishes later). So a process killed (SIGKILL, or a
// pod's SIGTERM then SIGKILL) keeps what it sent up to about a second before.
const (
	flushEvery  = 500 * time.Millisecond
	resultsHold = 500 * time.Millisecond
)

// FileRecorder writes attempts to attempts.jsonl as they finish and the
// matching vegeta results to results.bin (vegeta's gob encoding, so `vegeta
// report` and `vegeta plot` read it) in time order (see resultsWriter). Both
// are written to the files as the run goes — every flushEvery, and at once on
// Flush (the first interrupt, the attack's end) — whole lines only in
// attempts.jsonl; Close completes results.bin with the stragglers.
type FileRecorder struct {
	mu       sync.Mutex
	jf       *os.File
	jw       *bufio.Writer
	results  *resultsWriter
	err      error
	attempts int64

	stop     chan struct{} // closed by Close: the flushing loop ends
	loopDone chan struct{} // closed when it has
}

// NewRecorder creates dir/attempts.jsonl and dir/results.bin, and flushes
// them every flushEvery until Close. Files that exist are refused, so a run
// never overwrites another.
func NewRecorder(dir string) (*FileRecorder, error) {
	jf, err := rundir.Create(filepath.Join(dir, attemptsFile))
	if err != nil {
		return nil, fmt.Errorf("create attempt log: %w", err)
	}
	rf, err := rundir.Create(filepath.Join(dir, resultsFile))
	if err != nil {
		jf.Close()
		return nil, fmt.Errorf("create vegeta results: %w", err)
	}
	r := &FileRecorder{jf: jf, jw: bufio.NewWriterSize(jf, 64<<10), results: newResultsWriter(rf),
		stop: make(chan struct{}), loopDone: make(chan struct{})}
	go r.flushLoop()
	return r, nil
}

// flushLoop flushes the files every flushEvery until Close. A write error is
// kept (r.err) and returned by the next Record and by Close.
func (r *FileRecorder) flushLoop() {
	defer close(r.loopDone)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			r.mu.Lock()
			_ = r.flush(now.Add(-resultsHold))
			r.mu.Unlock()
		}
	}
}

// Record implements Recorder. The first write error is kept and returned by
// every later call and by Close.
func (r *FileRecorder) Record(a *rundir.Attempt, res *vegeta.Result) error {
	bp := linePool.Get().(*[]byte)
	defer linePool.Put(bp)
	line, err := encodeAttempt((*bp)[:0], a) // outside the lock: many goroutines record at once
	if err != nil {
		return fmt.Errorf("encode attempt: %w", err)
	}
	*bp = line
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if len(line) > r.jw.Available() && r.jw.Buffered() > 0 {
		// Whole lines only reach the file: a process killed between two
		// writes leaves no half line.
		if err := r.jw.Flush(); err != nil {
			r.err = fmt.Errorf("write attempt log: %w", err)
			return r.err
		}
	}
	if _, err := r.jw.Write(line); err != nil {
		r.err = fmt.Errorf("write attempt log: %w", err)
		return r.err
	}
	if res != nil {
		if err := r.results.Add(res); err != nil {
			r.err = fmt.Errorf("write vegeta results: %w", err)
			return r.err
		}
	}
	r.attempts++
	return nil
}

// Flush writes to the files every attempt recorded so far and every result
// but the stragglers (see resultsWriter): what the run sent is on disk, should
// its process be killed next. The harness calls it on the first interrupt and
// when the attack ends.
func (r *FileRecorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flush(farFuture) // every result held
}

// farFuture is after every send time: flush(farFuture) writes every result held.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// flush writes attempts.jsonl's buffer and the results sent before cutoff.
func (r *FileRecorder) flush(cutoff time.Time) error {
	if r.err != nil {
		return r.err
	}
	if err := r.jw.Flush(); err != nil {
		r.err = fmt.Errorf("flush attempt log: %w", err)
		return r.err
	}
	if err := r.results.WriteBefore(cutoff); err != nil {
		r.err = fmt.Errorf("write vegeta results: %w", err)
	}
	return r.err
}

// Close stops the flushing, flushes and closes attempts.jsonl and completes
// results.bin in time order.
func (r *FileRecorder) Close() error {
	if r.stop != nil {
		select {
		case <-r.stop:
		default:
			close(r.stop)
		}
		<-r.loopDone
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.flushAttempts()
	err = errors.Join(err, r.jf.Sync(), r.jf.Close(), r.results.Close())
	if err != nil {
		return fmt.Errorf("close attempt files: %w", err)
	}
	return nil
}

// flushAttempts writes attempts.jsonl's buffer (results.bin is completed by
// its own Close).
func (r *FileRecorder) flushAttempts() error {
	if r.err != nil {
		return r.err
	}
	if err := r.jw.Flush(); err != nil {
		r.err = fmt.Errorf("flush attempt log: %w", err)
	}
	return r.err
}
