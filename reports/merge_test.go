package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// unionRank is the oracle's (hist_test.go) nearest-rank percentile q of
// the union, rounded as summary.json rounds.
func unionRank(vs []float64, q int) float64 { return round6(nearestRank(vs, q)) }

// shardedRun builds the directories of a run split among three shards by
// clients, with known latencies that differ from shard to shard (so that an
// average of the shards' percentiles is not the percentile of the union), and
// returns them with every request latency and delivery latency of the union.
func shardedRun(t *testing.T) (dirs []string, reqLat, delLat []float64) {
	const shards, clients, messages = 3, 3, 300
	ids := []string{"c0", "c1", "c2"}
	runs := make([]*run, shards)
	for i := range runs {
		r := newRun(rundir.APIMessaging)
		r.meta.ID = "sharded-run"
		r.meta.Target = "https://messaging.example" // no simulator: no truth.json
		sh, err := rundir.NewShard(i, shards, clients)
		if err != nil {
			t.Fatal(err)
		}
		r.meta.Shard = &sh
		r.meta.Clients = []string{ids[i]}
		r.meta.Planned.Requests = sh.Messages(messages)
		r.meta.Planned.Rate = 5 * sh.Share()
		// Thresholds are evaluated once, on the merged figures.
		r.meta.Thresholds = []string{"delivery.latency.p95 < 3s", "requests.latency.p99 < 1s"}
		r.meta.Start = t0.Add(time.Duration(i) * 10 * time.Millisecond)
		r.meta.AttackEnd = t0.Add(60*time.Second + time.Duration(i)*time.Second)
		r.meta.End = r.meta.AttackEnd.Add(10 * time.Second)
		runs[i] = r
	}
	for seq := int64(1); seq <= messages; seq++ {
		i := int((seq - 1) % shards) // by clients: client (seq-1)%3 is in shard (seq-1)%3
		r := runs[i]
		if !r.meta.Shard.Owns(seq) {
			t.Fatalf("seq %d: shard %d does not own it", seq, i)
		}
		sent := float64(seq) * 0.2
		// Shard 0 answers fast, shard 1 slower, shard 2 slow, each with a
		// spread; delivery likewise.
		lat := 0.001*float64(i*i*40+1) + 0.0001*float64(seq%17)
		r.send(seq, ids[i], sent, 200, lat)
		reqLat = append(reqLat, lat)
		d := 0.5*float64(i*i+1) + 0.01*float64(seq%23)
		r.callback(seq, sent+d, "DELIVERED", "sms", true, false)
		delLat = append(delLat, round6(d))
	}
	// One malformed call, untagged, that every shard copied from the one
	// sink they all read: it counts once.
	for _, r := range runs {
		r.events = append(r.events, rundir.Event{Kind: rundir.KindMalformed, Route: "/callback", ReceivedAt: at(30), Reason: "state: not in enum"})
	}
	// Shard 0 also copied a tagged event of shard 1's message 2: it is shard
	// 1's to give, so the merge takes it once.
	runs[0].events = append(runs[0].events, runs[1].events[0])
	for _, r := range runs {
		dirs = append(dirs, r.write(t))
	}
	return dirs, reqLat, delLat
}

