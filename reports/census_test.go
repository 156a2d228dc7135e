package reports

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestCensusSparseIsDense: a census whose pages are made sparse as the
// reading leaves them behind, and at its end (compact), counts every
// sequence as a plain count per sequence does (capped at more) — read in
// sequence order with records coming back to earlier sequences (retries,
// callbacks seconds later, a duplicate much later), a page made dense again
// by many later records, and sequences never counted — at every bits a
// sequence the analyses use. And it is compact: a census whose sequences
// nearly all have one count keeps its pages behind sparse, in at most half
// their dense bytes, and a page a quarter of whose sequences are odd
// stays dense.
func TestCensusSparseIsDense(t *testing.T) {
	for _, bits := range []uint{1, 2, 4} {
		t.Run(fmt.Sprintf("bits=%d", bits), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(bits), 3))
			c := newCensus(bits)
			want := map[int64]int{}
			add := func(seq int64) {
				c.add(seq)
				want[seq] = min(want[seq]+1, c.more())
			}
			check := func(when string) {
				t.Helper()
				for seq := int64(0); seq < 12*censusPage; seq += 1 + int64(rng.IntN(7)) {
					if got := c.get(seq); got != want[seq] {
						t.Fatalf("%s: sequence %d counted %d, want %d", when, seq, got, want[seq])
					}
				}
			}
			const n = 10 * censusPage
			for seq := int64(1); seq <= n; seq++ {
				if seq%1000 == 999 {
					continue // never counted: none
				}
				add(seq)
				switch x := rng.IntN(1000); {
				case x < 30: // a retry, a callback: its next record soon after
					add(max(1, seq-int64(rng.IntN(200))))
				case x < 32: // a duplicate much later, pages back
					add(max(1, seq-int64(rng.IntN(4*censusPage))))
				}
				if seq == 5*censusPage {
					check("half way")
				}
			}
			// Page 3 gets a second record for nearly each of its
			// sequences: made dense again, the rest of it as it was.
			for seq := int64(3 * censusPage); seq < 4*censusPage; seq++ {
				if rng.IntN(4) > 0 {
					add(seq)
				}
			}
			check("after the reading")
			sparse := 0
			for _, p := range c.pages {
				if p.b == nil {
					sparse++
				}
			}
			if sparse < 6 {
				t.Errorf("%d of %d pages sparse during the reading, want those behind it", sparse, len(c.pages))
			}
			c.compact()
			check("compacted")
			bytes, dense := 0, 0
			for _, p := range c.pages {
				if p.b != nil {
					dense++
					bytes += len(p.b)
				}
				bytes += 2 * p.n
			}
			// Page 3 stays dense: a quarter of it is odd.
			if dense > 1 || bytes > c.denseBytes()+(len(c.pages)-1)*c.denseBytes()/2 {
				t.Errorf("compacted: %d of %d pages dense, %d bytes of counts (dense: %d)", dense, len(c.pages), bytes, len(c.pages)*c.denseBytes())
			}
			// Counting goes on after compact, and a third record for
			// every sequence of a page makes it all odd, then dense.
			for seq := int64(7 * censusPage); seq < 8*censusPage; seq++ {
				add(seq)
				add(seq)
			}
			check("counted after compact")
			t.Logf("%d pages: %d bytes of counts compacted, %d dense", len(c.pages), bytes, len(c.pages)*c.denseBytes())
		})
	}
}

// TestCensusLooksAtAPageOnce: a reading whose pages are not worth making
// sparse (every sequence a count of its own) looks at each page once as it
// leaves it behind, not at every page it left at every new one.
func TestCensusLooksAtAPageOnce(t *testing.T) {
	c := newCensus(4)
	for seq := int64(1); seq <= 40*censusPage; seq++ {
		for range seq % 5 {
			c.add(seq)
		}
	}
	if len(c.dense) > censusBehind+1 {
		t.Fatalf("%d pages still waiting to be looked at, want at most %d", len(c.dense), censusBehind+1)
	}
	for _, p := range c.pages {
		if p.b == nil {
			t.Fatal("a page of five counts in equal shares made sparse")
		}
	}
}
