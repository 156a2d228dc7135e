package attack

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

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
// from many goroutines at once.
type Recorder interface {
	Record(a *rundir.Attempt, r *vegeta.Result) error
}

// fileRecorder writes attempts to attempts.jsonl as they finish and the
// matching vegeta results to results.bin (vegeta's gob encoding, so `vegeta
// report` and `vegeta plot` read it) in time order, complete when it is closed
// (see resultsWriter).
type fileRecorder struct {
	mu       sync.Mutex
	jf       *os.File
	jw       *bufio.Writer
	results  *resultsWriter
	err      error
	attempts int64
}

// NewRecorder creates dir/attempts.jsonl and dir/results.bin. Files that exist
// are refused, so a run never overwrites another.
func NewRecorder(dir string) (*fileRecorder, error) {
	jf, err := os.OpenFile(filepath.Join(dir, attemptsFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create attempt log: %w", err)
	}
	rf, err := os.OpenFile(filepath.Join(dir, resultsFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		jf.Close()
		return nil, fmt.Errorf("create vegeta results: %w", err)
	}
	return &fileRecorder{jf: jf, jw: bufio.NewWriterSize(jf, 64<<10), results: newResultsWriter(rf)}, nil
}

// Record implements Recorder. The first write error is kept and returned by
// every later call and by Close.
func (r *fileRecorder) Record(a *rundir.Attempt, res *vegeta.Result) error {
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

// Flush writes buffered attempts to attempts.jsonl (results.bin is written
// when the recorder closes).
func (r *fileRecorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flush()
}

func (r *fileRecorder) flush() error {
	if r.err != nil {
		return r.err
	}
	if err := r.jw.Flush(); err != nil {
		r.err = fmt.Errorf("flush attempt log: %w", err)
	}
	return r.err
}

// Close flushes and closes attempts.jsonl and writes results.bin in time order.
func (r *fileRecorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.flush()
	err = errors.Join(err, r.jf.Sync(), r.jf.Close(), r.results.Close())
	if err != nil {
		return fmt.Errorf("close attempt files: %w", err)
	}
	return nil
}
