package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// twoShardScenario is a small embedded run that two shards split by sequence.
const twoShardScenario = `name: seq
api: notify
target: embedded
clients: 1
load: { rate: 20/s, requests: 6 }
limit: { rate: 100/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { grace: 10s }
thresholds: [ "delivery.lost == 0" ]
`

// runShard runs shard i of 2 of run id "seq-run" under out with extra flags.
func runShard(t *testing.T, scen, out string, i int, extra ...string) (int, string, string) {
	args := append([]string{"run", "--out", out, "--metrics-addr", "", "--quiet",
		"--shard", strconv.Itoa(i) + "/2", "--run-id", "seq-run"}, extra...)
	return runProgram(t, nil, nil, append(args, scen)...)
}

func shardMeta(t *testing.T, out string, i int) rundir.Meta {
	t.Helper()
	var m rundir.Meta
	readJSONFile(t, filepath.Join(out, "seq-run", "shard-"+strconv.Itoa(i), rundir.MetaFile), &m)
	return m
}

// TestMergeWaitsForShards: report --merge OUT --wait-for N, started before
// any shard, waits until the N shards of OUT have ended and merges them all,
// their directories derived, not listed.
func TestMergeWaitsForShards(t *testing.T) {
	scen := writeScenario(t, twoShardScenario)
	out := t.TempDir()
	runDir := filepath.Join(out, "seq-run")
	type result struct {
		code           int
		stdout, stderr string
	}
	merged := make(chan result, 1)
	go func() {
		code, stdout, stderr := runProgram(t, nil, nil, "report", "--wait-for", "2", "--wait-timeout", "30m", "--merge", runDir)
		merged <- result{code, stdout, stderr}
	}()
	for i := range 2 {
		code, stdout, stderr := runShard(t, scen, out, i)
		skipIfPlanNotHeld(t, code, out)
		if code != exitOK {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
	}
	r := <-merged
	if r.code != exitOK || !strings.Contains(r.stdout, "merged 2 of 2 shards") {
		t.Fatalf("merge --wait-for 2: exit %d, want 0 and both shards merged\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestMergeWaitTimeoutNamesMissing: when the deadline passes without every
// shard, the merge is of those there and the run is incomplete, naming the
// missing shard; with no shard at all, exit 3 (incomplete) too.
func TestMergeWaitTimeoutNamesMissing(t *testing.T) {
	scen := writeScenario(t, twoShardScenario)
	out := t.TempDir()
	runDir := filepath.Join(out, "seq-run")
	code, _, stderr := runProgram(t, nil, nil, "report", "--wait-for", "2", "--wait-timeout", "1ms", "--merge", runDir)
	if code != exitIncomplete || !strings.Contains(stderr, "shards 0, 1 of 2") {
		t.Errorf("no shard at all: exit %d, want %d naming shards 0 and 1\n%s", code, exitIncomplete, stderr)
	}
	code, stdout, stderr := runShard(t, scen, out, 0)
	skipIfPlanNotHeld(t, code, out)
	if code != exitOK {
		t.Fatalf("shard 0: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runProgram(t, nil, nil, "report", "--wait-for", "2", "--wait-timeout", "1s", "--merge", runDir)
	if code != exitIncomplete || !strings.Contains(stderr, "shards 1 of 2 had not ended") {
		t.Fatalf("one shard of two: exit %d, want %d naming shard 1\n%s\n%s", code, exitIncomplete, stdout, stderr)
	}
	var sum struct {
		Verdict string `json:"verdict"`
		Run     struct {
			Merged rundir.Merged `json:"merged"`
		} `json:"run"`
	}
	readJSONFile(t, filepath.Join(runDir, rundir.SummaryFile), &sum)
	if sum.Verdict != "incomplete" || !slices.Equal(sum.Run.Merged.Missing, []int{1}) {
		t.Errorf("merged: verdict %s, missing %v; want incomplete, [1]", sum.Verdict, sum.Run.Merged.Missing)
	}
	if code, _, stderr := runProgram(t, nil, nil, "report", "--wait-for", "2", "--merge", runDir, filepath.Join(runDir, "shard-0")); code != exitBadInput {
		t.Errorf("--wait-for with listed shard directories: exit %d, want %d\n%s", code, exitBadInput, stderr)
	}
}

// TestMergeWaitInterrupted: SIGTERM (the merge pod's) ends the wait for the
// shards, not the command: it merges what is there and names the missing.
func TestMergeWaitInterrupted(t *testing.T) {
	scen := writeScenario(t, twoShardScenario)
	out := t.TempDir()
	runDir := filepath.Join(out, "seq-run")
	code, stdout, stderr := runShard(t, scen, out, 1)
	skipIfPlanNotHeld(t, code, out)
	if code != exitOK {
		t.Fatalf("shard 1: exit %d\n%s\n%s", code, stdout, stderr)
	}
	sig := make(chan os.Signal, 1)
	sig <- syscall.SIGTERM
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, stdout, stderr = runProgram(t, nil, sig, "report", "--wait-for", "2", "--wait-timeout", "30m", "--merge", runDir)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		t.Fatal("report --merge --wait-for still waiting 5 minutes after SIGTERM")
	}
	if code != exitInterrupted || !strings.Contains(stderr, "shards 0 of 2 had not ended when interrupted") || !strings.Contains(stdout, "merged 1 of 2 shards") {
		t.Errorf("interrupted wait: exit %d, want %d, shard 1 merged, shard 0 named\n%s\n%s", code, exitInterrupted, stdout, stderr)
	}
}

// TestShardBarrier: a shard started on a barrier does not begin its attack
// before the other shard is ready: each one's start is after both ready
// markers were written, and neither names a missing shard.
func TestShardBarrier(t *testing.T) {
	scen := writeScenario(t, twoShardScenario)
	out := t.TempDir()
	barrier := filepath.Join(out, "seq-run", "ready")
	codes := make([]int, 2)
	logs := make([]string, 2)
	var wg sync.WaitGroup
	done0 := make(chan struct{})
	start := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				defer close(done0)
			}
			var stdout, stderr string
			codes[i], stdout, stderr = runShard(t, scen, out, i, "--barrier", barrier, "--barrier-timeout", "30m")
			logs[i] = stdout + stderr
		}()
	}
	start(0)
	// Shard 1 starts only once shard 0 waits on the barrier.
	for waiting := true; waiting; {
		if _, err := os.Stat(filepath.Join(barrier, "ready-0")); err == nil {
			break
		}
		select {
		case <-done0: // ended without waiting: the checks below say how
			waiting = false
		case <-time.After(20 * time.Millisecond):
		}
	}
	start(1)
	wg.Wait()
	for i := range 2 {
		skipIfPlanNotHeld(t, codes[i], out)
		if codes[i] != exitOK {
			t.Fatalf("shard %d: exit %d\n%s", i, codes[i], logs[i])
		}
	}
	b, err := os.ReadFile(filepath.Join(barrier, "ready-1"))
	if err != nil {
		t.Fatal(err)
	}
	ready1, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		m := shardMeta(t, out, i)
		if m.Start.Before(ready1) {
			t.Errorf("shard %d began at %v, before shard 1 was ready (%v)", i, m.Start, ready1)
		}
		if len(m.BarrierMissing) > 0 {
			t.Errorf("shard %d: barrier_missing %v, want none", i, m.BarrierMissing)
		}
	}
}

// TestShardBarrierDeadline: a shard alone on the barrier begins at the
// deadline and says in run.json and on stderr which shard was missing; one
// that reaches the start instant late says by how much (late_start_s).
func TestShardBarrierDeadline(t *testing.T) {
	scen := writeScenario(t, twoShardScenario)
	out := t.TempDir()
	code, stdout, stderr := runShard(t, scen, out, 0, "--barrier", filepath.Join(out, "ready"), "--barrier-timeout", "1ms",
		"--start-at", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))
	skipIfPlanNotHeld(t, code, out)
	if code != exitOK {
		t.Fatalf("shard 0: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := shardMeta(t, out, 0)
	if !slices.Equal(m.BarrierMissing, []int{1}) || !strings.Contains(stderr, "starting without shards [1] of 2") {
		t.Errorf("barrier_missing %v, want [1] (and said on stderr)\n%s", m.BarrierMissing, stderr)
	}
	if m.LateStart < 59 {
		t.Errorf("late_start_s %v, want ≥ 59 (started a minute after the instant)", m.LateStart)
	}
	if code, _, stderr := runProgram(t, nil, nil, "run", "--out", out, "--metrics-addr", "", "--barrier", out, scen); code != exitBadInput {
		t.Errorf("--barrier without a shard: exit %d, want %d\n%s", code, exitBadInput, stderr)
	}
}

// TestShardRunTwice: a second process of a shard that already ran (a pod
// replaced after a disruption) does not send its messages again and exits
// 3 (incomplete), not 2 (bad input, which fails the whole Job).
func TestShardRunTwice(t *testing.T) {
	scen := writeScenario(t, twoShardScenario)
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "seq-run", "shard-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runShard(t, scen, out, 0)
	if code != exitIncomplete || !strings.Contains(stderr, "never run twice") {
		t.Errorf("shard 0 again: exit %d, want %d\n%s\n%s", code, exitIncomplete, stdout, stderr)
	}
}
