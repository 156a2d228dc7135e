package sink

import (
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// fewState is a message's state in a run of few distinct states (DELIVERED,
// SEEN or EXPIRED, terminal: the common case of the dictionary).
func fewState(i int) msgState {
	return msgState{seen: 1 << (i % 3), terminal: true, channel: 1}
}

// TestTableSpillsFrozen: the frozen generations' hashes and states leave
// memory for the spill file (issue 23: 9 bytes a message held for the whole
// run, 32 MB an hour at 1,000/s); what stays is a filter and a sparse index,
// under 2 bytes a frozen message. Every message is still found with its exact
// state and changed in place, and keys never seen — many, so that some pass
// the filter and are looked up on disk — are not found.
func TestTableSpillsFrozen(t *testing.T) {
	const n = 5<<16 + 77
	tab := newTable(0)
	defer tab.close()
	key := func(i int) string { return "tx-" + strconv.Itoa(i) }
	for i := range n {
		tab.update(rundir.APIMessaging, key(i), 0, func(st *msgState, existed bool) {
			if existed {
				t.Fatalf("message %d found before its first arrival", i)
			}
			*st = fewState(i)
		})
	}
	frozen := n - len(tab.m)
	if per := float64(tab.frozenBytes()) / float64(frozen); per > 2 {
		t.Errorf("the frozen generations hold %d bytes in memory for %d messages (%.2f a message): want at most 2", tab.frozenBytes(), frozen, per)
	}
	for i := range n {
		tab.update(rundir.APIMessaging, key(i), 0, func(st *msgState, existed bool) {
			if want := fewState(i); !existed || *st != want {
				t.Fatalf("message %d: state %+v (known %v), want %+v", i, *st, existed, want)
			}
			st.seen |= 1 << 9
		})
	}
	for i := range n {
		tab.update(rundir.APIMessaging, key(i), 0, func(st *msgState, _ bool) {
			if st.seen&(1<<9) == 0 {
				t.Fatalf("message %d: seen %b: a change made in place was lost", i, st.seen)
			}
		})
	}
	for i := range 200_000 {
		if tab.lookup(rundir.APIMessaging, "never-"+strconv.Itoa(i)) || tab.lookup(rundir.APINotify, key(i%n)) {
			t.Fatalf("key %d never seen is known", i)
		}
	}
	if tab.evicted != 0 {
		t.Errorf("%d messages forgotten under the cap", tab.evicted)
	}
}

// TestTableSpillReusesRegions: past the cap the forgotten generations'
// regions of the spill file are reused, so the file stays the size of the
// cap however many messages come; the newest are still found exactly.
func TestTableSpillReusesRegions(t *testing.T) {
	const max, n = 1 << 14, 10 << 14
	tab := newTable(max)
	defer tab.close()
	for i := range n {
		tab.update(rundir.APIMessaging, strconv.Itoa(i), 0, func(st *msgState, _ bool) { *st = fewState(i) })
	}
	if tab.spill == nil {
		t.Fatal("nothing spilled")
	}
	if most := regionSize(tab.gen) * int64(max/tab.gen+1); tab.spill.end > most {
		t.Errorf("spill file of %d bytes for a cap of %d messages: want at most %d (regions reused)", tab.spill.end, max, most)
	}
	for i := n - max/2; i < n; i++ {
		tab.update(rundir.APIMessaging, strconv.Itoa(i), 0, func(st *msgState, existed bool) {
			if !existed || *st != fewState(i) {
				t.Fatalf("message %d: state %+v (known %v), want %+v", i, *st, existed, fewState(i))
			}
		})
	}
	if tab.lookup(rundir.APIMessaging, "0") {
		t.Error("the oldest message is remembered past the cap")
	}
}

// TestTableWithoutSpillKeepsInMemory: when the spill file cannot be made
// (no such directory) the generations stay in memory and nothing is lost.
func TestTableWithoutSpillKeepsInMemory(t *testing.T) {
	const n = 2<<16 + 5
	tab := newTable(0)
	tab.spillDir = t.TempDir() + "/missing"
	for i := range n {
		tab.update(rundir.APIMessaging, strconv.Itoa(i), 0, func(st *msgState, _ bool) { *st = fewState(i) })
	}
	if tab.spill != nil || len(tab.gens) == 0 || tab.gens[0].disk != nil {
		t.Fatal("a generation was spilled to a directory that does not exist")
	}
	for i := range n {
		if !tab.lookup(rundir.APIMessaging, strconv.Itoa(i)) {
			t.Fatalf("message %d forgotten", i)
		}
	}
}

// TestTableTaggedNeedNoFilter: a generation of tagged messages (whose tags
// say when they were first sent) keeps no filter of its keys in memory — a
// tagged lookup reads the generations whose messages were sent about then
// (sentRanges), an untagged one every generation with tagged messages —
// so what a frozen tagged message holds in memory is its share of the
// sparse index (issue 23: the filter, 1.5 bytes a message, was what the
// run's memory grew by until the table's cap). Every message is still
// found, by its tag and without one, with its exact state; untagged
// messages beside them are found by a lookup with any tag; keys never
// seen are not found; and when all are tagged, a first arrival, as
// messages come at 1,000 a second, seldom reads the disk (those sent in
// the second before a generation was frozen), and a frozen message holds
// under 0.1 byte. With an untagged message for every eight, a tagged lookup also
// passes the untagged keys' filter (its false positives read the disk) and
// an untagged first arrival reads every generation with tagged messages.
func TestTableTaggedNeedNoFilter(t *testing.T) {
	for _, mixed := range []bool{false, true} {
		t.Run(fmt.Sprintf("untagged=%v", mixed), func(t *testing.T) { tableTagged(t, mixed) })
	}
}

func tableTagged(t *testing.T, mixed bool) {
	const n = 5<<16 + 77
	const base = 1_800_000_000_000 // a unix millisecond
	tab := newTable(0)
	defer tab.close()
	key := func(i int) string { return "tx-" + strconv.Itoa(i) }
	sent := func(i int) int64 { return base + int64(i) } // 1,000 a second
	reads := func() int {
		if tab.spill == nil {
			return 0
		}
		return tab.spill.reads
	}
	firstReads, untaggedReads := 0, 0
	for i := range n {
		r := reads()
		tab.update(rundir.APIMessaging, key(i), sent(i), func(st *msgState, existed bool) {
			if existed {
				t.Fatalf("message %d found before its first arrival", i)
			}
			*st = fewState(i)
		})
		firstReads += reads() - r
		if mixed && i%8 == 0 { // an untagged message beside them: it may be in any generation with tagged ones
			r := reads()
			tab.update(rundir.APIMessaging, "u-"+key(i), 0, func(st *msgState, _ bool) { *st = fewState(i) })
			untaggedReads += reads() - r
		}
	}
	if tab.spill == nil {
		t.Fatal("nothing spilled")
	}
	if !mixed && firstReads > n/10 {
		t.Errorf("%d first arrivals of %d tagged messages read the disk: want at most a tenth", firstReads, n)
	}
	frozen, spilled := 0, 0
	for _, g := range tab.gens {
		frozen += g.n
		if g.disk != nil {
			spilled++
			if len(g.disk.filter) > (g.n-g.tagged)*filterBits/64+1 {
				t.Errorf("a generation of %d messages, %d tagged, keeps a filter of %d words: want one of its untagged keys alone", g.n, g.tagged, len(g.disk.filter))
			}
		}
	}
	if spilled == 0 {
		t.Fatal("no generation spilled")
	}
	tagged, most := float64(tab.frozenBytes())/float64(frozen), 0.1
	if mixed {
		most = 0.4 // an eighth untagged, in the filter
	}
	if tagged > most {
		t.Errorf("the frozen generations hold %d bytes for %d messages (%.2f a message): want under %.1f", tab.frozenBytes(), frozen, tagged, most)
	}
	for i := range n {
		tab.update(rundir.APIMessaging, key(i), sent(i), func(st *msgState, existed bool) {
			if want := fewState(i); !existed || *st != want {
				t.Fatalf("message %d by its tag: state %+v (known %v), want %+v", i, *st, existed, want)
			}
			st.seen |= 1 << 9
		})
		if i%97 == 0 && !tab.lookup(rundir.APIMessaging, key(i)) {
			t.Fatalf("message %d not found without its tag", i)
		}
		if mixed && i%8 == 0 {
			tab.update(rundir.APIMessaging, "u-"+key(i), base+int64(i%5000)*7, func(st *msgState, existed bool) {
				if !existed || *st != fewState(i) {
					t.Fatalf("untagged message %d looked up with a tag: state %+v (known %v)", i, *st, existed)
				}
			})
		}
	}
	for i := range n {
		tab.update(rundir.APIMessaging, key(i), sent(i), func(st *msgState, _ bool) {
			if st.seen&(1<<9) == 0 {
				t.Fatalf("message %d: seen %b: a change made in place was lost", i, st.seen)
			}
		})
	}
	for i := range 20_000 {
		never := "never-" + strconv.Itoa(i)
		if tab.lookup(rundir.APIMessaging, never) {
			t.Fatalf("key %q never seen is known", never)
		}
		tab.update(rundir.APIMessaging, never, sent(i*30%n), func(_ *msgState, existed bool) {
			if existed {
				t.Fatalf("key %q never seen is known by a tag", never)
			}
		})
	}
	t.Logf("%d first arrivals of tagged messages read the disk %d times, of untagged ones %d times; %.3f bytes a frozen message in memory", n, firstReads, untaggedReads, tagged)
}

// TestSentRanges: a generation's first sends as ranges, gaps of up to
// sentGap closed: every time given is in them, one farther than sentGap
// from all of them is not; sent so sparsely that the ranges would pass
// their budget (a quarter of a byte a message), the gaps are closed wider
// and every time given is still in them.
func TestSentRanges(t *testing.T) {
	sent := []int64{100_000, 100_500, 100_500, 101_400, 200_000, 90_000, 500_000, 501_000, 503_000}
	r := newSentRanges(slices.Clone(sent), 1000)
	if want := (sentRanges{{90_000, 90_000}, {100_000, 101_400}, {200_000, 200_000}, {500_000, 501_000}, {503_000, 503_000}}); !slices.Equal(r, want) {
		t.Fatalf("ranges %v, want %v", r, want)
	}
	for _, x := range sent {
		if !r.has(x) {
			t.Errorf("%d given, not in %v", x, r)
		}
	}
	for _, x := range []int64{0, 89_999, 95_000, 101_401, 150_000, 199_999, 200_001, 501_001, 503_001, 1 << 50} {
		if r.has(x) {
			t.Errorf("%d in %v", x, r)
		}
	}
	if newSentRanges(nil, 0).has(5) {
		t.Error("a time in no ranges")
	}
	// 16,384 messages a minute apart: 256 ranges at most, every send in one.
	sparse := make([]int64, 1<<14)
	for i := range sparse {
		sparse[i] = int64(i) * 60_000
	}
	r = newSentRanges(slices.Clone(sparse), len(sparse))
	if len(r) > len(sparse)/64 {
		t.Errorf("%d ranges for %d messages: want at most %d", len(r), len(sparse), len(sparse)/64)
	}
	for _, x := range sparse {
		if !r.has(x) {
			t.Fatalf("%d given, not in the %d ranges", x, len(r))
		}
	}
}
