package attack

import (
	"bufio"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Bounds of what a ResultsWriter holds in memory before it spills a sorted run.
const (
	sortChunkResults = 1 << 16  // results
	sortChunkBytes   = 32 << 20 // bytes of bodies, URLs, errors and headers
	mergeReadBuffer  = 32 << 10 // read buffer per sorted run while merging
)

// ResultsWriter writes vegeta results to results.bin in time order: sorted by
// Timestamp (the attempt's send time; equal times keep the order they came in)
// and numbered Seq 0, 1, 2… in that order, which is what `vegeta plot` needs
// (it orders a run's results by Seq and refuses a timestamp that goes back).
// Results come in the order they finish — a slow answer, and above all a retry
// sent after a backoff or a Retry-After, finish after results sent later — so
// they cannot be written as they come.
//
// It is an external merge sort: up to sortChunkResults results (or
// sortChunkBytes of their variable parts) are kept, sorted and, when more come,
// written as one sorted run to a spill file beside results.bin — in the
// background, so that Add (under the recorder's lock, on the attack's path)
// does not stall while a chunk is sorted and encoded; at most one chunk is
// being spilled while the next fills — and Close merges the runs into
// results.bin. Memory is bounded whatever the run's length or how late
// a retry comes (no assumption on the largest backoff); a run that fits in one
// chunk is written by Close directly. results.bin is complete only after Close:
// attempts.jsonl, written as attempts finish, is the run's live record.
//
// Not safe for concurrent use (FileRecorder calls it under its lock).
type ResultsWriter struct {
	f       *os.File // results.bin
	spill   *os.File // sorted runs, once a chunk overflowed
	runs    []int64  // end offset of each run in spill
	buf     []*vegeta.Result
	bytes   int
	chunk   int        // results per chunk
	pending chan error // the chunk being spilled in the background, if any
	closed  bool
}

// NewResultsWriter writes into f (results.bin, empty), which Close closes.
func NewResultsWriter(f *os.File) *ResultsWriter {
	return &ResultsWriter{f: f, chunk: sortChunkResults}
}

func resultBytes(r *vegeta.Result) int {
	n := 128 + len(r.Body) + len(r.URL) + len(r.Error) + len(r.Attack) + len(r.Method)
	for k, vs := range r.Headers {
		n += len(k)
		for _, v := range vs {
			n += len(v)
		}
	}
	return n
}

// Add keeps r (which must not change afterwards) for writing in time order.
func (w *ResultsWriter) Add(r *vegeta.Result) error {
	if w.closed {
		return errors.New("results writer closed")
	}
	w.buf = append(w.buf, r)
	w.bytes += resultBytes(r)
	if len(w.buf) >= w.chunk || w.bytes >= sortChunkBytes {
		return w.spillChunk()
	}
	return nil
}

func byTime(a, b *vegeta.Result) int { return a.Timestamp.Compare(b.Timestamp) }

// spillChunk hands the kept results to a background spill (after the one
// before it has finished) and starts a new chunk.
func (w *ResultsWriter) spillChunk() error {
	if err := w.waitSpill(); err != nil {
		return err
	}
	if len(w.buf) == 0 {
		return nil
	}
	buf := w.buf
	w.buf, w.bytes = make([]*vegeta.Result, 0, min(len(buf), w.chunk)), 0
	done := make(chan error, 1)
	w.pending = done
	go func() { done <- w.writeRun(buf) }()
	return nil
}

// waitSpill waits for the background spill, if one is running.
func (w *ResultsWriter) waitSpill() error {
	if w.pending == nil {
		return nil
	}
	err := <-w.pending
	w.pending = nil
	return err
}

// writeRun sorts buf and appends it to the spill file as one run (a gob stream
// of its own). Only one runs at a time (spillChunk and Close wait for it).
func (w *ResultsWriter) writeRun(buf []*vegeta.Result) error {
	if w.spill == nil {
		f, err := os.CreateTemp(filepath.Dir(w.f.Name()), "."+filepath.Base(w.f.Name())+".sort-*")
		if err != nil {
			return fmt.Errorf("sort vegeta results: %w", err)
		}
		w.spill = f
	}
	slices.SortStableFunc(buf, byTime)
	bw := bufio.NewWriterSize(w.spill, 256<<10)
	enc := vegeta.NewEncoder(bw)
	for _, r := range buf {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("sort vegeta results: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("sort vegeta results: %w", err)
	}
	end, err := w.spill.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("sort vegeta results: %w", err)
	}
	w.runs = append(w.runs, end)
	return nil
}

// Close writes results.bin in time order, closes it and removes the spill file.
func (w *ResultsWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.waitSpill()
	if err == nil {
		err = w.write()
	}
	if w.spill != nil {
		err = errors.Join(err, w.spill.Close(), os.Remove(w.spill.Name()))
	}
	err = errors.Join(err, w.f.Sync(), w.f.Close())
	if err != nil {
		return fmt.Errorf("write vegeta results: %w", err)
	}
	return nil
}

func (w *ResultsWriter) write() error {
	bw := bufio.NewWriterSize(w.f, 256<<10)
	enc := vegeta.NewEncoder(bw)
	var seq uint64
	emit := func(r *vegeta.Result) error {
		out := *r
		out.Seq = seq
		seq++
		return enc.Encode(&out)
	}
	if w.spill == nil { // one chunk: sort it and write it
		slices.SortStableFunc(w.buf, byTime)
		for _, r := range w.buf {
			if err := emit(r); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	if len(w.buf) > 0 {
		if err := w.writeRun(w.buf); err != nil {
			return err
		}
	}
	h := make(mergeHeap, 0, len(w.runs))
	var start int64
	for i, end := range w.runs {
		dec := vegeta.NewDecoder(bufio.NewReaderSize(io.NewSectionReader(w.spill, start, end-start), mergeReadBuffer))
		start = end
		c := &mergeCursor{run: i, dec: dec}
		if err := c.next(); err != nil {
			return err
		}
		if c.r != nil {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		c := h[0]
		if err := emit(c.r); err != nil {
			return err
		}
		if err := c.next(); err != nil {
			return err
		}
		if c.r == nil {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return bw.Flush()
}

// mergeCursor is the next result of one sorted run.
type mergeCursor struct {
	run int
	dec vegeta.Decoder
	r   *vegeta.Result // nil at the run's end
}

func (c *mergeCursor) next() error {
	var r vegeta.Result
	switch err := c.dec.Decode(&r); {
	case errors.Is(err, io.EOF):
		c.r = nil
	case err != nil:
		return fmt.Errorf("merge sorted vegeta results: %w", err)
	default:
		c.r = &r
	}
	return nil
}

// mergeHeap orders cursors by their result's time, then by run (earlier runs
// came first), so equal times keep the order they came in.
type mergeHeap []*mergeCursor

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	if c := byTime(h[i].r, h[j].r); c != 0 {
		return c < 0
	}
	return h[i].run < h[j].run
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeCursor)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
