package render

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// t0 is the start of every hand-built run.
var t0 = time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)

// run is a hand-built run directory.
type run struct {
	meta     rundir.Meta
	attempts []rundir.Attempt
	events   []rundir.Event
	truth    *rundir.Truth
	// ownPlan keeps meta.Planned as the test set it; otherwise write plans
	// what the run sends (a run that held its plan: the load is not judged).
	ownPlan bool
}

func newRun(api string) *run {
	return &run{meta: rundir.Meta{
		ID: "test-run", Scenario: "hand-built", API: api, Target: "embedded", Version: "test",
		Start: t0, AttackEnd: t0.Add(60 * time.Second), End: t0.Add(70 * time.Second),
		Clients:  []string{"c1"},
		Planned:  rundir.Plan{Profile: "constant", Rate: 1, Requests: 60, Duration: rundir.Duration(60 * time.Second)},
		Limit:    rundir.Limit{Requests: 100, Window: rundir.Duration(time.Minute), Mode: "exceed"},
		Delivery: rundir.Delivery{Via: "sink", Grace: rundir.Duration(10 * time.Second)},
	}}
}

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

// send adds a first attempt of message seq sent at sec with the given code.
func (r *run) send(seq int64, client string, sec float64, code int, latency float64) *rundir.Attempt {
	a := rundir.Attempt{Seq: seq, API: r.meta.API, Op: "send", Client: client, Attempt: 1,
		Intended: at(sec), Sent: at(sec), FirstSent: at(sec), Code: code, Latency: latency,
		Outcome: rundir.OutcomeOK, Class: "ok"}
	if code == 0 {
		a.Outcome, a.Class = rundir.OutcomeUnknown, "timeout"
	} else if code >= 300 {
		a.Outcome, a.Class = rundir.Classify(code, nil)
	}
	if code >= 200 && code < 300 {
		if r.meta.API == rundir.APINotify {
			a.NotificationID = "n-" + itoa(seq)
		} else {
			a.TxID = "tx-" + itoa(seq)
		}
	}
	r.attempts = append(r.attempts, a)
	return &r.attempts[len(r.attempts)-1]
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// callback adds a sink event for message seq at sec.
func (r *run) callback(seq int64, sec float64, state, channel string, terminal, dup bool) {
	var first time.Time
	for _, a := range r.attempts {
		if a.Seq == seq && a.Attempt == 1 {
			first = a.FirstSent
		}
	}
	kind := rundir.KindCallback
	if r.meta.API == rundir.APINotify {
		kind = rundir.KindWebhook
	}
	r.events = append(r.events, rundir.Event{Kind: kind, Route: "/callback", ReceivedAt: at(sec), API: r.meta.API,
		Corr: &rundir.Correlation{Key: "tx-" + itoa(seq), Run: r.meta.ID, Seq: seq, FirstSent: first, State: state,
			Channel: channel, Terminal: terminal, Matched: true, Duplicate: dup}})
}

func (r *run) write(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if !r.ownPlan {
		r.heldPlan()
	}
	writeJSON(t, filepath.Join(dir, rundir.MetaFile), r.meta)
	writeJSONL(t, filepath.Join(dir, rundir.AttemptsFile), r.attempts)
	writeJSONL(t, filepath.Join(dir, rundir.EventsFile), r.events)
	writeResults(t, filepath.Join(dir, rundir.ResultsFile), r.attempts)
	if r.truth != nil {
		writeJSON(t, filepath.Join(dir, rundir.TruthFile), r.truth)
	}
	return dir
}

// writeResults writes results.bin as the attacker does: one vegeta result
// per attempt, in send-time order, numbered from 0 (the merge requires one).
func writeResults(t testing.TB, p string, as []rundir.Attempt) {
	t.Helper()
	sorted := slices.Clone(as)
	slices.SortStableFunc(sorted, func(a, b rundir.Attempt) int { return a.Sent.Compare(b.Sent) })
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := vegeta.NewEncoder(w)
	for i, a := range sorted {
		r := vegeta.Result{Seq: uint64(i), Code: uint16(a.Code), Timestamp: a.Sent, Latency: time.Duration(a.Latency * float64(time.Second))}
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// heldPlan makes meta.Planned what the run sends: its messages (first
// attempts), at the rate between its first and last (1/s for one or none).
func (r *run) heldPlan() {
	var n int64
	var first, last time.Time
	for _, a := range r.attempts {
		if a.Op != "send" || a.Attempt > 1 || a.Probe != "" {
			continue
		}
		n++
		if first.IsZero() || a.Sent.Before(first) {
			first = a.Sent
		}
		if a.Sent.After(last) {
			last = a.Sent
		}
	}
	r.meta.Planned.Requests, r.meta.Planned.Rate = n, 1
	if d := last.Sub(first).Seconds(); n > 1 && d > 0 {
		r.meta.Planned.Rate = float64(n-1) / d
	}
}

func writeJSON(t testing.TB, p string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSONL[T any](t testing.TB, p string, vs []T) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
}

// verdictFail is reports' fail verdict (summary.json `verdict`), which package
// reports does not export.
const verdictFail = "fail"
