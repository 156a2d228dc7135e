package reports

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestErrorsTableBounded: errors of more kinds than maxErrorRows are counted
// in one "other messages" row, so the table's memory is bounded.
func TestErrorsTableBounded(t *testing.T) {
	var s Summary
	for i := range 3 * maxErrorRows {
		s.addOp(&rundir.Attempt{Op: "send", Code: 400, Class: "http_4xx", Sent: at(float64(i)), Error: fmt.Sprintf("bad field %c%c", 'a'+i%26, 'a'+i/26)})
	}
	rows := s.Requests.ErrorTable
	if len(rows) != maxErrorRows+1 {
		t.Fatalf("%d rows, want %d", len(rows), maxErrorRows+1)
	}
	var total int64
	for _, r := range rows {
		total += r.Count
	}
	if total != 3*maxErrorRows || s.SortedErrors()[0].Message != otherMessages {
		t.Errorf("counted %d of %d; first row %+v", total, 3*maxErrorRows, s.SortedErrors()[0])
	}
}

// opsWant is an operation's row as the test computes it from the attempts
// it wrote: requests, those with no answer (code 0), the mean of every
// latency and wait, the largest.
type opsWant struct {
	requests, censored int64
	mean, max          float64
}

// opsOracle computes each operation's row from the attempts, by the rule of
// requests.latency: an attempt with no answer counts at its wait, censored.
func opsOracle(as []rundir.Attempt) map[string]opsWant {
	sums := map[string]float64{}
	out := map[string]opsWant{}
	for _, a := range as {
		w := out[a.Op]
		w.requests++
		if a.Code == 0 {
			w.censored++
		}
		lat := max(a.Latency, 0) // a negative latency (a clock stepped back) is read as 0, as requests.latency reads it
		w.max = max(w.max, lat)
		sums[a.Op] += lat
		out[a.Op] = w
	}
	for op, w := range out {
		w.mean = math.Round(sums[op]/float64(w.requests)*1e6) / 1e6
		out[op] = w
	}
	return out
}

