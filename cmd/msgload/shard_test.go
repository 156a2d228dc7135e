package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// TestIndexedJobContract runs what a Kubernetes Indexed Job runs, locally:
// N = 3 msgload run processes of one scenario, each told its shard only as
// the Job tells a pod (JOB_COMPLETION_INDEX, with the completions count in
// MSGLOAD_RUN_SHARDS) and given one start instant, against one simulator and
// one sink (loopback); then msgload report --merge. The merged summary.json
// must equal the analysis of the shards' raw files concatenated (here, by the
// test), every client must have stayed in one shard, and the sequences of the
// shards must be those of the whole run, each once.
func TestIndexedJobContract(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs three processes")
	}
	const shards, messages = 3, 48
	clients := []string{"shard-c0", "shard-c1", "shard-c2", "shard-c3"}

	bin := filepath.Join(t.TempDir(), "msgload")
	if b, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}

	cfg := sim.DefaultConfig()
	for _, c := range clients {
		cfg.Notify.Clients = append(cfg.Notify.Clients, sim.Client{ID: c, Secret: "s3cret-" + c, Scopes: []string{sim.ScopeNotification, sim.ScopeWebhook}})
	}
	sv, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	simSrv := httptest.NewServer(sv.Handler())
	defer simSrv.Close()
	k, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl")}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	sinkSrv := httptest.NewServer(k.Handler())
	defer sinkSrv.Close()

	var creds strings.Builder
	for _, c := range clients {
		fmt.Fprintf(&creds, "  - { clientId: %s, clientSecret: \"s3cret-%s\" }\n", c, c)
	}
	scen := writeScenario(t, fmt.Sprintf(`name: sharded
api: notify
target: { baseUrl: %s, tokenUrl: %s/oauth/token }
sink: %s
clients:
%sload: { rate: 16/s, requests: %d }
limit: { rate: 100/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { grace: 30s }
thresholds:
  - delivery.lost == 0
  - rate_limit.excess_accepted == 0
  - delivery.latency.p95 < 30s
`, simSrv.URL, simSrv.URL, sinkSrv.URL, creds.String(), messages))

	out := t.TempDir()
	startAt := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	type proc struct {
		cmd            *exec.Cmd
		stdout, stderr bytes.Buffer
	}
	procs := make([]*proc, shards)
	for i := range procs {
		p := &proc{cmd: exec.Command(bin, "run", "--quiet", "--metrics-addr", "127.0.0.1:0", scen)}
		p.cmd.Env = append(os.Environ(),
			"JOB_COMPLETION_INDEX="+strconv.Itoa(i), // what Kubernetes sets in the pod of an Indexed Job
			"MSGLOAD_RUN_SHARDS="+strconv.Itoa(shards),
			"MSGLOAD_RUN_START_AT="+startAt,
			"MSGLOAD_RUN_OUT="+out,
		)
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	for i, p := range procs {
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("shard %d: %v\nstdout:\n%s\nstderr:\n%s", i, err, p.stdout.String(), p.stderr.String())
			}
		case <-time.After(2 * time.Minute):
			_ = p.cmd.Process.Kill()
			t.Fatalf("shard %d did not end in 2 minutes", i)
		}
	}

	// One run directory, derived alike by every shard, with a directory per shard.
	ids, _ := os.ReadDir(out)
	if len(ids) != 1 {
		t.Fatalf("the shards made %d run directories, want 1 (one run id)", len(ids))
	}
	runDir := filepath.Join(out, ids[0].Name())
	var dirs []string
	for i := 0; i < shards; i++ {
		dirs = append(dirs, filepath.Join(runDir, "shard-"+strconv.Itoa(i)))
	}

	// Each client in one shard; the shards' sequences those of the run, once each.
	clientShard := map[string]int{}
	seqs := map[int64]int{}
	var metas []rundir.Meta
	for i, d := range dirs {
		var m rundir.Meta
		readJSONFile(t, filepath.Join(d, rundir.MetaFile), &m)
		if m.Shard == nil || m.Shard.Index != i || m.Shard.Count != shards || m.Shard.By != rundir.ShardByClients {
			t.Fatalf("%s: run.json shard %+v, want %d/%d by clients", d, m.Shard, i, shards)
		}
		metas = append(metas, m)
		if at, _ := time.Parse(time.RFC3339Nano, startAt); m.Start.Before(at) {
			t.Errorf("shard %d started at %s, before the start instant %s", i, m.Start, startAt)
		}
		// The shard copied from the shared sink only its own messages' events:
		// nothing of the other shards shows as unmatched in its own report.
		var own struct {
			Delivery struct {
				Unmatched int64 `json:"unmatched"`
				Received  int64 `json:"received"`
			} `json:"delivery"`
			Thresholds []any `json:"thresholds"`
		}
		readJSONFile(t, filepath.Join(d, rundir.SummaryFile), &own)
		if own.Delivery.Unmatched != 0 || own.Delivery.Received == 0 || len(own.Thresholds) != 0 {
			t.Errorf("shard %d's own report: unmatched %d, received %d, %d thresholds judged; want 0, > 0, none (the merge judges them)",
				i, own.Delivery.Unmatched, own.Delivery.Received, len(own.Thresholds))
		}
		err := rundir.ReadJSONL(filepath.Join(d, rundir.AttemptsFile), func(a rundir.Attempt) error {
			if a.Client != "" {
				if o, ok := clientShard[a.Client]; ok && o != i {
					return fmt.Errorf("client %s in shards %d and %d", a.Client, o, i)
				}
				clientShard[a.Client] = i
			}
			if a.Op == "send" && a.Attempt <= 1 && a.Probe == "" {
				if o, ok := seqs[a.Seq]; ok {
					return fmt.Errorf("message %d sent by shards %d and %d", a.Seq, o, i)
				}
				seqs[a.Seq] = i
			}
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(clientShard) != len(clients) {
		t.Errorf("clients seen %v, want all of %v", clientShard, clients)
	}
	for s := int64(1); s <= messages; s++ {
		if _, ok := seqs[s]; !ok {
			t.Errorf("message %d was sent by no shard", s)
		}
	}
	if len(seqs) != messages {
		t.Errorf("%d messages sent, want %d", len(seqs), messages)
	}
	for i := 1; i < shards; i++ {
		if metas[i].ID != metas[0].ID {
			t.Fatalf("shards have run ids %s and %s", metas[0].ID, metas[i].ID)
		}
	}

	// The merge, as the merge Job runs it.
	merge := exec.Command(bin, append([]string{"report", "--merge", runDir}, dirs...)...)
	if b, err := merge.CombinedOutput(); err != nil {
		t.Fatalf("msgload report --merge: %v\n%s", err, b)
	} else if !strings.Contains(string(b), "merged 3 of 3 shards") {
		t.Errorf("the merge does not say what it merged:\n%s", b)
	}
	var got map[string]any
	readJSONFile(t, filepath.Join(runDir, rundir.SummaryFile), &got)

	// The single analysis of the union, built here: the shards' raw files
	// concatenated, a run.json spanning them.
	union := fstest.MapFS{}
	for _, f := range []string{rundir.AttemptsFile, rundir.EventsFile} {
		var b []byte
		for _, d := range dirs {
			part, err := os.ReadFile(filepath.Join(d, f))
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, part...)
		}
		union[f] = &fstest.MapFile{Data: b}
	}
	whole := metas[0]
	whole.Shard, whole.MetricsAddr, whole.Clients = nil, "", clients
	whole.Planned.Requests, whole.Planned.Rate = 0, 0
	for _, m := range metas {
		if m.Start.Before(whole.Start) {
			whole.Start = m.Start
		}
		if m.AttackEnd.After(whole.AttackEnd) {
			whole.AttackEnd = m.AttackEnd
		}
		if m.End.After(whole.End) {
			whole.End = m.End
		}
		whole.Planned.Requests += m.Planned.Requests
		whole.Planned.Rate += m.Planned.Rate
	}
	mb, _ := json.Marshal(whole)
	union[rundir.MetaFile] = &fstest.MapFile{Data: mb}
	s, err := reports.AnalyzeFS(union, "union")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Evaluate(whole.Thresholds); err != nil {
		t.Fatal(err)
	}
	wb, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(wb, &want); err != nil {
		t.Fatal(err)
	}

	// run.merged says which shards; the union built here has no such note.
	merged, _ := got["run"].(map[string]any)["merged"].(map[string]any)
	if merged == nil || merged["shards"] != float64(shards) || !reflect.DeepEqual(merged["indexes"], []any{0.0, 1.0, 2.0}) {
		t.Errorf("summary run.merged = %v, want 3 shards, indexes 0 1 2", merged)
	}
	delete(got["run"].(map[string]any), "merged")
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.MarshalIndent(got, "", " ")
		wb, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("the merged summary differs from the analysis of the concatenated raw files:\n%s", lineDiff(string(gb), string(wb)))
	}
	if got["verdict"] != reports.VerdictPass {
		t.Errorf("merged verdict %v, want pass; reasons %v", got["verdict"], got["verdict_reasons"])
	}
	d := got["delivery"].(map[string]any)
	if d["received"] != float64(messages) || d["lost"] != 0.0 {
		t.Errorf("delivery received %v lost %v, want %d and 0", d["received"], d["lost"], messages)
	}

	// msgload report of the merged directory builds the same summary again.
	before, _ := os.ReadFile(filepath.Join(runDir, rundir.SummaryFile))
	if b, err := exec.Command(bin, "report", "--quiet", runDir).CombinedOutput(); err != nil {
		t.Fatalf("msgload report %s: %v\n%s", runDir, err, b)
	}
	after, _ := os.ReadFile(filepath.Join(runDir, rundir.SummaryFile))
	if !bytes.Equal(before, after) {
		t.Errorf("msgload report of the merged run changed summary.json")
	}
	if _, err := fs.Stat(os.DirFS(runDir), rundir.ResultsFile); err != nil {
		t.Errorf("the merged run has no results.bin: %v", err)
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// lineDiff lists the lines of a not in b and of b not in a.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "merged: "+l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "union:  "+l)
		}
	}
	return strings.Join(out, "\n")
}

