package attack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// TestRecorderConcurrent: records from many goroutines come out as whole
// lines and whole vegeta results, and a second recorder on the same
// directory is refused rather than overwriting the run.
func TestRecorderConcurrent(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRecorder(dir); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second recorder: %v, want ErrExist", err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				seq := int64(g*1000 + i + 1)
				a := &rundir.Attempt{Seq: seq, API: rundir.APINotify, Op: OpSend, Attempt: 1, Sent: time.Now(), Code: 200, Error: "quote \" and\nnewline"}
				if err := rec.Record(a, &vegeta.Result{Seq: uint64(seq), Code: 200, Timestamp: a.Sent}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	err = rundir.ReadJSONL(filepath.Join(dir, attemptsFile), func(a rundir.Attempt) error {
		if seen[a.Seq] || a.Error != "quote \" and\nnewline" {
			t.Errorf("attempt %+v repeated or damaged", a)
		}
		seen[a.Seq] = true
		return nil
	}, func(line int, err error) { t.Errorf("line %d: %v", line, err) })
	if err != nil || len(seen) != 4000 {
		t.Fatalf("%d attempts read (%v), want 4000", len(seen), err)
	}
	f, _ := os.Open(filepath.Join(dir, resultsFile))
	defer f.Close()
	dec := vegeta.NewDecoder(f)
	n := 0
	for {
		var r vegeta.Result
		if dec.Decode(&r) != nil {
			break
		}
		n++
	}
	if n != 4000 {
		t.Fatalf("%d vegeta results, want 4000", n)
	}
}

// TestRecorderMergesStragglers: through NewRecorder (results.bin opened write
// only), results that come far out of send-time order — more sorted runs than
// one — still give a results.bin in time order, numbered 0…, with nothing
// left beside the run's files.
func TestRecorderMergesStragglers(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec.results.chunk = 4
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	sent := map[string]time.Time{}
	const n = 200
	for i := range n {
		k := i
		if i%10 == 9 {
			k = i - 9 // a straggler: sent with the ten before it, finished now
		}
		at := t0.Add(time.Duration(k) * time.Millisecond)
		r := &vegeta.Result{Attack: "run", Code: 200, Timestamp: at, URL: fmt.Sprintf("http://x/%d", i)}
		sent[r.URL] = at
		if err := rec.Record(&rundir.Attempt{Seq: int64(i + 1), Op: "send", Sent: at}, r); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.results.runs) == 0 {
		t.Fatal("no second sorted run: the merge went untested")
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	checkTimeOrder(t, filepath.Join(dir, resultsFile), n, sent)
	files, _ := os.ReadDir(dir)
	if len(files) != 2 {
		var names []string
		for _, f := range files {
			names = append(names, f.Name())
		}
		t.Errorf("files in the run directory: %v, want attempts.jsonl and results.bin", names)
	}
}

// TestRecorderFlushesAsItGoes: what a run records is in attempts.jsonl and
// results.bin (in time order) about a second later, while the recorder is
// still open — a process killed then keeps it — and a result sent before one
// already written (a straggler) is still in results.bin, in order, after
// Close. Fake time (synctest): the flushing loop's ticks, not the machine's
// speed, decide what is written.
func TestRecorderFlushesAsItGoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		rec, err := NewRecorder(dir)
		if err != nil {
			t.Fatal(err)
		}
		const n = 100
		sent := map[string]time.Time{}
		for i := range n {
			at := time.Now()
			r := &vegeta.Result{Attack: "run", Code: 200, Timestamp: at, URL: fmt.Sprintf("http://x/%d", i)}
			sent[r.URL] = at
			if err := rec.Record(&rundir.Attempt{Seq: int64(i + 1), Op: "send", Sent: at}, r); err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(flushEvery + resultsHold)
		lines := 0
		err = rundir.ReadJSONL(filepath.Join(dir, attemptsFile), func(rundir.Attempt) error { lines++; return nil },
			func(line int, err error) { t.Errorf("attempts.jsonl line %d: %v", line, err) })
		if err != nil || lines != n {
			t.Errorf("attempts.jsonl holds %d attempts (%v) a second after the last, want %d", lines, err, n)
		}
		checkTimeOrder(t, filepath.Join(dir, resultsFile), n, sent)

		// A straggler: sent before everything written, finished now.
		late := &vegeta.Result{Attack: "run", Code: 200, Timestamp: sent["http://x/0"].Add(-time.Millisecond), URL: "http://x/late"}
		sent[late.URL] = late.Timestamp
		if err := rec.Record(&rundir.Attempt{Seq: n + 1, Op: "send", Sent: late.Timestamp}, late); err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		checkTimeOrder(t, filepath.Join(dir, resultsFile), n+1, sent)
	})
}

// TestRecorderWritesWholeLines: whenever attempts.jsonl grows, it ends with
// a whole line — a process killed between two writes leaves no half line for
// the report to skip.
func TestRecorderWritesWholeLines(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	path := filepath.Join(dir, attemptsFile)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	grew := 0
	var size int64
	for i := range 2000 { // about 0.5 MB: the 64 KiB buffer is written several times
		a := &rundir.Attempt{Seq: int64(i + 1), Op: OpSend, Attempt: 1, Sent: time.Now(), Error: fmt.Sprintf("an error of %d bytes: %0*d", 100+i%97, 100+i%97, 0)}
		if err := rec.Record(a, nil); err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() == size {
			continue
		}
		size = st.Size()
		grew++
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			t.Fatal(err)
		}
		if last[0] != '\n' {
			t.Fatalf("after attempt %d attempts.jsonl (%d bytes) ends in the middle of a line", i+1, size)
		}
	}
	if grew < 3 {
		t.Fatalf("attempts.jsonl grew %d times while recording: the test saw too few writes", grew)
	}
}