// TestMergeExactPercentiles: the merged percentiles are the nearest-rank
// values of the union of the shards' latencies (not an average of the
// shards'), counts add, and thresholds are judged once on the merged figures.
func TestMergeExactPercentiles(t *testing.T) {
	dirs, reqLat, delLat := shardedRun(t)
	var avgP95 float64
	for _, d := range dirs {
		s, err := conclude(d)
		if err != nil {
			t.Fatal(err)
		}
		if s.Run.Shard == nil {
			t.Fatalf("%s: summary names no shard", d)
		}
		avgP95 += s.Delivery.Latency.P95 / float64(len(dirs))
	}
	out := filepath.Join(t.TempDir(), "merged")
	// Shards given out of order: the merge orders them.
	s, err := Merge(out, []string{dirs[2], dirs[0], dirs[1]}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  percentiles
		vs   []float64
	}{
		{"requests.latency", s.Requests.Latency, reqLat},
		{"delivery.latency", s.Delivery.Latency, delLat},
	} {
		if c.got.Count != int64(len(c.vs)) {
			t.Errorf("%s: count %d, want %d", c.name, c.got.Count, len(c.vs))
		}
		for _, q := range []struct {
			p   int
			got float64
		}{{50, c.got.P50}, {95, c.got.P95}, {99, c.got.P99}, {100, c.got.Max}} {
			if want := unionRank(c.vs, q.p); q.got != want {
				t.Errorf("%s p%d = %v, want the union's nearest rank %v", c.name, q.p, q.got, want)
			}
		}
	}
	if want := unionRank(delLat, 95); math.Abs(avgP95-want) < 1e-3 {
		t.Fatalf("the test data do not tell exact from averaged: mean of the shards' p95 %v, union's %v", avgP95, want)
	}
	if s.Requests.Total != 300 || s.Delivery.Expected != 300 || s.Delivery.Received != 300 || s.Delivery.Lost != 0 {
		t.Errorf("counts: total %d expected %d received %d lost %d, want 300 300 300 0", s.Requests.Total, s.Delivery.Expected, s.Delivery.Received, s.Delivery.Lost)
	}
	if s.Delivery.Malformed != 1 || s.Delivery.Duplicates != 0 || s.Delivery.Unmatched != 0 {
		t.Errorf("malformed %d duplicates %d unmatched %d, want 1 0 0 (an event every shard copied counts once)", s.Delivery.Malformed, s.Delivery.Duplicates, s.Delivery.Unmatched)
	}
	if n := len(s.RateLimit.Clients); n != 3 {
		t.Errorf("rate_limit.clients: %d, want 3", n)
	}
	if s.Requests.PlannedCount != 300 {
		t.Errorf("planned %d, want the shards' plans added: 300", s.Requests.PlannedCount)
	}
	m := s.Run.Merged
	if m == nil || m.Shards != 3 || !slices.Equal(m.Indexes, []int{0, 1, 2}) || len(m.Missing) != 0 {
		t.Fatalf("run.merged = %+v, want 3 shards, 0 1 2, none missing", m)
	}
	if s.Run.Shard != nil {
		t.Errorf("the merged run names a shard: %+v", s.Run.Shard)
	}
	if s.Run.Start != ts(t0) {
		t.Errorf("start %s, want the first shard's %s", s.Run.Start, ts(t0))
	}
	p95 := unionRank(delLat, 95)
	for _, th := range s.Thresholds {
		if th.Expr == "delivery.latency.p95 < 3s" && (th.Value != p95 || th.OK != (p95 < 3)) {
			t.Errorf("threshold %s: value %v ok %v, want the merged p95 %v", th.Expr, th.Value, th.OK, p95)
		}
	}

	// The merged raw files make the same summary again (msgload report OUT).
	before, err := s.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conclude(out); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(out, rundir.SummaryFile))
	if !bytes.Equal(before, after) {
		t.Errorf("msgload report of the merged directory changes summary.json")
	}
}

