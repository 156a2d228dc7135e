package reports

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/msgload/msgload/internal/tempfile"
)

// A sortedSpill's runs on disk are merged in levels (issue 23): a chunk
// written is a run of level 0; when a level holds spillFanIn runs they are
// merged into one run of the next level and the level's file is emptied.
// The final merge then reads at most spillFanIn runs a level, however long
// the spill — before, it read every chunk at once, a reader of 8 KiB each
// and a scan of every run's head for each record: an hour's soak with a
// truth spills thousands of chunks. Each record is written once a level
// (the levels grow as log₁₆ of the chunks: three or four for an 18 M-message
// soak).
//
// The merge holds a read buffer of spillReadBuf bytes for every run left on
// any level: up to spillFanIn − 1 a level. Levels of 64 runs of 8 KiB made
// that 504 KiB a spill before a level filled — a checkpoint at minute 8 of
// a run at 1,000 messages a second held 1 MB of them for two spills, about
// 2 bytes a message, growing with the run. Levels of 16 and buffers of
// 4 KiB hold at most 60 KiB a level; each record is written once more in an
// hour's soak (a level more), a few MB of sequential I/O.

// spillFanIn is how many runs a level holds before they are merged into one
// of the next; a test lowers it.
var spillFanIn = 16

// spillReadBuf is the size of a merge's read buffer for one run.
const spillReadBuf = 4 << 10

// spillLevel is a temporary file of sorted runs, each merged from
// spillFanIn runs of the level below (level 0: the chunks).
type spillLevel struct {
	f    *os.File
	runs [][2]int64 // offset and count of each run in f, oldest first
}

// remove closes the level's file (unlinked: its space comes back).
func (l *spillLevel) remove() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// spillRun is one sorted run to merge: count records from off in f.
type spillRun struct {
	f          *os.File
	off, count int64
}

// writeRun appends the records of recs, sorted, to level i as one run.
func (s *sortedSpill[T]) writeRun(i int, recs iter.Seq[T]) error {
	for len(s.levels) <= i {
		s.levels = append(s.levels, &spillLevel{})
	}
	l := s.levels[i]
	if l.f == nil {
		f, err := tempfile.Unlinked("", "msgload-spill-*") // nothing left behind by a killed process (a live analysis's child)
		if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		l.f = f
	}
	off, err := l.f.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	w := s.writer(l.f)
	b := make([]byte, s.size)
	var n int64
	for v := range recs {
		s.put(b, v)
		w.Write(b)
		n++
	}
	if s.err != nil {
		return s.err // the merge that made recs could not read a run
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	l.runs = append(l.runs, [2]int64{off, n})
	return nil
}

// writer is the spill's one write buffer, set to write to f.
func (s *sortedSpill[T]) writer(f *os.File) *bufio.Writer {
	if s.w == nil {
		s.w = bufio.NewWriterSize(f, 1<<16)
	}
	s.w.Reset(f)
	return s.w
}

// reader is a read buffer of the spill's for run r, one taken from those a
// finished merge gave back when there is one.
func (s *sortedSpill[T]) reader(r spillRun) *bufio.Reader {
	src := io.NewSectionReader(r.f, r.off, int64(s.size)*r.count)
	if n := len(s.readers); n > 0 {
		rd := s.readers[n-1]
		s.readers = s.readers[:n-1]
		rd.Reset(src)
		return rd
	}
	return bufio.NewReaderSize(src, spillReadBuf)
}

// compact merges each level that holds spillFanIn runs into one run of the
// next, and empties it.
func (s *sortedSpill[T]) compact() error {
	for i := 0; i < len(s.levels); i++ {
		l := s.levels[i]
		if len(l.runs) < spillFanIn {
			continue
		}
		if err := s.writeRun(i+1, s.merge(l.levelRuns())); err != nil {
			return err
		}
		l.runs = l.runs[:0]
		if err := l.f.Truncate(0); err != nil {
			return fmt.Errorf("spill: %w", err)
		}
	}
	return nil
}

// levelRuns are the level's runs, oldest first.
func (l *spillLevel) levelRuns() []spillRun {
	out := make([]spillRun, 0, len(l.runs))
	for _, r := range l.runs {
		out = append(out, spillRun{f: l.f, off: r[0], count: r[1]})
	}
	return out
}

// allRuns are the runs of every level, oldest first: a level's runs hold
// records added before any of a lower level's (each is emptied when it is
// merged up).
func (s *sortedSpill[T]) allRuns() []spillRun {
	var out []spillRun
	for i := len(s.levels) - 1; i >= 0; i-- {
		out = append(out, s.levels[i].levelRuns()...)
	}
	return out
}

// merge yields the records of runs (each sorted) in order, those of equal
// keys in the order of their runs — so a spill gives equal keys back in the
// order they were added. A read error ends it and is left in s.err.
func (s *sortedSpill[T]) merge(runs []spillRun) iter.Seq[T] {
	return func(yield func(T) bool) {
		h := &runHeap[T]{cmp: s.cmp}
		b := make([]byte, s.size)
		var used []*bufio.Reader
		defer func() { s.readers = append(s.readers, used...) }()
		for i, r := range runs {
			c := &runCursor[T]{r: s.reader(r), left: r.count, order: i}
			used = append(used, c.r)
			if s.next(c, b) {
				h.c = append(h.c, c)
			}
		}
		s.maxOpen = max(s.maxOpen, len(h.c))
		heap.Init(h)
		for len(h.c) > 0 {
			c := h.c[0]
			if !yield(c.head) {
				return
			}
			if s.next(c, b) {
				heap.Fix(h, 0)
			} else {
				heap.Pop(h)
			}
		}
	}
}

// next reads cursor c's next record into its head; false at its end or on
// a read error (left in s.err).
func (s *sortedSpill[T]) next(c *runCursor[T], b []byte) bool {
	if c.left == 0 || s.err != nil {
		return false
	}
	if _, err := io.ReadFull(c.r, b); err != nil {
		s.err = fmt.Errorf("read the spill: %w", err)
		return false
	}
	c.head, c.left = s.get(b), c.left-1
	return true
}

// runCursor is a run being merged: its next record (head), how many are
// left, and its place among the runs (ties go to the earlier).
type runCursor[T any] struct {
	r     *bufio.Reader
	left  int64
	head  T
	order int
}

// runHeap orders the cursors by their heads, then by their runs' order.
type runHeap[T any] struct {
	c   []*runCursor[T]
	cmp func(x, y T) int
}

func (h *runHeap[T]) Len() int { return len(h.c) }
func (h *runHeap[T]) Less(i, j int) bool {
	if d := h.cmp(h.c[i].head, h.c[j].head); d != 0 {
		return d < 0
	}
	return h.c[i].order < h.c[j].order
}
func (h *runHeap[T]) Swap(i, j int) { h.c[i], h.c[j] = h.c[j], h.c[i] }
func (h *runHeap[T]) Push(x any)    { h.c = append(h.c, x.(*runCursor[T])) }
func (h *runHeap[T]) Pop() any {
	x := h.c[len(h.c)-1]
	h.c = h.c[:len(h.c)-1]
	return x
}
