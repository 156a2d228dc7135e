package sim

import (
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// The truth keeps its records in chunks; indexes, updates through them and
// the snapshot must see one list in order across chunk boundaries, and stop
// at the cap.
func TestTruthAcrossChunks(t *testing.T) {
	const n = 2*chunkLen + 3
	tr := newTruth(RateLimit{}, n, time.Unix(0, 0))
	for i := range n {
		idx := tr.message(rundir.TruthMessage{ID: itoa(int64(i))})
		if int(idx) != i {
			t.Fatalf("message %d got index %d", i, idx)
		}
		tr.callback(rundir.TruthCallback{ID: itoa(int64(i)), Attempt: 1})
	}
	if idx := tr.message(rundir.TruthMessage{ID: "past the cap"}); idx != -1 {
		t.Fatalf("message past the cap got index %d, want -1", idx)
	}
	for _, i := range []int32{0, chunkLen - 1, chunkLen, 2 * chunkLen, n - 1} {
		tr.sent(i)
		tr.step(i, rundir.TruthStep{State: rundir.StateDelivered}, true)
	}
	got := tr.snapshot()
	if len(got.Messages) != n || len(got.Callbacks) != n || !got.Truncated {
		t.Fatalf("snapshot: %d messages, %d callbacks, truncated %v; want %d, %d, true", len(got.Messages), len(got.Callbacks), got.Truncated, n, n)
	}
	for i, m := range got.Messages {
		if m.ID != itoa(int64(i)) || got.Callbacks[i].ID != m.ID {
			t.Fatalf("record %d: message %q callback %q", i, m.ID, got.Callbacks[i].ID)
		}
		touched := i == 0 || i == chunkLen-1 || i == chunkLen || i == 2*chunkLen || i == n-1
		if touched != (m.Sends == 1 && m.Final == rundir.StateDelivered && len(m.Steps) == 1) {
			t.Fatalf("record %d: sends %d final %q steps %d (updated: %v)", i, m.Sends, m.Final, len(m.Steps), touched)
		}
	}
	// The snapshot is a copy: later steps do not reach it.
	tr.step(0, rundir.TruthStep{State: "SEEN"}, false)
	if len(got.Messages[0].Steps) != 1 {
		t.Fatal("a later step changed an earlier snapshot")
	}
}