// TestMergeRefuses: directories of two runs, or one shard twice, are not
// merged; a missing shard makes the merged run incomplete.
func TestMergeRefuses(t *testing.T) {
	dirs, _, _ := shardedRun(t)
	out := filepath.Join(t.TempDir(), "m")
	if _, err := Merge(out, []string{dirs[0], dirs[0]}, MergeOptions{}); err == nil {
		t.Error("one shard twice: merged")
	}
	other := newRun(rundir.APIMessaging)
	sh, _ := rundir.NewShard(1, 3, 3)
	other.meta.ID, other.meta.Shard = "another-run", &sh
	if _, err := Merge(out, []string{dirs[0], other.write(t)}, MergeOptions{}); err == nil {
		t.Error("shards of two runs: merged")
	}
	if _, err := Merge(out, []string{newRun(rundir.APIMessaging).write(t)}, MergeOptions{}); err == nil {
		t.Error("a directory that is no shard: merged")
	}
	if _, err := Merge(dirs[0], dirs, MergeOptions{}); err == nil {
		t.Error("merged into a shard's own directory")
	}
	s, err := Merge(out, dirs[:2], MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Verdict != VerdictIncomplete || !slices.Equal(s.Run.Merged.Missing, []int{2}) {
		t.Errorf("two of three shards: verdict %s, missing %v; want incomplete, [2]", s.Verdict, s.Run.Merged.Missing)
	}
	wantReason(t, s, "shard 2 of 3 is missing from the merge", "environment")
}

// TestMergeSinkLogs: with the logs of two sink replicas (a directory of their
// data directories) the merged events are the run's, each once: the same
// figures as from the shards' copies; another run's events and untagged ones
// outside the run's window are not the run's.
func TestMergeSinkLogs(t *testing.T) {
	dirs, _, _ := shardedRun(t)
	fromCopies, err := Merge(filepath.Join(t.TempDir(), "a"), dirs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replicas := t.TempDir()
	var logs [2][]rundir.Event
	n := 0
	for _, d := range dirs {
		err := rundir.ReadJSONL(filepath.Join(d, rundir.EventsFile), func(e rundir.Event) error {
			if e.Corr == nil {
				return nil // the malformed call every shard copied: added once below
			}
			if e.Corr.Seq > 0 && !shardOwner(e.Corr.Seq, d, dirs) {
				return nil // shard 0's copy of shard 1's event
			}
			logs[n%2] = append(logs[n%2], e)
			n++
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	logs[0] = append(logs[0],
		rundir.Event{Kind: rundir.KindMalformed, Route: "/callback", ReceivedAt: at(30), Reason: "state: not in enum"},
		rundir.Event{Kind: rundir.KindMalformed, Route: "/callback", ReceivedAt: at(-30), Reason: "before the run"})
	logs[1] = append(logs[1], rundir.Event{Kind: rundir.KindWebhook, Route: "/webhook", ReceivedAt: at(20), API: rundir.APINotify,
		Corr: &rundir.Correlation{Run: "another-run", Seq: 1, Matched: true, Terminal: true}})
	for i, l := range logs {
		d := filepath.Join(replicas, "msgload-sink-"+itoa(int64(i)))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		writeJSONL(t, filepath.Join(d, rundir.EventsFile), l)
	}
	fromSinks, err := Merge(filepath.Join(t.TempDir(), "b"), dirs, MergeOptions{SinkLogs: []string{replicas}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := fromCopies.Delivery, fromSinks.Delivery
	if a.Events != b.Events || a.Received != b.Received || a.Malformed != b.Malformed || a.Unmatched != b.Unmatched || a.Latency != b.Latency {
		t.Errorf("from the sink logs: events %d received %d malformed %d unmatched %d p95 %v; from the copies %d %d %d %d %v",
			b.Events, b.Received, b.Malformed, b.Unmatched, b.Latency.P95, a.Events, a.Received, a.Malformed, a.Unmatched, a.Latency.P95)
	}
	if got := fromSinks.Run.Merged.SinkLogs; !slices.Equal(got, []string{replicas}) {
		t.Errorf("run.merged.sink_logs = %v", got)
	}
}

// shardOwner reports whether dir is the directory of the shard that owns seq.
func shardOwner(seq int64, dir string, dirs []string) bool {
	for i, d := range dirs {
		if d == dir {
			sh, _ := rundir.NewShard(i, len(dirs), 3)
			return sh.Owns(seq)
		}
	}
	return false
}

// TestMergeResultsInTimeOrder: the merged results.bin holds every shard's
// results in send-time order, numbered Seq 0, 1, 2…, as vegeta plot needs.
func TestMergeResultsInTimeOrder(t *testing.T) {
	dirs, _, _ := shardedRun(t)
	total := 0
	for i, d := range dirs {
		f, err := os.Create(filepath.Join(d, rundir.ResultsFile))
		if err != nil {
			t.Fatal(err)
		}
		enc := vegeta.NewEncoder(f)
		for k := 0; k < 5+i; k++ { // shard i sends at i, i+3, i+6, … ms
			r := vegeta.Result{Seq: uint64(k), Code: 200, Timestamp: t0.Add(time.Duration(i+3*k) * time.Millisecond), Attack: "sharded-run"}
			if err := enc.Encode(&r); err != nil {
				t.Fatal(err)
			}
			total++
		}
		f.Close()
	}
	out := filepath.Join(t.TempDir(), "m")
	if _, err := Merge(out, dirs, MergeOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, rundir.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := vegeta.NewDecoder(f)
	var prev time.Time
	n := 0
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err != nil {
			break
		}
		if r.Seq != uint64(n) || r.Timestamp.Before(prev) {
			t.Fatalf("result %d: seq %d at %s after %s", n, r.Seq, r.Timestamp, prev)
		}
		prev = r.Timestamp
		n++
	}
	if n != total {
		t.Errorf("%d results merged, want %d", n, total)
	}
}

// editMeta rewrites dir's run.json through edit.
func editMeta(t *testing.T, dir string, edit func(*rundir.Meta)) {
	t.Helper()
	var m rundir.Meta
	b, err := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	edit(&m)
	writeJSON(t, filepath.Join(dir, rundir.MetaFile), m)
}

// mergeVerdict merges dirs into a new directory and returns the summary.
func mergeVerdict(t *testing.T, dirs []string) *Summary {
	t.Helper()
	s, err := Merge(filepath.Join(t.TempDir(), "m"), dirs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// wantReason fails unless some verdict reason holds every one of parts.
// wantReason wants a verdict reason whose text, with whose it is, says
// every one of parts.
func wantReason(t *testing.T, s *Summary, parts ...string) {
	t.Helper()
	for _, r := range s.Reasons {
		all := true
		for _, p := range parts {
			all = all && (strings.Contains(r.Text, p) || r.Whose == p)
		}
		if all {
			return
		}
	}
	t.Errorf("no verdict reason says %q: %+v", parts, s.Reasons)
}

// TestMergeIntactPasses: the shards the tests below spoil merge to a pass
// when intact, so that what makes them fail is the spoiling.
func TestMergeIntactPasses(t *testing.T) {
	dirs, _, _ := shardedRun(t)
	if s := mergeVerdict(t, dirs); s.Verdict != VerdictPass || len(s.Run.Merged.Problems) != 0 {
		t.Fatalf("intact shards: %s %q, problems %+v; want pass", s.Verdict, s.VerdictReasons, s.Run.Merged.Problems)
	}
}

// TestMergeKilledShard: a shard killed mid-attack (run.json with no end,
// attempts.jsonl empty) makes the merged run incomplete, said of that shard;
// killed after it flushed, the same, with what it recorded merged.
func TestMergeKilledShard(t *testing.T) {
	for _, empty := range []bool{true, false} {
		dirs, _, _ := shardedRun(t)
		editMeta(t, dirs[1], func(m *rundir.Meta) { m.AttackEnd, m.End = time.Time{}, time.Time{} })
		if empty {
			for _, f := range []string{rundir.AttemptsFile, rundir.ResultsFile} {
				if err := os.Truncate(filepath.Join(dirs[1], f), 0); err != nil {
					t.Fatal(err)
				}
			}
		}
		s := mergeVerdict(t, dirs)
		if s.Verdict != VerdictIncomplete {
			t.Errorf("empty %v: verdict %s %q, want incomplete", empty, s.Verdict, s.VerdictReasons)
		}
		wantReason(t, s, "shard 1/3", "no end", "environment")
		if p := s.Run.Merged.Problems; len(p) != 1 || p[0].Shard != 1 || p[0].Whose != "environment" || p[0].Verdict != VerdictIncomplete {
			t.Errorf("empty %v: run.merged.problems %+v, want shard 1's, environment, incomplete", empty, p)
		}
		if want := int64(200); empty && s.Requests.Messages != want {
			t.Errorf("messages %d, want the other shards' %d", s.Requests.Messages, want)
		}
	}
}

// TestMergeMissingRawFile: a shard that finished without its attempts.jsonl
// or results.bin, or with an empty attempts.jsonl, is an error, as one
// process missing its raw file would be.
func TestMergeMissingRawFile(t *testing.T) {
	for _, c := range []struct {
		file  string
		spoil func(string) error
		say   string
	}{
		{rundir.AttemptsFile, os.Remove, "is missing"},
		{rundir.AttemptsFile, func(p string) error { return os.Truncate(p, 0) }, "is empty"},
		{rundir.ResultsFile, os.Remove, "is missing"},
		{rundir.EventsFile, os.Remove, "is missing"},
	} {
		dirs, _, _ := shardedRun(t)
		if err := c.spoil(filepath.Join(dirs[2], c.file)); err != nil {
			t.Fatal(err)
		}
		s := mergeVerdict(t, dirs)
		if s.Verdict != VerdictError {
			t.Errorf("%s %s: verdict %s %q, want error", c.file, c.say, s.Verdict, s.VerdictReasons)
		}
		wantReason(t, s, "shard 2/3", c.file, c.say)
	}
}

// TestMergeTwoRunsOneID: shards of two different runs that reused one run id
// — another scenario, another start instant, or one that began after the
// other ended — are not merged into a pass: the verdict is error, naming them.
func TestMergeTwoRunsOneID(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*rundir.Meta)
		say  string
	}{
		{"digest", func(m *rundir.Meta) { m.ScenarioDigest = "sha256:2222" }, "scenarios differ"},
		{"start-at", func(m *rundir.Meta) { m.StartAt = t0.Add(24 * time.Hour) }, "start instants differ"},
		{"start", func(m *rundir.Meta) {
			d := 24 * time.Hour
			m.Start, m.AttackEnd, m.End = m.Start.Add(d), m.AttackEnd.Add(d), m.End.Add(d)
		}, "after shard 0/3 had ended, longer than the run lasts"},
	} {
		dirs, _, _ := shardedRun(t)
		for _, d := range dirs {
			editMeta(t, d, func(m *rundir.Meta) { m.ScenarioDigest, m.StartAt = "sha256:1111", t0 })
		}
		if c.name == "start" {
			for _, d := range dirs {
				editMeta(t, d, func(m *rundir.Meta) { m.StartAt = time.Time{} })
			}
		}
		editMeta(t, dirs[1], c.edit)
		s := mergeVerdict(t, dirs)
		if s.Verdict != VerdictError {
			t.Errorf("%s: verdict %s %q, want error", c.name, s.Verdict, s.VerdictReasons)
		}
		wantReason(t, s, "shard 1/3", "not one run", c.say)
	}
}

// TestMergeShardOwnVerdict: a shard whose own report is incomplete (it fell
// behind its plan, say) makes the merged run incomplete, even where the
// union's figures would pass.
func TestMergeShardOwnVerdict(t *testing.T) {
	dirs, _, _ := shardedRun(t)
	writeJSON(t, filepath.Join(dirs[0], rundir.SummaryFile), map[string]any{
		"verdict": VerdictIncomplete, "verdict_reasons": []string{"sent 50 of 100 planned messages"}})
	s := mergeVerdict(t, dirs)
	if s.Verdict != VerdictIncomplete {
		t.Errorf("verdict %s %q, want incomplete", s.Verdict, s.VerdictReasons)
	}
	wantReason(t, s, "shard 0/3", "INCOMPLETE", "sent 50 of 100")
}

// TestReportKilledRun: the report of a run whose run.json has no end (its
// process was killed) is incomplete, never pass, and needs no truth.json
// (which the simulator writes only when it closes).
func TestReportKilledRun(t *testing.T) {
	r := newRun(rundir.APIMessaging)
	for seq := int64(1); seq <= 10; seq++ {
		r.send(seq, "c1", float64(seq), 200, 0.01)
		r.callback(seq, float64(seq)+0.5, "DELIVERED", "sms", true, false)
	}
	r.meta.AttackEnd, r.meta.End = time.Time{}, time.Time{}
	s, err := conclude(r.write(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Verdict != VerdictIncomplete {
		t.Errorf("verdict %s %q, want incomplete", s.Verdict, s.VerdictReasons)
	}
	wantReason(t, s, "no end")
}

// TestMergeLateOrUnreadyShard: a shard whose run.json says it began late
// (late_start_s: a pod scheduled after the start instant) or began without
// shards missing from the start barrier (barrier_missing) did not run with
// the others: the merged run is incomplete, the environment's, naming the
// shard, whatever the union's figures. Before, both fields were ignored and
// the merge passed.
func TestMergeLateOrUnreadyShard(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*rundir.Meta)
		say  string
	}{
		{"late", func(m *rundir.Meta) { m.StartAt, m.LateStart = t0, 42.5 }, "42.5 s after the start instant"},
		{"barrier", func(m *rundir.Meta) { m.BarrierMissing = []int{0, 2} }, "without shards 0, 2"},
	} {
		dirs, _, _ := shardedRun(t)
		if c.name == "late" {
			for _, d := range dirs {
				editMeta(t, d, func(m *rundir.Meta) { m.StartAt = t0 })
			}
		}
		editMeta(t, dirs[1], c.edit)
		s := mergeVerdict(t, dirs)
		if s.Verdict != VerdictIncomplete {
			t.Errorf("%s: verdict %s %q, want incomplete", c.name, s.Verdict, s.VerdictReasons)
		}
		wantReason(t, s, "shard 1/3", "environment", c.say)
		if p := s.Run.Merged.Problems; len(p) != 1 || p[0].Shard != 1 || p[0].Whose != "environment" || p[0].Verdict != VerdictIncomplete {
			t.Errorf("%s: run.merged.problems %+v, want shard 1's, environment, incomplete", c.name, p)
		}
	}
}
