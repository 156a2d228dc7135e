package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// writeTruthJSONL writes t as the simulator streams it: the rate limit, the
// windows, each message's callbacks right before the message (those of no
// message first), the end record.
func writeTruthJSONL(t *testing.T, path string, tr *rundir.Truth, end bool) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	put := func(rec rundir.TruthRecord) {
		if err := enc.Encode(rec); err != nil {
			t.Fatal(err)
		}
	}
	put(rundir.TruthRecord{Type: rundir.TruthRecRateLimit, RateLimit: &tr.RateLimit})
	for i := range tr.Windows {
		put(rundir.TruthRecord{Type: rundir.TruthRecWindow, Window: &tr.Windows[i]})
	}
	byID := map[string][]int{}
	for i, c := range tr.Callbacks {
		byID[c.ID] = append(byID[c.ID], i)
	}
	ids := map[string]bool{}
	for _, m := range tr.Messages {
		ids[m.ID] = true
	}
	for i := range tr.Callbacks {
		if !ids[tr.Callbacks[i].ID] {
			put(rundir.TruthRecord{Type: rundir.TruthRecCallback, Callback: &tr.Callbacks[i]})
		}
	}
	for i := range tr.Messages {
		for _, j := range byID[tr.Messages[i].ID] {
			put(rundir.TruthRecord{Type: rundir.TruthRecCallback, Callback: &tr.Callbacks[j]})
		}
		byID[tr.Messages[i].ID] = nil // a second message of one id: its calls went with the first
		put(rundir.TruthRecord{Type: rundir.TruthRecMessage, Message: &tr.Messages[i]})
	}
	if end {
		put(rundir.TruthRecord{Type: rundir.TruthRecEnd, Truncated: tr.Truncated})
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// streamedCopy copies the run at dir with its truth.json rewritten as
// truth.jsonl (end record or not), and no truth.json.
func streamedCopy(t *testing.T, dir string, end bool) string {
	t.Helper()
	out := t.TempDir()
	for _, f := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.EventsFile} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil {
			if err := os.WriteFile(filepath.Join(out, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.TruthFile))
	if err != nil {
		t.Fatal(err)
	}
	var tr rundir.Truth
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	writeTruthJSONL(t, filepath.Join(out, rundir.TruthStreamFile), &tr, end)
	return out
}

// TestTruthStreamSameFigures is the differential test of truth.jsonl: on
// every run in testdata and the hand-built ones with a truth, the summary
// from the streamed truth is the summary from truth.json, the truth section
// first of all.
func TestTruthStreamSameFigures(t *testing.T) {
	compared := 0
	for name, dir := range metamorphicRuns(t) {
		if _, err := os.Stat(filepath.Join(dir, rundir.TruthFile)); err != nil {
			continue
		}
		compared++
		t.Run(name, func(t *testing.T) {
			whole := analyzed(t, dir)
			streamed := analyzed(t, streamedCopy(t, dir, true))
			if whole.Truth == nil {
				t.Fatal("no truth section from truth.json")
			}
			w, _ := json.Marshal(whole)
			s, _ := json.Marshal(streamed)
			if !bytes.Equal(w, s) {
				wt, _ := json.MarshalIndent(whole.Truth, "", " ")
				st, _ := json.MarshalIndent(streamed.Truth, "", " ")
				t.Fatalf("summary from truth.jsonl differs from truth.json's\ntruth.json:  %s\ntruth.jsonl: %s", wt, st)
			}
		})
	}
	if compared < 5 {
		t.Fatalf("only %d runs with a truth compared", compared)
	}
}

// TestTruthStreamUnfinished: a truth.jsonl with no end record (the simulator
// never closed) is not judged as if whole: in a run that ended it is a torn
// raw file (error), in an interrupted one the truth is not compared.
func TestTruthStreamUnfinished(t *testing.T) {
	src := filepath.Join("testdata", "runs", "sim-ex-fixed")
	dir := streamedCopy(t, src, false)
	_, err := Analyze(dir)
	if err == nil || !errors.Is(err, errBadRun) || !strings.Contains(err.Error(), "end record") {
		t.Fatalf("ended run with an unfinished truth.jsonl: err %v, want a bad run naming the missing end record", err)
	}
	var meta map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	meta["interrupted"] = true
	b, _ = json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(dir, rundir.MetaFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Truth != nil {
		t.Fatalf("interrupted run: the unfinished truth was compared: %+v", s.Truth)
	}
}

// TestTruthStreamMerged: shards whose simulators streamed their truth
// (truth.jsonl) merge into the same figures as the run whole.
func TestTruthStreamMerged(t *testing.T) {
	dir := filepath.Join("testdata", "runs", "sim-ex-token-bucket")
	orig := analyzed(t, dir)
	shards := splitRun(t, dir, 3)
	for _, sh := range shards {
		b, err := os.ReadFile(filepath.Join(sh, rundir.TruthFile))
		if err != nil {
			t.Fatal(err)
		}
		var tr rundir.Truth
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		writeTruthJSONL(t, filepath.Join(sh, rundir.TruthStreamFile), &tr, true)
		if err := os.Remove(filepath.Join(sh, rundir.TruthFile)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "merged")
	if _, err := Merge(out, shards, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, rundir.TruthStreamFile)); err != nil {
		t.Fatalf("merged run has no %s: %v", rundir.TruthStreamFile, err)
	}
	merged := analyzed(t, out)
	if merged.Truth == nil {
		t.Fatal("merged run has no truth section")
	}
	sameFigures(t, "merging shards with truth.jsonl", orig, merged, "run.merged")
}

// TestBoundedTruthAgree: a run with a ground truth whose messages are tagged
// (every sim run in testdata; reorder with incoming replies too) is analysed in passes, the truth joined to the messages by
// sequence through spills (truthbounded.go), and its summary.json is the
// one-pass analysis's to the byte — with the spills held in memory and with
// them sorted in runs on disk.
func TestBoundedTruthAgree(t *testing.T) {
	runs, err := os.ReadDir(filepath.Join("testdata", "runs"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(n int) { spillChunk = n }(spillChunk)
	for _, e := range runs {
		dir := filepath.Join("testdata", "runs", e.Name())
		if !rundir.HasTruth(os.DirFS(dir)) {
			continue
		}
		if !truthTagged(os.DirFS(dir)) {
			// Messages joined by the id the service answered (sample): the
			// join needs a map of the ids, the run is read in one pass.
			if strings.HasPrefix(e.Name(), "sim-") || twoPasses(os.DirFS(dir)) {
				t.Errorf("%s: tagged %v, analysed in passes %v", e.Name(), truthTagged(os.DirFS(dir)), twoPasses(os.DirFS(dir)))
			}
			continue
		}
		if _, err := countSeqs(os.DirFS(dir)); !twoPasses(os.DirFS(dir)) || err != nil {
			t.Errorf("%s: a run with a truth is not analysed in passes (census: %v)", e.Name(), err)
			continue
		}
		once, err := analyzeOnce(os.DirFS(dir), dir, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if once.s.Truth == nil {
			t.Fatalf("%s: no truth compared", e.Name())
		}
		want := marshalled(t, once.s)
		for _, chunk := range []int{1 << 17, 16} {
			spillChunk = chunk
			got, err := AnalyzeFS(os.DirFS(dir), dir)
			if err != nil {
				t.Fatal(err)
			}
			if g := marshalled(t, got); !bytes.Equal(g, want) {
				t.Errorf("%s (spill chunk %d): summary.json differs from the one-pass analysis's: %s", e.Name(), chunk, firstDiff(g, want))
			}
		}
	}
}

// genTruthFailover is genFailover(n) with its ground truth, each message
// tagged as the embedded simulator tags it ("<run>.<seq>"): a call of each
// callback the sink logged, every 13th answered by no one (the sink may or
// may not have logged it), every 97th message re-accepted under a second
// id whose end also arrived (delivered twice), and a true message of a
// sequence the attacker never sent.
func genTruthFailover(n int) *run {
	r := genFailover(n)
	r.truth = &rundir.Truth{RateLimit: rundir.TruthRateLimit{Requests: 100, Window: rundir.Duration(time.Minute), Algorithm: "sliding"}}
	// Every 89th message's calls started 30 s after they were due: the
	// simulator fell behind (simlag.go), and those of the last 10 s of
	// sends are past the deadline only because of it; every other call
	// started a few milliseconds after its due time.
	const behind = 30 * time.Second
	for i := range r.events {
		if e := &r.events[i]; e.Corr.Seq%89 == 0 {
			e.ReceivedAt = e.ReceivedAt.Add(behind)
		}
	}
	slices.SortStableFunc(r.events, func(x, y rundir.Event) int { return x.ReceivedAt.Compare(y.ReceivedAt) })
	bySeq := map[int64][]rundir.Event{}
	for _, e := range r.events {
		bySeq[e.Corr.Seq] = append(bySeq[e.Corr.Seq], e)
	}
	add := func(seq int64, id string, evs []rundir.Event) {
		tm := rundir.TruthMessage{API: rundir.APIMessaging, ID: id, ExternalID: r.meta.ID + "." + itoa(seq), Client: "c1", AcceptedAt: at(float64(seq) / 100), Sends: 1}
		for i, e := range evs {
			tm.Steps = append(tm.Steps, rundir.TruthStep{Channel: e.Corr.Channel, State: e.Corr.State, Delay: rundir.Duration(e.ReceivedAt.Sub(tm.AcceptedAt))})
			cb := rundir.TruthCallback{ID: id, Kind: rundir.KindCallback, State: e.Corr.State, Channel: e.Corr.Channel, Action: rundir.CallbackSent,
				Attempt: 1, At: e.ReceivedAt.Add(-time.Millisecond), Done: e.ReceivedAt.Add(time.Millisecond), Status: 200}
			cb.Due = cb.At.Add(-time.Duration(1+seq%4) * time.Millisecond)
			if seq%89 == 0 {
				cb.Due = cb.Due.Add(-behind)
			}
			if (int(seq)+i)%13 == 0 {
				cb.Status = 0
			}
			r.truth.Callbacks = append(r.truth.Callbacks, cb)
			tm.Final = e.Corr.State
		}
		r.truth.Messages = append(r.truth.Messages, tm)
	}
	for seq := int64(1); seq <= int64(n); seq++ {
		add(seq, "tx-"+itoa(seq), bySeq[seq])
		if seq%97 == 0 && len(bySeq[seq]) > 0 {
			add(seq, "tx-again-"+itoa(seq), bySeq[seq][len(bySeq[seq])-1:])
		}
	}
	add(int64(n)+5, "tx-unsent", nil)
	return r
}

// TestBoundedTruthGenerated: a generated run with a truth (failover steps,
// unanswered calls, re-accepted messages, a true message never sent) is
// analysed in passes with its summary.json the one-pass analysis's to the
// byte, its spills in memory or on disk.
func TestBoundedTruthGenerated(t *testing.T) {
	dir := genTruthFailover(3_000).write(t)
	if _, err := countSeqs(os.DirFS(dir)); !twoPasses(os.DirFS(dir)) || err != nil {
		t.Fatalf("a run with a tagged truth is not analysed in passes (census: %v)", err)
	}
	once, err := analyzeOnce(os.DirFS(dir), dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := once.s.Truth
	if tr == nil || tr.ExpectedReaccepted == 0 || tr.ExpectedDuplicateDeliveriesMax == 0 || len(tr.FailoverSteps) == 0 || tr.Unanswered == 0 || tr.ExpectedLost == 0 ||
		tr.SimLag == nil || tr.SimLag.Messages == 0 {
		t.Fatalf("the generated truth does not exercise the join: %+v", tr)
	}
	want := marshalled(t, once.s)
	defer func(n int) { spillChunk = n }(spillChunk)
	for _, chunk := range []int{1 << 17, 64} {
		spillChunk = chunk
		got, err := AnalyzeFS(os.DirFS(dir), dir)
		if err != nil {
			t.Fatal(err)
		}
		if g := marshalled(t, got); !bytes.Equal(g, want) {
			t.Errorf("spill chunk %d: summary.json differs from the one-pass analysis's: %s", chunk, firstDiff(g, want))
		}
	}
}
