package sink

import (
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
		tab.update(rundir.APIMessaging, key(i), func(st *msgState, existed bool) {
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
		tab.update(rundir.APIMessaging, key(i), func(st *msgState, existed bool) {
			if want := fewState(i); !existed || *st != want {
				t.Fatalf("message %d: state %+v (known %v), want %+v", i, *st, existed, want)
			}
			st.seen |= 1 << 9
		})
	}
	for i := range n {
		tab.update(rundir.APIMessaging, key(i), func(st *msgState, _ bool) {
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
		tab.update(rundir.APIMessaging, strconv.Itoa(i), func(st *msgState, _ bool) { *st = fewState(i) })
	}
	if tab.spill == nil {
		t.Fatal("nothing spilled")
	}
	if most := regionSize(tab.gen) * int64(max/tab.gen+1); tab.spill.end > most {
		t.Errorf("spill file of %d bytes for a cap of %d messages: want at most %d (regions reused)", tab.spill.end, max, most)
	}
	for i := n - max/2; i < n; i++ {
		tab.update(rundir.APIMessaging, strconv.Itoa(i), func(st *msgState, existed bool) {
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
		tab.update(rundir.APIMessaging, strconv.Itoa(i), func(st *msgState, _ bool) { *st = fewState(i) })
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
