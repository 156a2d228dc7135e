package attack

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
			f, err := os.Create(filepath.Join(dir, resultsFile))
			if err != nil {
				t.Fatal(err)
			}
			w := newResultsWriter(f)
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
			checkTimeOrder(t, filepath.Join(dir, resultsFile), tc.n, sent)
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

// BenchmarkResultsWriter: 200,000 results shuffled over 3 s of latency (the
// worst case: sorted runs of about two heapfuls each, then a merge) written to
// results.bin in send-time order.
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
		f, err := os.Create(filepath.Join(b.TempDir(), resultsFile))
		if err != nil {
			b.Fatal(err)
		}
		w := newResultsWriter(f)
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

// TestResultsWriterIsStableSort: results.bin is byte for byte the stable sort
// by Timestamp of the results in the order they came, numbered in that order —
// what sorting them all at once and encoding them gives — whatever the heap's
// size: nearly sorted input with stragglers far behind (one sorted run, or
// several), fully shuffled input, and many equal Timestamps (the arrival order
// decides among them, across sorted runs too).
func TestResultsWriterIsStableSort(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	type input struct {
		name string
		rs   func(rng *rand.Rand) []*vegeta.Result
	}
	mk := func(i int, at time.Time) *vegeta.Result {
		return &vegeta.Result{Attack: "run", Code: 200, Timestamp: at, URL: fmt.Sprintf("http://x/%d", i),
			Headers: map[string][]string{"Date": {fmt.Sprint(i / 7)}}, Body: []byte(fmt.Sprintf(`{"n":%d}`, i))}
	}
	inputs := []input{
		{"in order", func(*rand.Rand) []*vegeta.Result {
			var rs []*vegeta.Result
			for i := range 3000 {
				rs = append(rs, mk(i, t0.Add(time.Duration(i)*time.Microsecond)))
			}
			return rs
		}},
		{"finishing order with stragglers", func(rng *rand.Rand) []*vegeta.Result {
			// Sent every 200 µs, finishing after 0–2 ms; one in 50 after 0–3 s.
			type fin struct {
				r   *vegeta.Result
				end time.Duration
			}
			var fs []fin
			for i := range 3000 {
				sent := time.Duration(i) * 200 * time.Microsecond
				lat := time.Duration(rng.IntN(2000)) * time.Microsecond
				if rng.IntN(50) == 0 {
					lat = time.Duration(rng.IntN(3000)) * time.Millisecond
				}
				fs = append(fs, fin{mk(i, t0.Add(sent)), sent + lat})
			}
			slices.SortStableFunc(fs, func(a, b fin) int { return cmp.Compare(a.end, b.end) })
			var rs []*vegeta.Result
			for _, f := range fs {
				rs = append(rs, f.r)
			}
			return rs
		}},
		{"shuffled with equal times", func(rng *rand.Rand) []*vegeta.Result {
			var rs []*vegeta.Result
			for i := range 3000 {
				rs = append(rs, mk(i, t0.Add(time.Duration(rng.IntN(40))*time.Millisecond)))
			}
			rng.Shuffle(len(rs), func(i, j int) { rs[i], rs[j] = rs[j], rs[i] })
			return rs
		}},
	}
	for _, in := range inputs {
		for _, chunk := range []int{1, 7, 100, 1000, sortChunkResults, 1 << 13} {
			t.Run(fmt.Sprintf("%s/heap %d", in.name, chunk), func(t *testing.T) {
				rs := in.rs(rand.New(rand.NewPCG(3, uint64(chunk))))
				for i, r := range rs {
					r.Seq = uint64(i) + 1000 // the writer numbers them anew
				}
				// The reference: every result sorted at once, stably, then encoded.
				sorted := slices.Clone(rs)
				slices.SortStableFunc(sorted, byTime)
				var want bytes.Buffer
				enc := vegeta.NewEncoder(&want)
				for i, r := range sorted {
					out := *r
					out.Seq = uint64(i)
					if err := enc.Encode(&out); err != nil {
						t.Fatal(err)
					}
				}

				dir := t.TempDir()
				// Write only, as NewRecorder opens it: the merge reads run 0 back.
				f, err := os.OpenFile(filepath.Join(dir, resultsFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				w := newResultsWriter(f)
				w.chunk = chunk
				for _, r := range rs {
					if err := w.Add(r); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(dir, resultsFile))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want.Bytes()) {
					t.Fatalf("results.bin differs from the stable sort (%d bytes, want %d; %d sorted runs)", len(got), want.Len(), len(w.runs)+1)
				}
				if chunk == 1<<13 && in.name != "shuffled with equal times" && len(w.runs) != 0 {
					t.Errorf("%d sorted runs beside results.bin, want none (a heap of 8192 spans every straggler: 3000 results)", len(w.runs))
				}
				if chunk <= 100 && in.name != "in order" && len(w.runs) == 0 {
					t.Errorf("no second sorted run: the merge went untested")
				}
				if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 1 {
					t.Errorf("files left: %v", left)
				}
				if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
					t.Errorf("files left: %v", left)
				}
			})
		}
	}
}

// BenchmarkResultsWriterFinishingOrder: 200,000 results as a run at 5000/s
// gives them — in the order they finish, 0–2 ms after their send, one in a
// thousand 0–3 s late — with a response's headers and body each: what a run
// holds in memory and writes.
func BenchmarkResultsWriterFinishingOrder(b *testing.B) {
	const n = 200_000
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	type fin struct {
		r   *vegeta.Result
		end time.Duration
	}
	fs := make([]fin, n)
	for i := range fs {
		sent := time.Duration(i) * 200 * time.Microsecond
		lat := time.Duration(rng.IntN(2000)) * time.Microsecond
		if rng.IntN(1000) == 0 {
			lat = time.Duration(rng.IntN(3000)) * time.Millisecond
		}
		fs[i] = fin{&vegeta.Result{Attack: "run", Code: 200, Timestamp: t0.Add(sent), Latency: lat, BytesIn: 101, BytesOut: 265,
			Method: "POST", URL: "http://127.0.0.1:8081/messaging/v1/send",
			Body:    []byte(fmt.Sprintf(`{"txId":"00000000-0000-0000-0000-%012d","state":"ACCEPTED","updatedAt":"2026-01-01T00:00:00Z"}`, i)),
			Headers: map[string][]string{"Content-Type": {"application/json"}, "Date": {t0.Add(sent).Format(time.RFC1123)}, "Content-Length": {"101"}}}, sent + lat}
	}
	slices.SortStableFunc(fs, func(a, b fin) int { return cmp.Compare(a.end, b.end) })
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Create(filepath.Join(b.TempDir(), resultsFile))
		if err != nil {
			b.Fatal(err)
		}
		w := newResultsWriter(f)
		for _, x := range fs {
			if err := w.Add(x.r); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
