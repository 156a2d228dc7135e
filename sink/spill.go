package sink

import (
	"encoding/binary"
	"os"
	"slices"

	"github.com/msgload/msgload/internal/tempfile"
)

// Frozen generations on disk (issue 23). In memory a generation cost 9 bytes
// a message for the whole run (its sorted hashes and state numbers): 32 MB an
// hour at 1,000/s, most of the run process's growth. Once frozen, its hashes
// and states go to an unlinked temporary file, in blocks of spillBlock
// messages (the block's hashes, then its states); memory keeps the first hash
// of each block (a sparse index), when its tagged messages were first sent
// (sentRanges: their tags say so), and a filter of its untagged messages'
// hashes that says "surely not here" for most keys it never held. A lookup
// reads one block at most per generation, and only when the key may be
// there: a tagged message in a generation whose messages were sent about
// when it was, an untagged one through the filter, or any generation with
// tagged messages for a lookup without a tag (an incoming reply's, a
// callback whose tag the service dropped). So a message's first arrival,
// the common case, is mostly answered from memory (its second of sending is
// in no frozen generation yet), and the filter — 1.5 bytes a message, the
// run's growth until the table's cap — is kept only for untagged messages.
// The same hashes and states as before; nothing approximated: the ranges
// and the filter only skip reads that would find nothing. (A callback whose
// tag names another first send than its message's first callback did, a
// service's mix-up, is a message of its own when that one is frozen.)

// spillBlock is how many messages a block holds: one read of 1,152 bytes.
const spillBlock = 128

// filterBits is the filter's size in bits a message (about 1 % of keys never
// held pass it, with filterProbes bits a key in one 64-bit word).
const (
	filterBits   = 12
	filterProbes = 6
)

// spilled is where a frozen generation is on disk and what stays of it in
// memory.
type spilled struct {
	off    int64    // the generation's first block in the spill file
	fences []uint64 // the first hash of each block
	filter filter   // a blocked Bloom filter of the generation's hashes
}

// spillFile is the table's temporary file: regions of whole generations, a
// forgotten generation's region reused by the next one of its size.
type spillFile struct {
	f    *os.File
	end  int64
	free map[int64][]int64 // region size → free offsets
	buf  []byte            // one block read
	// reads counts the lookups that read a block (tests: how often a first
	// arrival goes to the disk).
	reads int
}

// openSpill opens an unlinked temporary file in dir ($TMPDIR when ""), so
// that nothing is left behind even by a killed process.
func openSpill(dir string) (*spillFile, error) {
	f, err := tempfile.Unlinked(dir, "msgload-sink-table-*")
	if err != nil {
		return nil, err
	}
	return &spillFile{f: f, free: map[int64][]int64{}, buf: make([]byte, 9*spillBlock)}, nil
}

// blockAt is the offset of block b of a generation at off.
func blockAt(off int64, b int) int64 { return off + int64(b)*9*spillBlock }

// regionSize is the bytes a generation of n messages takes on disk.
func regionSize(n int) int64 { return blockAt(0, (n+spillBlock-1)/spillBlock) }

// write puts a generation's sorted keys and states on disk and returns what
// memory keeps of it: the filter is of its untagged keys alone (nil when
// none).
func (s *spillFile) write(keys []uint64, state []uint8, untagged []uint64) (*spilled, error) {
	size := regionSize(len(keys))
	off := s.take(size)
	block := make([]byte, 9*spillBlock)
	sp := &spilled{off: off, fences: make([]uint64, 0, (len(keys)+spillBlock-1)/spillBlock)}
	for lo := 0; lo < len(keys); lo += spillBlock {
		hi := min(lo+spillBlock, len(keys))
		for i, h := range keys[lo:hi] {
			binary.LittleEndian.PutUint64(block[8*i:], h)
		}
		copy(block[8*spillBlock:], state[lo:hi])
		if _, err := s.f.WriteAt(block, blockAt(off, lo/spillBlock)); err != nil {
			s.give(off, size)
			return nil, err
		}
		sp.fences = append(sp.fences, keys[lo])
	}
	if len(untagged) > 0 {
		sp.filter = newFilter(untagged)
	}
	return sp, nil
}

// take returns a free region of size bytes, else one at the file's end.
func (s *spillFile) take(size int64) int64 {
	if fr := s.free[size]; len(fr) > 0 {
		s.free[size] = fr[:len(fr)-1]
		return fr[len(fr)-1]
	}
	off := s.end
	s.end += size
	return off
}

// give returns a region to be reused.
func (s *spillFile) give(off, size int64) {
	s.free[size] = append(s.free[size], off)
}

// find looks hash h up in a spilled generation: its index and state
// number, ok false when it is not there.
func (s *spillFile) find(sp *spilled, n int, h uint64) (int, uint8, bool, error) {
	s.reads++
	b, _ := slices.BinarySearch(sp.fences, h)
	if b == len(sp.fences) || sp.fences[b] != h {
		b-- // the block whose first hash is below h
	}
	if b < 0 {
		return 0, 0, false, nil
	}
	cnt := min(spillBlock, n-b*spillBlock)
	buf := s.buf[:9*spillBlock]
	if _, err := s.f.ReadAt(buf, blockAt(sp.off, b)); err != nil {
		return 0, 0, false, err
	}
	i, ok := searchBlock(buf, cnt, h)
	if !ok {
		return 0, 0, false, nil
	}
	return b*spillBlock + i, buf[8*spillBlock+i], true, nil
}

// searchBlock binary-searches the cnt sorted hashes of a block read.
func searchBlock(buf []byte, cnt int, h uint64) (int, bool) {
	lo, hi := 0, cnt
	for lo < hi {
		m := (lo + hi) / 2
		if binary.LittleEndian.Uint64(buf[8*m:]) < h {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < cnt && binary.LittleEndian.Uint64(buf[8*lo:]) == h
}

// setState writes the state number of message i of a spilled generation.
func (s *spillFile) setState(sp *spilled, i int, id uint8) error {
	at := blockAt(sp.off, i/spillBlock) + 8*spillBlock + int64(i%spillBlock)
	_, err := s.f.WriteAt([]byte{id}, at)
	return err
}

// filter is a blocked Bloom filter: each key sets filterProbes bits of one
// 64-bit word, chosen from its hash (the table's hashes are uniform).
type filter []uint64

func newFilter(keys []uint64) filter {
	f := make(filter, max(1, (len(keys)*filterBits+63)/64))
	for _, h := range keys {
		w, m := f.probe(h)
		f[w] |= m
	}
	return f
}

// probe is the word and the bits of hash h.
func (f filter) probe(h uint64) (int, uint64) {
	w := int((h >> 32) * uint64(len(f)) >> 32)
	var m uint64
	for p := range filterProbes {
		m |= 1 << ((h >> (6 * p)) & 63)
	}
	return w, m
}

// has says whether h may be a key of the filter: false surely not (an
// empty filter has none).
func (f filter) has(h uint64) bool {
	if len(f) == 0 {
		return false
	}
	w, m := f.probe(h)
	return f[w]&m == m
}
