package reports

import (
	"math/rand/v2"
	"testing"
)

// TestMsgTable: a message added is found again at the same address, by get
// and by each, once; a sequence never added is not found; dense sequences go
// to pages, a shard's (a step of 8) or a far one to the map, and pages stay
// at least half full.
func TestMsgTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		seqs    func(i int) int64
		n       int
		inPages bool // most of them
	}{
		{"dense", func(i int) int64 { return int64(i + 1) }, 50_000, true},
		{"every other", func(i int) int64 { return int64(2*i + 1) }, 50_000, true},
		{"shard of 8", func(i int) int64 { return int64(8*i + 3) }, 50_000, false},
		{"far apart", func(i int) int64 { return int64(i+1) << 32 }, 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tab msgTable
			rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
			// Roughly in order, as attempts finish: shuffled within windows of 64.
			order := make([]int, tc.n)
			for i := range order {
				order[i] = i
			}
			for w := 0; w < tc.n; w += 64 {
				win := order[w:min(w+64, tc.n)]
				rng.Shuffle(len(win), func(i, j int) { win[i], win[j] = win[j], win[i] })
			}
			added := map[int64]*msg{}
			for _, i := range order {
				seq := tc.seqs(i)
				m := tab.add(seq)
				if old, ok := added[seq]; ok && old != m {
					t.Fatalf("seq %d added twice at two addresses", seq)
				}
				m.first = seq // a mark
				added[seq] = m
			}
			for seq, m := range added {
				if got := tab.get(seq); got != m || got.first != seq {
					t.Fatalf("get(%d) = %p, added at %p", seq, got, m)
				}
				if tab.get(seq+1) != nil && added[seq+1] == nil {
					t.Fatalf("get(%d) found a message never added", seq+1)
				}
			}
			if tab.get(0) != nil || tab.get(-1) != nil {
				t.Fatal("a message at a sequence of 0 or less")
			}
			seen := map[int64]bool{}
			tab.each(func(seq int64, m *msg) {
				if seen[seq] || added[seq] != m {
					t.Fatalf("each: seq %d twice, or not the message added", seq)
				}
				seen[seq] = true
			})
			if len(seen) != len(added) || tab.n != len(added) {
				t.Fatalf("each saw %d, %d held, %d added", len(seen), tab.n, len(added))
			}
			pages := 0
			for _, p := range tab.pages {
				if p != nil {
					pages++
				}
			}
			inPages := len(added) - len(tab.over)
			if tc.inPages != (inPages > len(added)/2) {
				t.Fatalf("%d of %d in pages", inPages, len(added))
			}
			if pages > 0 && inPages < pages*msgPage/2-4*msgPage {
				t.Fatalf("%d pages for %d messages: less than half full", pages, inPages)
			}
		})
	}
}
