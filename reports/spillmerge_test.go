package reports

import (
	"cmp"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
)

// TestSpillMergesFewRuns: a spill far longer than its chunk reads at most
// spillFanIn runs a level at once, not a run (and its 8 KiB reader) per
// chunk — an hour's soak spills thousands of chunks — and gives its records
// back sorted, those of equal keys in the order they were added (as the one
// pass meets them), read once or twice.
func TestSpillMergesFewRuns(t *testing.T) {
	defer func(n int) { spillFanIn = n }(spillFanIn)
	spillFanIn = 4
	s := newIDSpill()
	s.chunk = 3
	defer s.close()
	rng := rand.New(rand.NewPCG(3, 5))
	var in []idRec
	for i := range 5_000 {
		v := idRec{h: uint64(rng.IntN(50)), x: int64(rng.IntN(20)), y: int64(i)}
		in = append(in, v)
		if err := s.add(v); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Clone(in)
	slices.SortStableFunc(want, func(p, q idRec) int { return cmp.Or(cmp.Compare(p.h, q.h), cmp.Compare(p.x, q.x)) })
	for pass := range 2 {
		got := slices.Collect(s.sorted())
		if s.err != nil {
			t.Fatal(s.err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("pass %d: the spill gave %d records not in order (or not those added)", pass, len(got))
		}
	}
	// 1,667 chunks: levels of 4 runs make 6 levels; every one may hold up
	// to 3 runs when the merge begins.
	if limit := spillFanIn * 6; s.maxOpen > limit {
		t.Errorf("the merge read %d runs at once, want at most %d", s.maxOpen, limit)
	}
}

// TestSpillHoldsItsChunk: a spill, however long, holds at most 128 KiB of
// records in memory (hashSpill: 8,192 pairs), so that it is full within
// seconds of a run at 1,000 a second and the report's memory does not grow
// from one to three minutes as its chunk fills (it held 2 MiB, then 512 KiB:
// a checkpoint during the attack adds what the analysis holds to the run's
// peak, issue 23).
func TestSpillHoldsItsChunk(t *testing.T) {
	var s hashSpill
	defer s.close()
	for i := range 200_000 {
		if err := s.add(uint64(i*7919), int64(i)); err != nil {
			t.Fatal(err)
		}
		if held := cap(s.s.buf) * 16; held > 128<<10 {
			t.Fatalf("after %d pairs the spill holds %d bytes in memory, want at most 128 KiB", i+1, held)
		}
	}
}

// TestSpillReusesItsBuffers: a spill writing thousands of runs (an hour's
// soak spills thousands of chunks, each merge of a level one more run)
// allocates its write buffer and its merges' read buffers once, not once a
// run: it made a 64 KiB write buffer for every run written and an 8 KiB
// reader for every run merged, garbage that grew with the runs.
func TestSpillReusesItsBuffers(t *testing.T) {
	defer func(n int) { spillFanIn = n }(spillFanIn)
	spillFanIn = 4
	s := newIDSpill()
	s.chunk = 3
	defer s.close()
	const records = 5_000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range records {
		if err := s.add(idRec{h: uint64(i * 7919 % 50), x: int64(i % 20), y: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// 1,667 chunks written and about 555 runs merged from them into the
	// levels above: a run written or merged needs its cursor and a
	// record's bytes, not a buffer of its own.
	runs := records/s.chunk + records/s.chunk/3
	if perRun := (after.TotalAlloc - before.TotalAlloc) / uint64(runs); perRun > 4<<10 {
		t.Errorf("the spill allocated %d bytes a run written, want at most 4 KiB (its buffers reused)", perRun)
	}
}

// TestSpillMergeBuffersBounded: the read buffers a spill holds for its
// merges stay under 128 KiB however many chunks it spilled. A merge reads
// every run left on every level at once, a buffer each: with levels of 64
// runs of 8 KiB, a run's checkpoint at minute 8 of 1,000 messages a second
// held 63 runs of each of two spills (1 MB, about 2 bytes a message, growing
// with the run until the level filled).
func TestSpillMergeBuffersBounded(t *testing.T) {
	for _, chunks := range []int{15, 63, 255, 300} {
		s := newIDSpill()
		s.chunk = 3
		for i := range chunks * s.chunk {
			if err := s.add(idRec{h: uint64(i * 7919 % 50), x: int64(i % 20), y: int64(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(slices.Collect(s.sorted())); n != chunks*s.chunk || s.err != nil {
			t.Fatalf("%d chunks: the spill gave %d records (%v)", chunks, n, s.err)
		}
		held := 0
		for _, rd := range s.readers {
			held += rd.Size()
		}
		if held > 128<<10 {
			t.Errorf("%d chunks: the spill holds %d KiB of read buffers, want at most 128 KiB", chunks, held>>10)
		}
		s.close()
	}
}

// TestSpillLeavesNothingBehind: a spill's files are unlinked from the
// moment they are made (internal/tempfile), so that a process killed with
// its spill open — the live analysis's child, killed when its run stops —
// leaves nothing in $TMPDIR: here the directory is empty while the spill
// holds thousands of records on disk, and the records read back.
func TestSpillLeavesNothingBehind(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be removed on Windows")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := newIDSpill()
	s.chunk = 3
	defer s.close()
	for i := range 5_000 {
		if err := s.add(idRec{h: uint64(i % 7), y: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for range s.sorted() {
		if n++; n == 2_500 {
			if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
				t.Fatalf("while the spill is open, $TMPDIR holds %d files (%s …)", len(ents), ents[0].Name())
			}
		}
	}
	if s.err != nil || n != 5_000 || len(s.levels) == 0 {
		t.Fatalf("read back %d of 5,000 records from %d levels: %v", n, len(s.levels), s.err)
	}
}
