package reports

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// Metamorphic tests (DESIGN.md: "Figures do not depend on arrival order, on
// how the work was split, or on tags"): no oracle, the run is its own. Each
// transforms a run directory's raw files in a way that must not change what
// was measured and compares the two summaries:
//
//   - shuffling the lines of events.jsonl: every figure the same;
//   - splitting the run into three shards (rundir.Shard: attempts and tagged
//     events to the shard that owns the message; untagged events to every
//     shard, as a sink they all read; the truth to the first) and merging
//     them (Merge): every figure the same but run.merged, which names the
//     shards merged;
//   - stripping the run tags from the events whose id the service answered
//     (txId, notificationId; the messaging tag is trackData, the
//     notification's the externalId), so that they join by those ids: every
//     figure the same. An event of an id the service never answered (a send
//     processed and answered 500) keeps its tag: no id joins it.
//
// The runs: reports/testdata/runs (reorder is a real run of
// harness.TestReorderedChannellessRecords: sms(SEEN)→vkok against the
// embedded simulator, half the callbacks reordered, a fifth duplicated, sends
// processed then answered 500 and retried) and hand-built ones.

// metamorphicRuns returns the run directories the tests transform, by name.
func metamorphicRuns(t *testing.T) map[string]string {
	t.Helper()
	runs := map[string]string{}
	ents, err := os.ReadDir(filepath.Join("testdata", "runs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			runs[e.Name()] = filepath.Join("testdata", "runs", e.Name())
		}
	}
	for name, r := range map[string]*run{
		"hand-notify":   webhookKeys(notifyOutcomesRun()),
		"hand-failover": failoverOutcomesRun(),
		"hand-retries":  webhookKeys(retryOutcomesRun()),
		"hand-reorder":  handReorderRun(),
	} {
		runs[name] = r.write(t)
	}
	return runs
}

// webhookKeys keys a hand-built notify run's webhooks as the sink keys one
// without an externalId: by its notificationId, which the webhook's body
// carries as the service sends it (an untagged webhook joins by it).
func webhookKeys(r *run) *run {
	for i := range r.events {
		if c := r.events[i].Corr; c != nil {
			c.Key = "n-" + itoa(c.Seq)
			r.events[i].Payload = json.RawMessage(`{"notificationId":"` + c.Key + `","status":"` + c.State + `"}`)
		}
	}
	return r
}

// handReorderRun is sms(SEEN)→vkok with records overtaken, duplicated, a
// message ended under two txIds and a call the sink refused on purpose.
func handReorderRun() *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Chain = []string{"sms:SEEN", "vkok"}
	r.meta.Retry = rundir.Retry{On: []string{"timeout"}, Max: 1}
	r.send(1, "c1", 1, 200, 0.01)
	r.status(1, "tx-1", 3.4, 3.3, rundir.StateDelivered, "")
	r.status(1, "tx-1", 3.5, 2, rundir.StateDelivered, "sms")
	r.status(1, "tx-1", 3.6, 3, rundir.StateExpired, "sms")
	r.status(1, "tx-1", 3.41, 3.3, rundir.StateDelivered, "")
	r.send(2, "c1", 2, 0, 5)
	p := r.send(2, "c1", 7.5, 200, 0.01)
	p.Attempt, p.FirstSent, p.TxID = 2, at(2), "tx-2b"
	r.status(2, "tx-2b", 8, 7.9, rundir.StateDelivered, "sms")
	r.status(2, "tx-2a", 8.5, 4, rundir.StateExpired, "sms")
	r.status(2, "tx-2a", 8.6, 4.1, rundir.StateFailed, "")
	r.status(2, "tx-2b", 9.5, 9, rundir.StateSeen, "sms")
	r.send(3, "c1", 3, 200, 0.01)
	r.status(3, "tx-3", 4, 3.9, rundir.StateSeen, "sms")
	r.events[len(r.events)-1].Answered = 503 // refused on purpose: the service calls again
	r.status(3, "tx-3", 4.8, 3.9, rundir.StateSeen, "sms")
	r.status(3, "tx-3", 4.9, 3.9, rundir.StateSeen, "sms") // and once more: a duplicate
	return r
}

// figures is the summary as summary.json has it, without the paths masked.
func figures(t *testing.T, s *Summary, masked ...string) map[string]any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, p := range masked {
		keys := strings.Split(p, ".")
		at := m
		for _, k := range keys[:len(keys)-1] {
			at, _ = at[k].(map[string]any)
		}
		if at != nil {
			delete(at, keys[len(keys)-1])
		}
	}
	return m
}

