package reports

import (
	"bufio"
	"fmt"
	"io/fs"
	"iter"
	"math"
	"math/bits"
	"slices"

	"github.com/msgload/msgload/rundir"
)

// A run with a ground truth analysed in passes (stream.go) joins the truth to
// the attacker's messages without holding either whole: the truth is read as
// a stream (truthStream), each true message judged against the calls of its
// id when its record comes, and its fate (fatePart) spilled, sorted by
// sequence; each of the attacker's messages, when it lands, spills what the
// truth needs of it (sentRec). The two sorted spills are then merged by
// sequence (joinFates): a message re-accepted under a second id, whose
// records may be an hour apart in the truth, is joined there.

// sortedSpill collects fixed-size records and gives them back in the order
// of less, those of equal keys in the order they were added: in memory up to
// chunk records, beyond that in sorted runs in temporary files merged at the
// end (an external sort, spillmerge.go), so that its memory stays flat.
type sortedSpill[T any] struct {
	buf    []T
	chunk  int
	size   int
	cmp    func(x, y T) int
	put    func([]byte, T)
	get    func([]byte) T
	levels []*spillLevel // the sorted runs on disk, by how often they were merged (spillmerge.go)
	err    error
	// maxOpen is the most runs a merge read at once (a test's count).
	maxOpen int
	// w and readers are the spill's buffers for writing and merging its
	// runs, reused: a buffer a run was garbage that grew with the runs.
	w       *bufio.Writer
	readers []*bufio.Reader
}

func (s *sortedSpill[T]) add(v T) error {
	if s.buf == nil {
		// the whole chunk at once: a spill's memory is what it will be
		// from its first record, not growing as the chunk fills
		s.buf = make([]T, 0, s.chunk)
	}
	s.buf = append(s.buf, v)
	if len(s.buf) < s.chunk {
		return nil
	}
	return s.flush()
}

// flush writes the records in memory to disk as one sorted run, then merges
// every level that is full (compact).
func (s *sortedSpill[T]) flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	slices.SortStableFunc(s.buf, s.cmp)
	if err := s.writeRun(0, slices.Values(s.buf)); err != nil {
		return err
	}
	s.buf = s.buf[:0]
	return s.compact()
}

// sorted yields every record in order (a merge of the runs); a read
// error ends it and is left in s.err.
func (s *sortedSpill[T]) sorted() iter.Seq[T] {
	return func(yield func(T) bool) {
		if len(s.levels) == 0 {
			slices.SortStableFunc(s.buf, s.cmp)
			for _, v := range s.buf {
				if !yield(v) {
					return
				}
			}
			return
		}
		if s.err = s.flush(); s.err != nil {
			return
		}
		for v := range s.merge(s.allRuns()) {
			if !yield(v) {
				return
			}
		}
	}
}

// close removes the spill's files.
func (s *sortedSpill[T]) close() {
	for _, l := range s.levels {
		l.remove()
	}
	s.levels = nil
	s.buf = nil
	s.w, s.readers = nil, nil
}

// sentRec is what the truth needs of one of the attacker's messages.
type sentRec struct {
	seq, first int64
	accepted   bool
}

// newSentSpill spills the attacker's messages by sequence.
func newSentSpill() *sortedSpill[sentRec] {
	return &sortedSpill[sentRec]{chunk: max(spillChunk/4, 1), size: 17,
		cmp: func(x, y sentRec) int { return cmpInt(x.seq, y.seq) },
		put: func(b []byte, v sentRec) {
			putInts(b, v.seq, v.first)
			b[16] = 0
			if v.accepted {
				b[16] = 1
			}
		},
		get: func(b []byte) sentRec {
			x := getInts(b, 2)
			return sentRec{seq: x[0], first: x[1], accepted: b[16] == 1}
		}}
}

