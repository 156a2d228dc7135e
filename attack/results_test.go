package attack

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// TestResultsWriterSorts: results that come in the order they finished (a
// retry long after requests sent later) are written in send-time order,
// numbered 0… in that order, through one chunk and through spilled runs, with
// nothing left beside results.bin.
func TestResultsWriterSorts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		chunk int
	}{{"one chunk", 500, sortChunkResults}, {"spilled runs", 2500, 100}, {"empty", 0, 100}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f, err := os.Create(filepath.Join(dir, ResultsFile))
			if err != nil {
				t.Fatal(err)
			}
			w := NewResultsWriter(f)
			w.chunk = tc.chunk
			rng := rand.New(rand.NewPCG(1, 2))
			t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
			sent := map[string]time.Time{} // URL → send time
			var rs []*vegeta.Result
			for i := range tc.n {
				// Sent at about i ms (ten pairs share a millisecond), numbered as
				// they finished, which is in another order entirely.
				at := t0.Add(time.Duration(i-i%10/9) * time.Millisecond)
				r := &vegeta.Result{Attack: "run", Code: 200, Timestamp: at, URL: fmt.Sprintf("http://x/%d", i)}
				sent[r.URL] = at
				rs = append(rs, r)
			}
			rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
			for i, r := range rs {
				r.Seq = uint64(i)
				if err := w.Add(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			checkTimeOrder(t, filepath.Join(dir, ResultsFile), tc.n, sent)
			left, _ := filepath.Glob(filepath.Join(dir, "*"))
			if len(left) != 1 {
				t.Errorf("files left: %v", left)
			}
		})
	}
}

// checkTimeOrder reads a results.bin and checks it has n results in
// nondecreasing Timestamp, Seq 0…n-1, each with its send time.
func checkTimeOrder(t *testing.T, path string, n int, sent map[string]time.Time) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := vegeta.NewDecoder(f)
	var prev time.Time
	i := 0
	for ; ; i++ {
		var r vegeta.Result
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		if r.Seq != uint64(i) {
			t.Fatalf("result %d has Seq %d", i, r.Seq)
		}
		if r.Timestamp.Before(prev) {
			t.Fatalf("result %d sent %v, before the one above it (%v)", i, r.Timestamp, prev)
		}
		if want, ok := sent[r.URL]; sent != nil && (!ok || !want.Equal(r.Timestamp)) {
			t.Fatalf("result %d: %s at %v, want %v", i, r.URL, r.Timestamp, want)
		}
		prev = r.Timestamp
	}
	if i != n {
		t.Errorf("%d results, want %d", i, n)
	}
}

// BenchmarkResultsWriter: 200,000 results in finishing order (four spilled
// chunks and a merge) written to results.bin in send-time order.
func BenchmarkResultsWriter(b *testing.B) {
	const n = 200_000
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	rs := make([]*vegeta.Result, n)
	for i := range rs {
		rs[i] = &vegeta.Result{Attack: "run", Code: 200, Timestamp: t0.Add(time.Duration(i) * time.Millisecond),
			Latency: time.Duration(rng.IntN(3000)) * time.Millisecond, Method: "POST", URL: "http://127.0.0.1:8081/messaging/v1/send"}
	}
	rng.Shuffle(n, func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Create(filepath.Join(b.TempDir(), ResultsFile))
		if err != nil {
			b.Fatal(err)
		}
		w := NewResultsWriter(f)
		for _, r := range rs {
			if err := w.Add(r); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
