package attack

import (
	"bufio"
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// Bounds of what a resultsWriter holds in memory.
const (
	sortChunkResults = 1 << 11 // results held in the selection heap
	sortChunkBytes   = 4 << 20 // bytes of their bodies, URLs, errors and headers
	mergeReadBuffer  = 32 << 10
)

// resultsWriter writes vegeta results to results.bin in time order: sorted by
// Timestamp (the attempt's send time; equal times keep the order they came in)
// and numbered Seq 0, 1, 2… in that order, which is what `vegeta plot` needs
// (it orders a run's results by Seq and refuses a timestamp that goes back).
// Results come in the order they finish — a slow answer, and above all a retry
// sent after a backoff or a Retry-After, finish after results sent later — so
// they cannot be written as they come.
//
// Up to sortChunkResults results (or sortChunkBytes of their variable parts)
// wait in a heap; when it is full, or when WriteBefore says they are old
// enough, the earliest is written to results.bin, which so grows in time order
// as the run goes (a killed run keeps it: see fileRecorder). A result sent
// before the last one written (it finished later than the heap's span: at
// 5000/s, 2048 results are 0.4 s; or later than WriteBefore's hold) is a
// straggler: stragglers wait in a buffer of their own, and each time it is
// full it is sorted and written as a sorted run to a spill file beside
// results.bin, which keeps growing in time order meanwhile. Close merges
// results.bin (run 0) and the spilled runs into a new results.bin. Memory is
// bounded whatever the run's length or how late a retry comes; a run in time
// order is written once, as it goes, with no pass at the end. Until Close,
// results.bin lacks the stragglers (attempts.jsonl has every attempt).
//
// The output is the stable sort by Timestamp of what came, exactly: results.bin
// goes by (Timestamp, arrival); a result is a straggler only when its
// Timestamp is strictly before the last one written, so every result of equal
// Timestamp in results.bin came before it; a spilled run holds every
// straggler that came before the next; the merge takes equal Timestamps by
// run (results.bin first, then the spilled runs in order).
//
// Not safe for concurrent use (fileRecorder calls it under its lock).
type resultsWriter struct {
	f     *os.File // results.bin
	bw    *bufio.Writer
	enc   *resultEncoder
	h     selHeap // results for results.bin, not yet written
	late  []held  // stragglers, not yet spilled
	bytes int     // of the results h and late hold
	chunk int     // results the heap holds, and the stragglers the buffer holds
	in    uint64  // results added: the arrival order of equal Timestamps
	out   uint64  // results written to results.bin
	last  *vegeta.Result

	spill   *os.File // sorted runs 1, 2… of stragglers, once one was spilled
	spillBW *bufio.Writer
	runs    []int64 // end offset in spill of runs 1, 2…
	closed  bool
}

// newResultsWriter writes into f (results.bin, empty), which Close closes.
func newResultsWriter(f *os.File) *resultsWriter {
	bw := bufio.NewWriterSize(f, 64<<10)
	return &resultsWriter{f: f, bw: bw, enc: newResultEncoder(bw), chunk: sortChunkResults}
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

// held is a result waiting to be written, with its arrival.
type held struct {
	r  *vegeta.Result
	in uint64
}

func (a held) compare(b held) int {
	if c := byTime(a.r, b.r); c != 0 {
		return c
	}
	return cmp.Compare(a.in, b.in)
}

// selHeap is a min-heap of held results by Timestamp, arrival (its own
// sifts, not container/heap: that one boxes every push in an interface).
type selHeap []held

func (h selHeap) less(i, j int) bool { return h[i].compare(h[j]) < 0 }

func (h *selHeap) push(x held) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *selHeap) pop() held {
	s := *h
	x := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = held{}
	s = s[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && s.less(l, m) {
			m = l
		}
		if r := l + 1; r < n && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return x
}

// Add keeps r (which must not change afterwards) for writing in time order.
func (w *resultsWriter) Add(r *vegeta.Result) error {
	if w.closed {
		return errors.New("results writer closed")
	}
	x := held{r: r, in: w.in}
	w.in++
	w.bytes += resultBytes(r)
	if w.last != nil && r.Timestamp.Before(w.last.Timestamp) {
		w.late = append(w.late, x) // sent before what was written: a straggler
	} else {
		w.h.push(x)
	}
	for len(w.h) > w.chunk || w.bytes > sortChunkBytes && len(w.h) > 0 {
		if err := w.writeMin(); err != nil {
			return err
		}
	}
	if len(w.late) > w.chunk || w.bytes > sortChunkBytes && len(w.late) > 0 {
		return w.spillLate()
	}
	return nil
}

// WriteBefore writes to results.bin every result the heap holds that was
// sent before cutoff, and flushes it to the file: what the run sent up to
// then is on disk (but for stragglers). Results sent since cutoff stay in the
// heap, where one that finishes late can still come before them.
func (w *resultsWriter) WriteBefore(cutoff time.Time) error {
	if w.closed {
		return nil
	}
	for len(w.h) > 0 && w.h[0].r.Timestamp.Before(cutoff) {
		if err := w.writeMin(); err != nil {
			return err
		}
	}
	return w.bw.Flush()
}

func byTime(a, b *vegeta.Result) int { return a.Timestamp.Compare(b.Timestamp) }

// writeMin writes the heap's first result to results.bin.
func (w *resultsWriter) writeMin() error {
	x := w.h.pop()
	w.bytes -= resultBytes(x.r)
	w.last = x.r
	seq := w.out // results.bin's numbering: right unless a merge renumbers
	w.out++
	return w.enc.encode(x.r, seq)
}

// spillLate sorts the stragglers and writes them to the spill file as a
// sorted run of their own (a gob stream of its own).
func (w *resultsWriter) spillLate() error {
	if len(w.late) == 0 {
		return nil
	}
	if w.spill == nil {
		f, err := os.CreateTemp(filepath.Dir(w.f.Name()), "."+filepath.Base(w.f.Name())+".sort-*")
		if err != nil {
			return fmt.Errorf("sort vegeta results: %w", err)
		}
		w.spill, w.spillBW = f, bufio.NewWriterSize(f, 256<<10)
	}
	slices.SortFunc(w.late, held.compare)
	enc := newResultEncoder(w.spillBW)
	for i, x := range w.late {
		if err := enc.encode(x.r, x.r.Seq); err != nil {
			return fmt.Errorf("sort vegeta results: %w", err)
		}
		w.bytes -= resultBytes(x.r)
		w.late[i] = held{}
	}
	w.late = w.late[:0]
	if err := w.spillBW.Flush(); err != nil {
		return fmt.Errorf("sort vegeta results: %w", err)
	}
	end, err := w.spill.Seek(0, io.SeekCurrent)
	if err != nil {
		return fmt.Errorf("sort vegeta results: %w", err)
	}
	w.runs = append(w.runs, end)
	return nil
}

// Close writes what the heap holds, merges the sorted runs of stragglers into
// results.bin if there are any, closes it and removes the spill file.
func (w *resultsWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	var err error
	for len(w.h) > 0 && err == nil {
		err = w.writeMin()
	}
	if err == nil {
		err = w.spillLate()
	}
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil && w.spill != nil {
		err = w.merge()
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

// merge moves results.bin (run 0) aside and writes a new results.bin from it
// and the spill file's runs, in time order, numbered anew.
func (w *resultsWriter) merge() error {
	name := w.f.Name()
	aside := name + ".run0"
	// results.bin may be open for writing only (NewRecorder): run 0 is read
	// back through a handle of its own.
	if err := errors.Join(w.f.Sync(), w.f.Close()); err != nil {
		return err
	}
	if err := os.Rename(name, aside); err != nil {
		return err
	}
	run0, err := os.Open(aside)
	if err != nil {
		return err
	}
	defer run0.Close()
	fi, err := run0.Stat()
	if err != nil {
		return err
	}
	end0 := fi.Size()
	nf, err := rundir.Create(name)
	if err != nil {
		return err
	}
	w.f = nf
	bw := bufio.NewWriterSize(nf, 256<<10)
	enc := newResultEncoder(bw)
	var seq uint64
	h := make(mergeHeap, 0, len(w.runs)+1)
	add := func(i int, f *os.File, start, end int64) error {
		dec := vegeta.NewDecoder(bufio.NewReaderSize(io.NewSectionReader(f, start, end-start), mergeReadBuffer))
		c := &mergeCursor{run: i, dec: dec}
		if err := c.next(); err != nil {
			return err
		}
		if c.r != nil {
			h = append(h, c)
		}
		return nil
	}
	if err := add(0, run0, 0, end0); err != nil {
		return err
	}
	var start int64
	for i, end := range w.runs {
		if err := add(i+1, w.spill, start, end); err != nil {
			return err
		}
		start = end
	}
	heap.Init(&h)
	for len(h) > 0 {
		c := h[0]
		if err := enc.encode(c.r, seq); err != nil {
			return err
		}
		seq++
		if err := c.next(); err != nil {
			return err
		}
		if c.r == nil {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return os.Remove(aside) // kept on an error: run 0 is in it
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

// mergeHeap orders cursors by their result's time, then by run (see
// resultsWriter: equal times in different runs came in the order of the runs).
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