// differences lists the paths where a and b differ.
func differences(path string, a, b any) []string {
	if reflect.DeepEqual(a, b) {
		return nil
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		return []string{fmt.Sprintf("%s: %s, then %s", path, ja, jb)}
	}
	var out []string
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, differences(strings.TrimPrefix(path+"."+k, "."), am[k], bm[k])...)
	}
	return out
}

// sameFigures fails the test where the transformed run's summary differs.
func sameFigures(t *testing.T, what string, orig, got *Summary, masked ...string) {
	t.Helper()
	if d := differences("", figures(t, orig, masked...), figures(t, got, masked...)); len(d) > 0 {
		t.Errorf("%s changed the figures:\n  %s", what, strings.Join(d, "\n  "))
	}
}

// copyRun copies the raw files of a run directory into a new one.
func copyRun(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	for _, f := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.EventsFile, rundir.TruthFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// lines reads a file's non-empty lines.
func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			out = append(out, slices.Clone(sc.Bytes()))
		}
	}
	return out
}

func writeFileLines(t *testing.T, path string, ls [][]byte) {
	t.Helper()
	var b bytes.Buffer
	for _, l := range ls {
		b.Write(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func analyzed(t *testing.T, dir string) *Summary {
	t.Helper()
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestShuffledEventsSameFigures: the order of events.jsonl changes nothing.
func TestShuffledEventsSameFigures(t *testing.T) {
	for name, dir := range metamorphicRuns(t) {
		t.Run(name, func(t *testing.T) {
			orig := analyzed(t, dir)
			for seed := range uint64(3) {
				out := copyRun(t, dir)
				ls := lines(t, filepath.Join(out, rundir.EventsFile))
				rand.New(rand.NewPCG(seed, 21)).Shuffle(len(ls), func(i, j int) { ls[i], ls[j] = ls[j], ls[i] })
				writeFileLines(t, filepath.Join(out, rundir.EventsFile), ls)
				sameFigures(t, fmt.Sprintf("shuffling events.jsonl (seed %d)", seed), orig, analyzed(t, out))
			}
		})
	}
}

// splitRun writes the run in dir as the directories of n shards.
func splitRun(t *testing.T, dir string, n int) []string {
	t.Helper()
	var meta rundir.Meta
	b, err := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	attempts, events := lines(t, filepath.Join(dir, rundir.AttemptsFile)), lines(t, filepath.Join(dir, rundir.EventsFile))
	total := int64(0)
	for _, l := range attempts {
		var at rundir.Attempt
		if json.Unmarshal(l, &at) == nil && at.Op == "send" && at.Attempt <= 1 && at.Probe == "" {
			total++
		}
	}
	dirs := make([]string, n)
	for i := range dirs {
		sh, err := rundir.NewShard(i, n, len(meta.Clients))
		if err != nil {
			t.Fatal(err)
		}
		m := meta
		m.Shard = &sh
		m.Planned.Requests = sh.Messages(meta.Planned.Requests)
		m.Planned.Rate = meta.Planned.Rate * sh.Share()
		if sh.By == rundir.ShardByClients {
			m.Clients = nil
			for c := i; c < len(meta.Clients); c += n {
				m.Clients = append(m.Clients, meta.Clients[c])
			}
		}
		owns := func(seq int64) bool { return seq > 0 && sh.Owns(seq) || seq <= 0 && i == 0 }
		var as, es [][]byte
		var decoded []rundir.Attempt
		for _, l := range attempts {
			var at rundir.Attempt
			err := json.Unmarshal(l, &at)
			if err != nil || owns(at.Seq) {
				as = append(as, l)
			}
			if err == nil && owns(at.Seq) {
				decoded = append(decoded, at)
			}
		}
		for _, l := range events {
			var e rundir.Event
			if json.Unmarshal(l, &e) != nil || e.Corr == nil || e.Corr.Run != meta.ID || e.Corr.Seq <= 0 || sh.Owns(e.Corr.Seq) {
				es = append(es, l) // untagged or another run's: every shard copied them from the one sink
			}
		}
		dirs[i] = t.TempDir()
		writeJSON(t, filepath.Join(dirs[i], rundir.MetaFile), m)
		writeFileLines(t, filepath.Join(dirs[i], rundir.AttemptsFile), as)
		writeFileLines(t, filepath.Join(dirs[i], rundir.EventsFile), es)
		// Every shard recorded its results (the merge refuses a shard
		// without), and had a simulator: the first holds the whole truth,
		// the others an empty one, so that their union is the run's.
		writeResults(t, filepath.Join(dirs[i], rundir.ResultsFile), decoded)
		if tb, err := os.ReadFile(filepath.Join(dir, rundir.TruthFile)); err == nil {
			if i > 0 {
				tb = []byte("{}")
			}
			if err := os.WriteFile(filepath.Join(dirs[i], rundir.TruthFile), tb, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dirs
}

// TestShardedAndMergedSameFigures: splitting the work among shards and
// merging them changes nothing but run.merged, which names the shards.
func TestShardedAndMergedSameFigures(t *testing.T) {
	for name, dir := range metamorphicRuns(t) {
		t.Run(name, func(t *testing.T) {
			orig := analyzed(t, dir)
			out := filepath.Join(t.TempDir(), "merged")
			if _, err := Merge(out, splitRun(t, dir, 3), MergeOptions{}); err != nil {
				t.Fatal(err)
			}
			sameFigures(t, "splitting into 3 shards and merging", orig, analyzed(t, out), "run.merged")
		})
	}
}

// stripTags writes the run in dir with the tags taken off the events whose id
// the service answered, as a service that drops trackData delivers them
// (messaging), or as a scenario with its own externalIds has them (notify:
// the tagged externalId becomes "own-<seq>" in attempts, events and truth).
// It returns the directory and how many events it stripped.
func stripTags(t *testing.T, dir string) (string, int) {
	t.Helper()
	out := copyRun(t, dir)
	var meta rundir.Meta
	b, err := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
	if err != nil || json.Unmarshal(b, &meta) != nil {
		t.Fatalf("run.json: %v", err)
	}
	answered, own := map[string]bool{}, map[string]string{}
	attempts := lines(t, filepath.Join(dir, rundir.AttemptsFile))
	for i, l := range attempts {
		var at rundir.Attempt
		if json.Unmarshal(l, &at) != nil {
			continue
		}
		if at.Code >= 200 && at.Code < 300 {
			answered[at.TxID], answered[at.NotificationID] = true, true
			if at.NotificationID != "" {
				answered[at.ExternalID] = true // the webhook's key: answered with its notificationId
			}
		}
		if _, err := rundir.ParseExternalID(at.ExternalID); err == nil && at.Seq > 0 {
			own[at.ExternalID] = "own-" + itoa(at.Seq)
			at.ExternalID = own[at.ExternalID]
			attempts[i], _ = json.Marshal(at)
		}
	}
	delete(answered, "")
	ls := lines(t, filepath.Join(dir, rundir.EventsFile))
	stripped := 0
	for i, l := range ls {
		var e rundir.Event
		if json.Unmarshal(l, &e) != nil || e.Corr == nil || e.Corr.Seq == 0 || !answered[e.Corr.Key] {
			continue
		}
		e.Corr.Run, e.Corr.Seq, e.Corr.FirstSent, e.Corr.Matched = "", 0, time.Time{}, false
		var p map[string]json.RawMessage
		if json.Unmarshal(e.Payload, &p) == nil {
			if tag, err := rundir.ParseTrackData(trackData(p["trackData"])); err == nil && len(meta.Chain) == 0 {
				meta.Chain = tag.Chain // a run of before run.json carried the chain: its tag did
			}
			delete(p, "trackData")
			if x, ok := own[e.Corr.Key]; ok {
				p["externalId"], _ = json.Marshal(x)
				e.Corr.Key = x
			}
			e.Payload, _ = json.Marshal(p)
		}
		if ls[i], err = json.Marshal(e); err != nil {
			t.Fatal(err)
		}
		stripped++
	}
	writeFileLines(t, filepath.Join(out, rundir.EventsFile), ls)
	writeFileLines(t, filepath.Join(out, rundir.AttemptsFile), attempts)
	writeJSON(t, filepath.Join(out, rundir.MetaFile), meta)
	if b, err := os.ReadFile(filepath.Join(dir, rundir.TruthFile)); err == nil {
		var tr rundir.Truth
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		for i, m := range tr.Messages {
			if x, ok := own[m.ExternalID]; ok {
				tr.Messages[i].ExternalID = x
			}
		}
		writeJSON(t, filepath.Join(out, rundir.TruthFile), tr)
	}
	return out, stripped
}

// trackData decodes a trackData object, nil when there is none.
func trackData(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// TestUntaggedEventsSameFigures: events without the run's tag, joined by the
// ids the service answered, give the same figures.
func TestUntaggedEventsSameFigures(t *testing.T) {
	for name, dir := range metamorphicRuns(t) {
		t.Run(name, func(t *testing.T) {
			out, n := stripTags(t, dir)
			if n == 0 {
				t.Fatal("no event stripped of its tag: nothing tested")
			}
			sameFigures(t, fmt.Sprintf("stripping the run tags of %d events", n), analyzed(t, dir), analyzed(t, out))
		})
	}
}
