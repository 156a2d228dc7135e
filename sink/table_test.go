package sink

import (
	"strconv"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// tableState is the state TestTableHoldsFewInMap gives message i: over a
// thousand distinct ones, more than the dictionary of a generation holds.
func tableState(i int) msgState {
	return msgState{seen: uint64(i%1000) + 1, terminal: i%3 != 0, channel: uint8(i % 5)}
}

// TestTableHoldsFewInMap: after many messages the table's map holds at most
// a generation of them (the rest are frozen, 9 bytes a message: issue 23 —
// the run's memory grew by the map, ~78 bytes a message); every message is
// still remembered with its exact state, found again and changed in place,
// an unknown key is not, and nothing under the cap is forgotten.
func TestTableHoldsFewInMap(t *testing.T) {
	const n = 3<<16 + 123
	tab := newTable(0)
	key := func(i int) string { return "tx-" + strconv.Itoa(i) }
	for i := range n {
		tab.update(rundir.APIMessaging, key(i), 0, func(st *msgState, existed bool) {
			if existed {
				t.Fatalf("message %d found before its first arrival", i)
			}
			*st = tableState(i)
		})
	}
	if len(tab.m) > 1<<16 {
		t.Errorf("the map holds %d of %d messages: want at most a generation (%d)", len(tab.m), n, 1<<16)
	}
	for i := range n {
		if !tab.lookup(rundir.APIMessaging, key(i)) {
			t.Fatalf("message %d forgotten", i)
		}
		tab.update(rundir.APIMessaging, key(i), 0, func(st *msgState, existed bool) {
			if want := tableState(i); !existed || *st != want {
				t.Fatalf("message %d: state %+v (known %v), want %+v", i, *st, existed, want)
			}
			st.asked = uint64(i%7) + 1
		})
	}
	for i := range n {
		tab.update(rundir.APIMessaging, key(i), 0, func(st *msgState, _ bool) {
			if st.asked != uint64(i%7)+1 {
				t.Fatalf("message %d: asked %d, want %d: a change made in place was lost", i, st.asked, i%7+1)
			}
		})
	}
	if tab.lookup(rundir.APINotify, key(1)) || tab.lookup(rundir.APIMessaging, "tx-none") {
		t.Error("a key never seen is known")
	}
	if tab.evicted != 0 {
		t.Errorf("%d messages forgotten under the cap", tab.evicted)
	}
}

// TestTableForgetsOldest: past its cap the table forgets its oldest messages
// and counts them; the newest stay.
func TestTableForgetsOldest(t *testing.T) {
	const max, n = 8, 20
	tab := newTable(max)
	evicted := 0
	for i := range n {
		evicted += tab.update(rundir.APIMessaging, strconv.Itoa(i), 0, func(st *msgState, _ bool) { st.terminal = true })
	}
	held := 0
	for i := range n {
		if tab.lookup(rundir.APIMessaging, strconv.Itoa(i)) {
			held++
		}
	}
	if held > max || held+evicted != n || uint64(evicted) != tab.evicted {
		t.Errorf("%d held, %d forgotten (table: %d) of %d: want at most %d held, the rest forgotten", held, evicted, tab.evicted, n, max)
	}
	if tab.lookup(rundir.APIMessaging, "0") || !tab.lookup(rundir.APIMessaging, strconv.Itoa(n-1)) || !tab.lookup(rundir.APIMessaging, strconv.Itoa(n-max/2)) {
		t.Error("the oldest message is remembered, or one of the newest forgotten")
	}
}
