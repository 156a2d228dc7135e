package reports

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestTruthCallbackAllocatesNothing: holding a call's arrival for its
// message allocates nothing once a message was judged — the arrivals of the
// judged id are emptied for the next (issue 23: a map of arrivals made for
// every call id in flight was 0.6 of the 3.5 GB of garbage of a report on a
// 10-minute run with callbacks and a truth).
func TestTruthCallbackAllocatesNothing(t *testing.T) {
	const n = 1_000
	ts := &truthStream{a: &analyzer{}, seqOf: func(*rundir.TruthMessage) int64 { return 0 }, r: &truthReport{}, pending: map[string]idArrivals{}}
	ts.sure.init()
	ts.maybe.init()
	ts.maybe.isMaybe = true
	at := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("n-%d", i)
	}
	var mallocs uint64
	var before, after runtime.MemStats
	for i, id := range ids {
		c := &rundir.TruthCallback{ID: id, Kind: rundir.KindWebhook, State: "DELIVERED", Action: rundir.CallbackSent, Attempt: 1, At: at, Done: at, Status: 200}
		runtime.ReadMemStats(&before)
		ts.callback(c)
		ts.callback(c) // a duplicate: a second arrival under the key
		runtime.ReadMemStats(&after)
		if i > 0 {
			mallocs += after.Mallocs - before.Mallocs
		}
		ts.message(&rundir.TruthMessage{API: rundir.APINotify, ID: id, AcceptedAt: at, Sends: 1,
			Steps: []rundir.TruthStep{{State: "DELIVERED"}}, Final: "DELIVERED"})
	}
	if ts.sure.dups != n || len(ts.pending) != 0 {
		t.Fatalf("%d duplicates, %d ids pending: want %d, 0", ts.sure.dups, len(ts.pending), n)
	}
	if mallocs > n/10 {
		t.Errorf("holding the arrivals of %d ids allocated %d times: want next to none", n-1, mallocs)
	}
}

// TestSpillRecordReadAllocatesNothing: reading a record back from a spill
// (a fate, a send, an id's pair) makes nothing on the heap: a slice made a
// record was the most of what the analysis of a run with a truth allocated.
func TestSpillRecordReadAllocatesNothing(t *testing.T) {
	s := newFateSpill()
	want := fatePart{seq: 7, end: [2][3]int64{{1, 2, 3}, {4, 5, 6}}, steps: [2]uint32{8, 9}, ended: [2]int64{1, 2},
		states: [2]uint32{3, 4}, ids: 2, due: [2]int64{10, 11}, pending: 12}
	b := make([]byte, s.size)
	s.put(b, want)
	var got fatePart
	if n := testing.AllocsPerRun(100, func() { got = s.get(b) }); n != 0 {
		t.Errorf("reading a fate back allocated %v times: want none", n)
	}
	if got != want {
		t.Errorf("read back %+v, want %+v", got, want)
	}
}

// TestFlightAllocatesNothing: a message of a run analysed in passes held
// while its records are read (a flight) allocates nothing once another
// landed: the flights of landed messages are emptied for the next (they were
// the most of what the analysis of a run with callbacks allocated).
func TestFlightAllocatesNothing(t *testing.T) {
	const n = 1_000
	c := newCensus(4)
	for seq := int64(1); seq <= n; seq++ {
		c.add(seq)
		c.add(seq)
	}
	a := &analyzer{st: &streamRun{census: c}, s: &Summary{}}
	var mallocs uint64
	var before, after runtime.MemStats
	for seq := int64(1); seq <= n; seq++ {
		runtime.ReadMemStats(&before)
		f := a.flight(seq)
		runtime.ReadMemStats(&after)
		if seq > 1 {
			mallocs += after.Mallocs - before.Mallocs
		}
		if f.want != 2 || f.read != 0 || f.evs != 0 || len(f.keys) != 0 || f.m != (msg{}) {
			t.Fatalf("message %d: flight %+v, want a new one of 2 records", seq, f)
		}
		f.read, f.evs, f.keys = 2, 1, append(f.keys, 1, 2)
		a.landIfRead(seq, f)
	}
	if len(a.fly) != 0 || a.s.Delivery.Unmatched != n {
		t.Fatalf("%d flying, %d unmatched: want none and %d", len(a.fly), a.s.Delivery.Unmatched, n)
	}
	if mallocs > n/10 {
		t.Errorf("holding %d messages in flight one after another allocated %d times: want next to none", n-1, mallocs)
	}
}

// TestSimTagSeqAllocatesNothing: reading the sequence of a true message's
// tag allocates nothing (a split of every tag was 9.7 of the 35.5 MB
// BenchmarkAnalyzeTruth allocated at 100,000 messages), and reads the tags
// as before: "<run>.<seq>" or "<run>.<part>.<seq>" of this run and part.
func TestSimTagSeqAllocatesNothing(t *testing.T) {
	a := &analyzer{}
	a.meta.ID, a.meta.Part = "run", "p"
	for _, c := range []struct {
		tag  string
		want int64
	}{
		{"run.p.7", 7}, {"run.7", 0}, {"run.q.7", 0}, {"other.p.7", 0}, {"run.p.7.1", 0}, {"run.p.", 0},
		{"run.p.x", 0}, {"run.p.-1", 0}, {"run.p.0", 0}, {"run", 0}, {"", 0}, {"..", 0}, {"run.p.9223372036854775807", 9223372036854775807},
	} {
		m := &rundir.TruthMessage{API: rundir.APIMessaging, ExternalID: c.tag}
		if got := a.simTagSeq(m); got != c.want {
			t.Errorf("simTagSeq(%q) = %d, want %d", c.tag, got, c.want)
		}
	}
	a.meta.Part = ""
	m := &rundir.TruthMessage{API: rundir.APIMessaging, ExternalID: "run.12"}
	if got := a.simTagSeq(m); got != 12 {
		t.Errorf("simTagSeq(%q) without a part = %d, want 12", m.ExternalID, got)
	}
	if n := testing.AllocsPerRun(100, func() { a.simTagSeq(m) }); n != 0 {
		t.Errorf("simTagSeq allocated %v times: want none", n)
	}
}