// TestShardFlagsRefused: what cannot make a sharded run is bad input (exit 2)
// before anything starts, and says what to give.
func TestShardFlagsRefused(t *testing.T) {
	scen := writeScenario(t, strings.Replace(quickNotify, "%s", "requests.total > 0", 1))
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no run id", nil, []string{"--shard", "0/2"}, "--run-id"},
		{"bad shard", nil, []string{"--shard", "2/2", "--run-id", "x"}, "0 ≤ I < N"},
		{"shards without the index", nil, []string{"--shards", "3", "--run-id", "x"}, "JOB_COMPLETION_INDEX"},
		{"index out of range", map[string]string{"JOB_COMPLETION_INDEX": "3", "MSGLOAD_RUN_SHARDS": "3"}, []string{"--run-id", "x"}, "from 0 to 2"},
		{"bad start", nil, []string{"--shard", "0/2", "--start-at", "soon"}, "RFC 3339"},
		{"bad run id", nil, []string{"--shard", "0/2", "--run-id", "a/b"}, "--run-id"},
		{"parts", nil, []string{"--shard", "0/2", "--run-id", "x", "smoke"}, "parts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"run", "--out", out, "--metrics-addr", "", "--quiet"}, c.args...)
			if !slices.Contains(c.args, "smoke") {
				args = append(args, scen)
			}
			code, _, stderr := runProgram(t, c.env, nil, args...)
			if code != exitBadInput || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, want %d; stderr does not say %q:\n%s", code, exitBadInput, c.want, stderr)
			}
			if runs, _ := os.ReadDir(out); len(runs) != 0 {
				t.Errorf("bad input left %d run directories", len(runs))
			}
		})
	}
}

