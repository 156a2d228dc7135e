package attack

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
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
	err = rundir.ReadJSONL(filepath.Join(dir, AttemptsFile), func(a rundir.Attempt) error {
		if seen[a.Seq] || a.Error != "quote \" and\nnewline" {
			t.Errorf("attempt %+v repeated or damaged", a)
		}
		seen[a.Seq] = true
		return nil
	}, func(line int, err error) { t.Errorf("line %d: %v", line, err) })
	if err != nil || len(seen) != 4000 {
		t.Fatalf("%d attempts read (%v), want 4000", len(seen), err)
	}
	f, _ := os.Open(filepath.Join(dir, ResultsFile))
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