// checkOps compares the per-operation table of s, in Go and in
// summary.json, with want: the mean and max exact when nothing was
// censored, else null with their _at_least bounds.
func checkOps(t *testing.T, s *Summary, want map[string]opsWant) {
	t.Helper()
	if len(s.Requests.Operations) != len(want) {
		t.Fatalf("operations %+v, want %+v", s.Requests.Operations, want)
	}
	js, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Requests struct {
			Operations []map[string]any `json:"operations"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for i, f := range s.Requests.Operations {
		w, ok := want[f.Op]
		if !ok || f.Requests != w.requests || f.Censored != w.censored {
			t.Errorf("%s: %d requests, %d censored; want %+v", f.Op, f.Requests, f.Censored, w)
			continue
		}
		row := doc.Requests.Operations[i]
		for _, c := range []struct {
			name, key string
			want      float64
		}{{"mean", "latency_mean_s", w.mean}, {"max", "latency_max_s", w.max}} {
			v, lower := f.Latency(c.name)
			bound, hasBound := row[c.key+"_at_least"]
			switch {
			case math.Abs(v-c.want) > 1.5e-6 || lower != (w.censored > 0):
				t.Errorf("%s %s = %v (lower bound %v), want %v (lower bound: %d censored)", f.Op, c.name, v, lower, c.want, w.censored)
			case w.censored > 0 && (row[c.key] != nil || !hasBound || bound != v):
				t.Errorf("%s: summary.json %s %v, %s_at_least %v: want null and the bound %v", f.Op, c.key, row[c.key], c.key, bound, v)
			case w.censored == 0 && (hasBound || row[c.key] != v):
				t.Errorf("%s: summary.json %s %v (at least %v): want %v and no bound", f.Op, c.key, row[c.key], bound, v)
			}
		}
		if row["censored"] != float64(w.censored) {
			t.Errorf("%s: summary.json censored %v, want %d", f.Op, row["censored"], w.censored)
		}
	}
}

// opsAttempts adds to r, for client, answered sends, timeouts (2 s) and
// resets (1 ms), status checks that all timed out, and answered tokens.
func opsAttempts(r *run, client string, from int64, slow float64) {
	for k := range int64(40) {
		seq := from + k
		switch {
		case k%10 == 3: // a timeout: 2 s waited, no answer
			r.send(seq, client, float64(k), 0, 2).Error = "context deadline exceeded"
		case k%10 == 7: // a reset after 1 ms: no answer, not a fast one
			a := r.send(seq, client, float64(k), 0, 0.001)
			a.Class, a.Error = rundir.ClassReset, "connection reset by peer"
		default:
			r.send(seq, client, float64(k), 202, slow+0.001*float64(k%9))
		}
	}
	for k := range 3 { // the status checks: every one timed out
		r.attempts = append(r.attempts, rundir.Attempt{Op: "check_status", API: r.meta.API, Client: client, Sent: at(50 + float64(k)),
			Code: 0, Latency: 1 + 0.5*float64(k), Outcome: rundir.OutcomeUnknown, Class: rundir.ClassTimeout, Error: "timeout"})
	}
	r.attempts = append(r.attempts, rundir.Attempt{Op: "token", API: r.meta.API, Client: client, Sent: at(55), Code: 200,
		Latency: 0.004 + slow, Class: rundir.ClassOK})
}

// TestOpsTableCensorsTheUnanswered: the per-operation table ranks an
// attempt with no answer (code 0: a timeout, a reset) as requests.latency
// does — counted in `censored`, its wait in the mean and max, which are then
// only lower bounds (null, with latency_mean_s_at_least and
// latency_max_s_at_least) — never a timeout read as a latency of 2 s, nor a
// reset as a 1 ms answer. An operation whose every attempt timed out has
// only the bounds; one with every attempt answered keeps its exact figures.
// The same whatever order the attempts are read in.
func TestOpsTableCensorsTheUnanswered(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "https://messaging.example"
	opsAttempts(r, "c1", 1, 0.05)
	want := opsOracle(r.attempts)
	if w := want["send"]; w.censored != 8 || want["check_status"].censored != 3 || want["token"].censored != 0 {
		t.Fatalf("the test's attempts: %+v", want)
	}
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	checkOps(t, s, want)
	slices.Reverse(r.attempts)
	s, err = Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	checkOps(t, s, want)
}

// TestOpsTableReadsANegativeLatencyAsZero: a latency below zero (a record
// whose clock stepped back) counts as 0 in the per-operation mean, as in
// requests.latency: the send row's mean is requests.latency.mean on a run
// of sends alone, never lowered by it.
func TestOpsTableReadsANegativeLatencyAsZero(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	for k := range int64(10) {
		r.send(k+1, "c1", float64(k), 202, 0.1)
	}
	r.attempts[4].Latency = -3
	s, err := Analyze(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	checkOps(t, s, opsOracle(r.attempts))
	if f := s.Requests.Operations[0]; f.Op != "send" || f.LatencyMean != s.Requests.Latency.Mean || f.LatencyMean != 0.09 {
		t.Errorf("send mean %v, requests.latency.mean %v: want both 0.09 (nine of 0.1 s and one read as 0)", f.LatencyMean, s.Requests.Latency.Mean)
	}
}

// TestMergedOpsTableCensors: merging two shards, each with timeouts and
// resets, gives the per-operation table of their union: the censored
// counts added, the bounds over every attempt of both.
func TestMergedOpsTableCensors(t *testing.T) {
	var dirs []string
	var all []rundir.Attempt
	for i, c := range []string{"c0", "c1"} {
		r := newRun(rundir.APIMessaging)
		r.meta.ID = "sharded-ops"
		r.meta.Target = "https://messaging.example"
		sh, err := rundir.NewShard(i, 2, 2)
		if err != nil {
			t.Fatal(err)
		}
		r.meta.Shard, r.meta.Clients = &sh, []string{c}
		r.meta.Start = t0.Add(time.Duration(i) * 10 * time.Millisecond)
		sub := newRun(rundir.APIMessaging)
		opsAttempts(sub, c, 0, 0.05+0.2*float64(i)) // shard 1 answers slower
		for j, a := range sub.attempts {
			if a.Op == "send" { // shard i owns the sequences i+1, i+3, …
				a.Seq = int64(i) + 1 + 2*int64(j)
				if !sh.Owns(a.Seq) {
					t.Fatalf("shard %d does not own %d", i, a.Seq)
				}
				if a.TxID != "" {
					a.TxID = "tx-" + itoa(a.Seq)
				}
			}
			r.attempts = append(r.attempts, a)
		}
		all = append(all, r.attempts...)
		dirs = append(dirs, r.write(t))
	}
	s, err := Merge(filepath.Join(t.TempDir(), "merged"), dirs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Run.Merged == nil || s.Run.Merged.Shards != 2 {
		t.Fatalf("run.merged %+v, want 2 shards", s.Run.Merged)
	}
	want := opsOracle(all)
	if want["send"].censored != 16 || want["check_status"].censored != 6 {
		t.Fatalf("the test's attempts: %+v", want)
	}
	checkOps(t, s, want)
}
