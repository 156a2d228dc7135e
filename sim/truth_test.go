package sim

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// The truth keeps its settled records in chunks when it is not streamed;
// the snapshot must see them in order across chunk boundaries, and stop at
// the cap.
func TestTruthAcrossChunks(t *testing.T) {
	const n = 2*chunkLen + 3
	tr := newTruth(RateLimit{}, n, time.Unix(0, 0))
	for i := range n {
		tm := tr.message(rundir.TruthMessage{ID: itoa(int64(i))})
		if tm == nil {
			t.Fatalf("message %d refused below the cap", i)
		}
		tr.callback(rundir.TruthCallback{ID: itoa(int64(i)), Attempt: 1})
		tr.step(tm, rundir.TruthStep{State: rundir.StateDelivered}, true)
	}
	if tm := tr.message(rundir.TruthMessage{ID: "past the cap"}); tm != nil {
		t.Fatal("a message past the cap was kept")
	}
	got := tr.snapshot()
	if len(got.Messages) != n || len(got.Callbacks) != n || !got.Truncated {
		t.Fatalf("snapshot: %d messages, %d callbacks, truncated %v; want %d, %d, true", len(got.Messages), len(got.Callbacks), got.Truncated, n, n)
	}
	for i, m := range got.Messages {
		if m.ID != itoa(int64(i)) || got.Callbacks[i].ID != m.ID || m.Final != rundir.StateDelivered || len(m.Steps) != 1 {
			t.Fatalf("record %d: message %+v callback %q", i, m, got.Callbacks[i].ID)
		}
	}
}

// TestTruthStreamsSettled: streamed, a message's record goes to truth.jsonl
// only once it is final and the last copy of its callbacks is settled (after
// those calls' records), and memory keeps only the messages in flight; the
// close writes those still in flight, the open windows and the end record.
func TestTruthStreamsSettled(t *testing.T) {
	path := filepath.Join(t.TempDir(), rundir.TruthStreamFile)
	tr := newTruth(RateLimit{Requests: 5, Window: time.Second, Algorithm: "fixed"}, 10, time.Unix(0, 0))
	if err := tr.streamTo(path); err != nil {
		t.Fatal(err)
	}
	a := tr.message(rundir.TruthMessage{ID: "a"})
	b := tr.message(rundir.TruthMessage{ID: "b"})
	tr.decision("c", time.Unix(0, 0), true)
	tr.hold(a) // a's final callback, made
	tr.step(a, rundir.TruthStep{State: rundir.StateDelivered}, true)
	tr.hold(a) // ... and duplicated
	tr.callback(rundir.TruthCallback{ID: "a", Action: rundir.CallbackSent, Attempt: 1})
	tr.release(a)
	if _, ok := tr.flying[a]; !ok {
		t.Fatal("a went out with a copy of its callback still in flight")
	}
	tr.callback(rundir.TruthCallback{ID: "a", Action: rundir.CallbackSent, Attempt: 1})
	tr.release(a)
	tr.decision("c", time.Unix(3, 0), false) // window 0 is over
	if len(tr.flying) != 1 || len(tr.windows) != 1 {
		t.Fatalf("held: %d messages, %d windows; want 1 (b), 1", len(tr.flying), len(tr.windows))
	}
	tr.step(b, rundir.TruthStep{State: rundir.StateAccepted}, false)
	if err := tr.end(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var types []string
	err = rundir.DecodeTruthRecords(f, func(rec *rundir.TruthRecord) error {
		x := rec.Type
		switch {
		case rec.Message != nil:
			x += ":" + rec.Message.ID
		case rec.Window != nil:
			x += ":" + strconv.Itoa(rec.Window.Accepted) + "/" + strconv.Itoa(rec.Window.Refused)
		}
		types = append(types, x)
		return nil
	})
	want := []string{"rate_limit", "callback", "callback", "message:a", "window:1/0", "message:b", "window:0/1", "end"}
	if err != nil || !slices.Equal(types, want) {
		t.Fatalf("truth.jsonl records %v (%v), want %v", types, err, want)
	}
}