// TestShardsBySequenceEmbedded: a scenario of one client split between two
// shards, each with its own embedded simulator and sink: the sequence is
// partitioned (odd and even), and the merge — joining the simulators' truths
// too — passes with every message once.
func TestShardsBySequenceEmbedded(t *testing.T) {
	scen := writeScenario(t, `name: seq
api: notify
target: embedded
clients: 1
load: { rate: 20/s, requests: 9 }
limit: { rate: 100/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { grace: 10s }
thresholds: [ "delivery.lost == 0", "delivery.received == 9" ]
`)
	out := t.TempDir()
	for i := 0; i < 2; i++ {
		code, stdout, stderr := runProgram(t, nil, nil, "run", "--out", out, "--metrics-addr", "", "--quiet",
			"--shard", strconv.Itoa(i)+"/2", "--run-id", "seq-run", scen)
		skipIfPlanNotHeld(t, code, out)
		if code != exitOK {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		if !strings.Contains(stdout, "msgload report --merge "+filepath.Join(out, "seq-run")) {
			t.Errorf("shard %d does not say how to merge:\n%s", i, stdout)
		}
	}
	runDir := filepath.Join(out, "seq-run")
	// One plan: both shards' run.json carry the same digest of the scenario,
	// by which the merge tells them from another run's that reused the id.
	var digests []string
	for i := range 2 {
		var m rundir.Meta
		readJSONFile(t, filepath.Join(runDir, "shard-"+strconv.Itoa(i), rundir.MetaFile), &m)
		digests = append(digests, m.ScenarioDigest)
	}
	if !strings.HasPrefix(digests[0], "sha256:") || digests[0] != digests[1] {
		t.Errorf("scenario digests of the two shards: %q, want one sha256", digests)
	}
	for i, want := range [][]int64{{1, 3, 5, 7, 9}, {2, 4, 6, 8}} {
		var got []int64
		_ = rundir.ReadJSONL(filepath.Join(runDir, "shard-"+strconv.Itoa(i), rundir.AttemptsFile), func(a rundir.Attempt) error {
			if a.Op == "send" && a.Attempt <= 1 {
				got = append(got, a.Seq)
			}
			return nil
		}, nil)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("shard %d sent %v, want %v", i, got, want)
		}
	}
	// msgload report of the run's directory (no run.json of its own yet, a
	// directory per shard) merges the shards rather than report them as parts.
	code, stdout, stderr := runProgram(t, nil, nil, "report", runDir)
	if code != exitOK || !strings.Contains(stdout, "merged 2 of 2 shards") {
		t.Fatalf("report of the sharded run's directory: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runProgram(t, nil, nil, "report", "--merge", runDir, filepath.Join(runDir, "shard-1"), filepath.Join(runDir, "shard-0"))
	if code != exitOK {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var sum struct {
		Verdict string `json:"verdict"`
		Run     struct {
			Merged rundir.Merged `json:"merged"`
		} `json:"run"`
		Truth *struct {
			Agrees bool `json:"agrees"`
		} `json:"truth"`
	}
	readJSONFile(t, filepath.Join(runDir, rundir.SummaryFile), &sum)
	if sum.Verdict != reports.VerdictPass || sum.Run.Merged.By != rundir.ShardBySequence || sum.Truth == nil || !sum.Truth.Agrees {
		t.Errorf("merged: verdict %s, by %s, truth %+v; want pass, by sequence, truth agreeing", sum.Verdict, sum.Run.Merged.By, sum.Truth)
	}
}
