package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestLiveTruthRunBounded: the live analysis of a run with callbacks on the
// embedded simulator (the run still going: no end in run.json, truth.jsonl
// with no end record yet, its last line half written) succeeds, without
// the truth, and is the bounded one — it holds no message it has
// settled — and its summary is the one pass's to the byte. It took the one
// pass, holding every message of the run so far, at every tick of the
// run's live loop (issue 23: the run's memory grew ~600 bytes a message).
func TestLiveTruthRunBounded(t *testing.T) {
	r := genStream(3_000, 7, "sink", 1)
	r.meta.End = time.Time{} // the run goes on
	dir := r.write(t)
	truth := filepath.Join(dir, rundir.TruthStreamFile)
	writeTruthJSONL(t, truth, &rundir.Truth{}, false)
	f, err := os.OpenFile(truth, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"type":"message","mess`); err != nil { // the simulator is writing a line
		t.Fatal(err)
	}
	f.Close()
	fsys := os.DirFS(dir)
	a, err := analyze(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	if a.st == nil || a.msgs.n != 0 || len(a.idOwner) > len(a.st.twice) || len(a.seenAttempts) > 0 {
		t.Fatalf("live analysis holds %d messages, %d ids, %d attempts (in passes: %v): want none, in passes (ids: only those given to two messages)",
			a.msgs.n, len(a.idOwner), len(a.seenAttempts), a.st != nil)
	}
	one, err := analyzeListing(fsys, dir, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	want, err := one.s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the live analysis in passes differs from the one pass:\n%s\nwant\n%s", got, want)
	}
	if a.s.Truth != nil {
		t.Errorf("the unfinished truth of a run still going was compared: %+v", a.s.Truth)
	}
}