// fatePart is the fate of one true message (one id), sure and maybe
// (messageFate), to be summed with the other ids of its sequence.
type fatePart struct {
	seq     int64
	end     [2][3]int64
	steps   [2]uint32
	ended   [2]int64
	states  [2]uint32 // endStates, a bit per state name (truthStream.stateBit)
	ids     int64
	due     [2]int64 // messageFate.due
	pending int64    // messageFate.pending
}

// newFateSpill spills the true messages' fates by sequence.
func newFateSpill() *sortedSpill[fatePart] {
	return &sortedSpill[fatePart]{chunk: max(spillChunk/16, 1), size: 8 * 15,
		cmp: func(x, y fatePart) int { return cmpInt(x.seq, y.seq) },
		put: func(b []byte, v fatePart) {
			e := v.end
			putInts(b, v.seq, e[0][0], e[0][1], e[0][2], e[1][0], e[1][1], e[1][2],
				int64(v.steps[0])<<32|int64(v.steps[1]), v.ended[0], v.ended[1],
				int64(v.states[0])<<32|int64(v.states[1]), v.ids, v.due[0], v.due[1], v.pending)
		},
		get: func(b []byte) fatePart {
			x := getInts(b, 15)
			return fatePart{seq: x[0], end: [2][3]int64{{x[1], x[2], x[3]}, {x[4], x[5], x[6]}},
				steps:  [2]uint32{uint32(uint64(x[7]) >> 32), uint32(x[7])},
				ended:  [2]int64{x[8], x[9]},
				states: [2]uint32{uint32(uint64(x[10]) >> 32), uint32(x[10])}, ids: x[11], due: [2]int64{x[12], x[13]}, pending: x[14]}
		}}
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func putInts(b []byte, xs ...int64) {
	for i, x := range xs {
		for j := range 8 {
			b[8*i+j] = byte(uint64(x) >> (8 * j))
		}
	}
}

// getInts reads the first n (at most 15: a fatePart's) integers putInts
// wrote, into an array: a slice made for each record read back from a spill
// was the most of what the analysis of a run with a truth allocated (55 of
// 121 MB in BenchmarkAnalyzeTruth at 100,000 messages).
func getInts(b []byte, n int) (out [15]int64) {
	for i := range n {
		var u uint64
		for j := range 8 {
			u |= uint64(b[8*i+j]) << (8 * j)
		}
		out[i] = int64(u)
	}
	return out
}

// spillFate judges true message m (of sequence seq > 0) against the calls of
// its id as message does, on a fate of its own, and spills it.
func (ts *truthStream) spillFate(seq int64, m *rundir.TruthMessage, as idArrivals) {
	p := fatePart{seq: seq, ids: 1, pending: pendingOf(m)}
	for i, fg := range []*truthFigures{&ts.sure, &ts.maybe} {
		f := &messageFate{}
		ts.a.followSteps(m, f, as, fg.isMaybe, map[[2]string]int64{}) // steps counted once per sequence, at the join
		p.end[i], p.steps[i], p.ended[i], p.due[i] = f.end, f.steps, int64(f.endedIDs), f.due
		for _, s := range f.endStates {
			p.states[i] |= ts.stateBit(s)
		}
	}
	if err := ts.fates.add(p); err != nil && ts.err == nil {
		ts.err = err
	}
}

// stateBit is state s's bit in fatePart.states; past 32 names the join
// cannot count them and the analysis fails (a run of another API).
func (ts *truthStream) stateBit(s string) uint32 {
	i, ok := ts.stateIdx[s]
	if !ok {
		i = len(ts.stateIdx)
		ts.stateIdx[s] = i
	}
	if i >= 32 {
		if ts.err == nil {
			ts.err = fmt.Errorf("%w: more than 32 terminal states in the truth", errBadRun)
		}
		return 0
	}
	return 1 << i
}

// merge sums fate p of another id of the same sequence into f.
func (f *fatePart) merge(p fatePart) {
	f.ids += p.ids
	f.pending = earliest(f.pending, p.pending)
	for i := range 2 {
		if e := p.end[i]; e[0] != 0 && (f.end[i][0] == 0 || e[0] < f.end[i][0]) {
			f.end[i][0], f.end[i][1], f.due[i] = e[0], e[1], p.due[i]
		}
		f.end[i][2] = max(f.end[i][2], p.end[i][2])
		f.steps[i] |= p.steps[i]
		f.ended[i] += p.ended[i]
		f.states[i] |= p.states[i]
	}
}

// joinFates merges the fates spilled by sequence with the attacker's
// messages, as tallyFates, duplicateDeliveries, the failover steps of
// followSteps and trueLatency do over the maps of a run read in one pass.
func (ts *truthStream) joinFates(lo, hi *hist) error {
	fates, stopF := iter.Pull(groupFates(ts.fates.sorted()))
	defer stopF()
	sent, stopS := iter.Pull(ts.sent.sorted())
	defer stopS()
	f, fok := fates()
	s, sok := sent()
	for fok || sok {
		switch {
		case sok && (!fok || s.seq < f.seq):
			ts.joinOne(nil, &s, lo, hi)
			s, sok = sent()
		case fok && (!sok || f.seq < s.seq):
			ts.joinOne(&f, nil, lo, hi)
			f, fok = fates()
		default:
			ts.joinOne(&f, &s, lo, hi)
			f, fok = fates()
			s, sok = sent()
		}
	}
	if ts.fates.err != nil {
		return ts.fates.err
	}
	return ts.sent.err
}

// groupFates sums the fates of each sequence (sorted by it).
func groupFates(parts iter.Seq[fatePart]) iter.Seq[fatePart] {
	return func(yield func(fatePart) bool) {
		var cur fatePart
		have := false
		for p := range parts {
			if have && p.seq == cur.seq {
				cur.merge(p)
				continue
			}
			if have && !yield(cur) {
				return
			}
			cur, have = p, true
		}
		if have {
			yield(cur)
		}
	}
}

// joinOne counts one sequence: f its true fate (nil: none), s the attacker's
// message (nil: none).
func (ts *truthStream) joinOne(f *fatePart, s *sentRec, lo, hi *hist) {
	a := ts.a
	dl := a.deadline.UnixNano()
	if a.deadline.IsZero() {
		dl = math.MaxInt64
	}
	var ends [2]*[3]int64
	for i, fg := range []*truthFigures{&ts.sure, &ts.maybe} {
		if f == nil {
			break
		}
		for k := 1; k < 31 && k < len(a.chain); k++ {
			if f.steps[i]&(1<<k) != 0 {
				fg.steps[[2]string{a.chain[k-1].Channel, a.chain[k].Channel}]++
			}
		}
		if s == nil {
			continue
		}
		if f.ended[i] > 1 || bits.OnesCount32(f.states[i]) > 1 {
			fg.dupDeliveries++
		}
		if !s.accepted {
			continue
		}
		if f.ids > 1 {
			fg.reaccepted++
		}
		if fg.lostByTruth(f.end[i], dl) {
			fg.lost++
			fg.noteSimLag(f.end[i][0], f.due[i], f.pending, dl)
		}
		if f.end[i][0] != 0 && s.first > 0 {
			fg.received++
			ends[i] = &f.end[i]
		}
	}
	if s != nil && s.accepted && s.first > 0 {
		a.trueLatencyOf(lo, hi, s.first, ends[0], ends[1])
	}
}

// truthTagged reports whether every message of the run's truth names its
// sequence by a tag of this run (tagSeq): the truth joins the attacker's
// messages by sequence alone, without a map of the ids they were answered.
func truthTagged(fsys fs.FS) bool {
	m, _ := runMeta(fsys)
	a := &analyzer{fsys: fsys, meta: m}
	tagged := true
	ok, err := a.readTruth(func(rec *rundir.TruthRecord) error {
		if rec.Message != nil {
			if _, t := a.tagSeq(rec.Message); !t {
				tagged = false
			}
		}
		return nil
	})
	return ok && err == nil && tagged
}
