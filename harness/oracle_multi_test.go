package harness

// TestOracleMulti is the oracle test (oracle_test.go) of the shapes made of
// more than one run: one seed draws one shape and small random parameters —
// the parts of one run against one standalone simulator and sink, two runs
// at once through one sink, a replay of a tagged recording, a sharded run
// merged (one shard sometimes killed with SIGKILL) — runs it through Run (and
// render.Merge for shards) against a simulator and sink the test starts,
// and checks every run's summary.json against the oracle's own figures
// (oCase.figures) computed from that run's raw files and the simulator's
// truth filtered to that run's messages. Failing seeds go into
// testdata/oracle/multi-regressions.txt and are always run first.
//
//	go test ./harness -run OracleMulti                      # 8 cases (3 with -short)
//	go test ./harness -run OracleMulti -oracle.cases 40     # more
//	go test ./harness -run OracleMulti -oracle.seed 17 -v   # one seed again

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

const oracleMultiRegressions = "testdata/oracle/multi-regressions.txt"

// The shapes TestOracleMulti draws.
const (
	shapeParts      = "parts with one standalone sink"
	shapeConcurrent = "concurrent runs sharing a sink"
	shapeReplay     = "replay of a tagged recording"
	shapeShards     = "shards"
)

// mCase is one generated multi-run case.
type mCase struct {
	Seed  int64  `yaml:"seed"`
	Shape string `yaml:"shape"`
	// Runs: parts — the notify part n and the messaging part m; concurrent —
	// the two runs; replay — the replaying run; shards — the scenario.
	Runs []oCase `yaml:"runs"`
	// Swallow (parts) is the sink route whose calls the test's front answers
	// 200 without passing them on: that part's service sends nothing that
	// arrives.
	Swallow string `yaml:"swallow,omitempty"`
	// RunClients (concurrent notify) is the client of each run.
	RunClients []string `yaml:"runClients,omitempty"`
	// Recorded (replay) are the recorded sends; BuiltIn replays them with
	// the built-in replay scenario (msgload replay FILE), else with a
	// scenario of load.profile replay.
	Recorded []mRec `yaml:"recorded,omitempty"`
	BuiltIn  bool   `yaml:"builtIn,omitempty"`
	Shards   int    `yaml:"shards,omitempty"`
	// Kill (shards) is the shard run in a process killed with SIGKILL once
	// its attempts.jsonl holds KillAfter lines; -1 none.
	Kill      int `yaml:"kill,omitempty"`
	KillAfter int `yaml:"killAfter,omitempty"`
	// Term (shards), when set, stops the shard as a pod is stopped: SIGTERM,
	// then SIGKILL this long after if it still runs.
	Term time.Duration `yaml:"term,omitempty"`
}

// mRec is one recorded send of a replay.
type mRec struct {
	Client string        `yaml:"client"`
	At     time.Duration `yaml:"at"` // after the recording's start
}

func TestOracleMulti(t *testing.T) {
	seeds := oracleSeeds(t, oracleMultiRegressions, 8, 3, nil)
	root, err := os.MkdirTemp("", "msgload-oracle-multi-")
	if err != nil {
		t.Fatal(err)
	}
	// Cases run two at once: a shard case alone runs up to three runs.
	results := make([]mResult, len(seeds))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	began := time.Now()
	for i, s := range seeds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = runMultiCase(drawMulti(s), root)
		}()
	}
	wg.Wait()
	failed := false
	shapes := map[string]int{}
	for _, res := range results {
		shapes[res.c.describe()]++
		t.Run(fmt.Sprintf("seed=%d", res.c.Seed), func(t *testing.T) {
			if res.err == nil && len(res.problems) == 0 {
				for _, n := range res.notes {
					t.Log(n)
				}
				t.Logf("%s, %s", res.c.describe(), res.elapsed.Round(time.Millisecond))
				os.RemoveAll(res.dir)
				return
			}
			failed = true
			cfg, _ := yaml.Marshal(res.c)
			var b strings.Builder
			fmt.Fprintf(&b, "seed %d (%s): rerun with go test ./harness -run OracleMulti -oracle.seed %d\n", res.c.Seed, res.c.describe(), res.c.Seed)
			if res.err != nil {
				fmt.Fprintf(&b, "run error: %v\n", res.err)
			}
			for _, p := range res.problems {
				fmt.Fprintf(&b, "  %s\n", p)
			}
			for _, n := range res.notes {
				fmt.Fprintf(&b, "  note: %s\n", n)
			}
			fmt.Fprintf(&b, "case directory (kept): %s\ngenerated case:\n%s", res.dir, cfg)
			if res.stderr != "" {
				fmt.Fprintf(&b, "stderr of the runs:\n%s", res.stderr)
			}
			t.Error(b.String())
		})
	}
	var lines []string
	for s, n := range shapes {
		lines = append(lines, fmt.Sprintf("%4d  %s", n, s))
	}
	sort.Strings(lines)
	t.Logf("%d cases in %s; shapes drawn:\n%s", len(seeds), time.Since(began).Round(time.Second), strings.Join(lines, "\n"))
	if !failed {
		os.RemoveAll(root)
	} else {
		t.Logf("directories of failed cases kept under %s", root)
	}
}

// oracleSeeds are the seeds to run: -oracle.seed, else the regressions of
// file then the first -oracle.cases seeds (def, short with -short) that keep
// takes (nil: every one; bounded: a keep that takes none ends the search).
func oracleSeeds(t *testing.T, file string, def, short int, keep func(int64) bool) []int64 {
	var seeds []int64
	have := map[int64]bool{}
	add := func(s int64) {
		if !have[s] {
			have[s] = true
			seeds = append(seeds, s)
		}
	}
	if *oracleSeed != "" {
		for _, f := range strings.Split(*oracleSeed, ",") {
			s, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				t.Fatalf("-oracle.seed %q: %v", *oracleSeed, err)
			}
			add(s)
		}
		return seeds
	}
	b, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		s, _, _ := strings.Cut(line, "#")
		if fs := strings.Fields(s); len(fs) > 0 {
			n, err := strconv.ParseInt(fs[0], 10, 64)
			if err != nil {
				t.Fatalf("%s:%d: %v", file, i+1, err)
			}
			add(n)
		}
	}
	n := *oracleCases
	if n <= 0 {
		n = def
		if testing.Short() {
			n = short
		}
	}
	for i, drawn := int64(1), 0; drawn < n && i <= int64(100*n); i++ {
		if keep == nil || keep(i) {
			add(i)
			drawn++
		}
	}
	return seeds
}

// describe is a short line about c.
func (c mCase) describe() string {
	var ps []string
	for _, r := range c.Runs {
		ps = append(ps, r.API)
	}
	s := c.Shape + " (" + strings.Join(ps, "+")
	switch c.Shape {
	case shapeParts:
		if c.Swallow != "" {
			s += ", every call to " + c.Swallow + " lost"
		}
	case shapeConcurrent:
		if len(c.RunClients) > 0 {
			s += ", clients " + strings.Join(c.RunClients, "/")
		}
		if c.Runs[0].OwnIDs {
			s += ", both order-{{.Seq}}"
		}
	case shapeReplay:
		s += fmt.Sprintf(", %d recorded sends", len(c.Recorded))
		if c.BuiltIn {
			s += ", built-in replay scenario"
		}
	case shapeShards:
		s += fmt.Sprintf(", %d shards", c.Shards)
		switch {
		case c.Kill >= 0 && c.Term > 0:
			s += fmt.Sprintf(", shard %d stopped (SIGTERM, SIGKILL %s later)", c.Kill, c.Term)
		case c.Kill >= 0:
			s += fmt.Sprintf(", shard %d killed", c.Kill)
		}
	}
	return s + ")"
}

// drawMulti draws the case of seed: a shape, and for each of its runs a case
// of the single-run generator (genCase) of the API the shape needs, made
// standalone and small. Runs that share the simulator share its faults.
func drawMulti(seed int64) mCase {
	// ChaCha8: nearby seeds draw unrelated cases (PCG's first draws of
	// nearby seeds are alike).
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], uint64(seed))
	copy(key[8:], "oracle-multi")
	r := rand.New(rand.NewChaCha8(key))
	sub := func(api string, k int64) oCase {
		for i := int64(0); ; i++ {
			c := genBase(seed*7919 + k*104729 + i)
			if c.API != api {
				continue
			}
			c.Seed, c.Standalone, c.Limit = seed, true, nil
			c.Grace = 4 * time.Second
			return c
		}
	}
	apis := []string{rundir.APINotify, rundir.APIMessaging}
	c := mCase{Seed: seed, Kill: -1}
	// The shapes in turn, so that any four seeds in a row draw each.
	switch ((seed-1)%4 + 4) % 4 {
	case 0:
		c.Shape = shapeParts
		c.Runs = []oCase{sub(rundir.APINotify, 0), sub(rundir.APIMessaging, 1)}
		c.Swallow = []string{"", "/webhook", "/callback"}[r.IntN(3)]
	case 1:
		c.Shape = shapeConcurrent
		api := apis[r.IntN(2)]
		c.Runs = []oCase{sub(api, 0), sub(api, 1)}
		if api == rundir.APINotify {
			own := r.IntN(4) > 0
			for i := range c.Runs {
				c.Runs[i].Clients, c.Runs[i].OwnIDs = 1, own
			}
			c.RunClients = []string{"demo-1", "demo-2"}
			if !own && r.IntN(2) == 0 {
				c.RunClients[1] = "demo-1" // one client, its tags apart
			}
		}
	case 3:
		c.Shape = shapeReplay
		o := sub(rundir.APINotify, 0)
		o.OwnIDs, o.Probes, o.Clients = false, 0, 1+r.IntN(2)
		c.Runs = []oCase{o}
		at := time.Duration(0)
		for range 4 + r.IntN(20) {
			at += time.Duration(20+r.IntN(150)) * time.Millisecond
			c.Recorded = append(c.Recorded, mRec{Client: fmt.Sprintf("app-%d", 1+r.IntN(o.Clients)), At: at})
		}
		if c.BuiltIn = r.IntN(2) == 0; c.BuiltIn {
			c.Runs[0].Retry = false // the built-in scenario retries nothing
		}
	case 2:
		c.Shape = shapeShards
		o := sub(apis[r.IntN(2)], 0)
		// Long enough that a kill comes mid-attack: 2 to 3 s.
		o.Load = oLoad{Profile: "constant", Rate: 8 + r.IntN(13), Requests: 0}
		o.Load.Requests = o.Load.Rate * (2 + r.IntN(2))
		c.Runs = []oCase{o}
		c.Shards = 2 + r.IntN(2)
		if r.IntN(2) == 0 {
			c.Kill, c.KillAfter = r.IntN(c.Shards), 1+r.IntN(4)
			if r.IntN(2) == 0 {
				c.Term = time.Duration(200+r.IntN(1800)) * time.Millisecond
			}
		}
	}
	// One simulator: the faults, callbacks and retries of the first run.
	for i := 1; i < len(c.Runs); i++ {
		c.Runs[i].Faults, c.Runs[i].Callbacks, c.Runs[i].Retry = c.Runs[0].Faults, c.Runs[0].Callbacks, c.Runs[0].Retry
	}
	return c
}

// simCase is one oCase whose simConfig serves every run of c: the first
// run's faults and callbacks, every run's channel profiles, the notify
// delays and outcomes of the first notify run.
func (c mCase) simCase() oCase {
	s := c.Runs[0]
	s.Profiles = map[string]oProf{}
	notified := false
	for _, r := range c.Runs {
		for ch, p := range r.Profiles {
			if _, ok := s.Profiles[ch]; !ok {
				s.Profiles[ch] = p
			}
		}
		if r.API == rundir.APINotify && !notified {
			s.Notify, s.NotifyOutcomes, notified = r.Notify, r.NotifyOutcomes, true
		}
	}
	return s
}

type mResult struct {
	c        mCase
	dir      string
	stderr   string
	err      error
	problems []string
	notes    []string
	elapsed  time.Duration
}

// mEnv is the standalone simulator and sink of a case.
type mEnv struct {
	sv              *sim.Server
	simURL, sinkURL string
	close           func()
}

// startEnv starts the case's simulator and sink; calls to swallow are
// answered 200 by the sink's front and never reach the sink.
func startEnv(c mCase, dir string) (*mEnv, error) {
	k, err := sink.New(sink.Options{LogPath: filepath.Join(dir, "standalone-sink.jsonl")}, prometheus.NewRegistry())
	if err != nil {
		return nil, err
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.Swallow != "" && r.Method == http.MethodPost && r.URL.Path == c.Swallow {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusOK)
			return
		}
		k.Handler().ServeHTTP(w, r)
	}))
	sv, err := sim.New(c.simCase().simConfig(), prometheus.NewRegistry())
	if err != nil {
		front.Close()
		k.Close()
		return nil, err
	}
	ss := httptest.NewServer(sv.Handler())
	return &mEnv{sv: sv, simURL: ss.URL, sinkURL: front.URL, close: func() {
		ss.Close()
		sv.Close()
		front.Close()
		k.Close()
	}}, nil
}

// runMultiCase runs c under root and checks it.
func runMultiCase(c mCase, root string) (res mResult) {
	res.c = c
	began := time.Now()
	defer func() { res.elapsed = time.Since(began) }()
	res.dir = filepath.Join(root, fmt.Sprintf("seed-%d", c.Seed))
	if res.err = os.MkdirAll(res.dir, 0o755); res.err != nil {
		return
	}
	env, err := startEnv(c, res.dir)
	if err != nil {
		res.err = err
		return
	}
	defer env.close()
	switch c.Shape {
	case shapeShards:
		runShardsCase(c, env, &res)
	default:
		runRunsCase(c, env, &res)
	}
	return res
}

// runRunsCase runs the parts, concurrent runs or replay of c and checks each
// run (part) against its own oracle.
func runRunsCase(c mCase, env *mEnv, res *mResult) {
	srcs, err := c.sources(env, res.dir)
	if err != nil {
		res.err = err
		return
	}
	runs := runAll(c, srcs, res)
	if res.err != nil {
		return
	}
	deadline := time.Time{}
	for _, r := range runs {
		if d := raw0Deadline(r.dir); d.After(deadline) {
			deadline = d
		}
	}
	all := filepath.Join(res.dir, "truth-all.json")
	waitSimDone(env.sv, deadline, c.Runs[0].Callbacks.Delay+300*time.Millisecond)
	if res.err = fetchTruth(env.simURL, all); res.err != nil {
		return
	}
	for _, r := range runs {
		res.checkRun(c, r, all)
	}
}

// sources are the scenarios of c's runs.
func (c mCase) sources(env *mEnv, dir string) ([]*scenarios.Scenario, error) {
	var srcs []string
	switch c.Shape {
	case shapeParts:
		srcs = []string{c.partsYAML(env)}
	case shapeConcurrent:
		for i, r := range c.Runs {
			y := strings.Replace(r.scenarioYAML(env.simURL, env.sinkURL), fmt.Sprintf("name: oracle-%d\n", c.Seed), fmt.Sprintf("name: oracle-multi-%d-%c\n", c.Seed, 'a'+i), 1)
			if len(c.RunClients) > i {
				y = strings.Replace(y, "clientId: demo-1,", "clientId: "+c.RunClients[i]+",", 1)
			}
			srcs = append(srcs, y)
		}
	case shapeReplay:
		har := filepath.Join(dir, "rec.har")
		if err := c.writeRecording(har); err != nil {
			return nil, err
		}
		if c.BuiltIn {
			s, _, err := ReplayScenario(c.replayOptions(env, har))
			return []*scenarios.Scenario{s}, err
		}
		srcs = []string{c.replayYAML(env)}
	default:
		return nil, fmt.Errorf("shape %q: not run by runRunsCase", c.Shape)
	}
	var out []*scenarios.Scenario
	for i, src := range srcs {
		s, err := scenarios.Parse(fmt.Sprintf("oracle-multi-%d-%d.yaml", c.Seed, i), dir, []byte(src), func(string) string { return "" })
		if err != nil {
			return nil, fmt.Errorf("scenario: %w\n%s", err, src)
		}
		out = append(out, s)
	}
	return out, nil
}

// mRun is one run (or part) of a case and the generated case it is.
type mRun struct {
	c   oCase
	dir string
}

// runAll runs the scenarios srcs at once and returns their runs (parts).
func runAll(c mCase, srcs []*scenarios.Scenario, res *mResult) []mRun {
	outs := make([]*Result, len(srcs))
	errs := make([]error, len(srcs))
	stderrs := make([]syncBuffer, len(srcs))
	var wg sync.WaitGroup
	for i, s := range srcs {
		wg.Go(func() {
			outs[i], errs[i] = Run(context.Background(), Options{Scenario: s, Out: filepath.Join(res.dir, fmt.Sprintf("run-%d", i)), Stdout: io.Discard, Stderr: &stderrs[i], Quiet: true})
		})
	}
	wg.Wait()
	for i := range srcs {
		res.stderr += stderrs[i].String()
		if res.err == nil && errs[i] != nil {
			res.err = errs[i]
		}
	}
	if res.err != nil {
		return nil
	}
	var runs []mRun
	for i, out := range outs {
		for j, p := range out.Parts {
			oc := c.Runs[i]
			if c.Shape == shapeParts {
				oc = c.Runs[j]
			}
			switch {
			case p.Err != nil:
				res.err = fmt.Errorf("%s: %w", p.Dir, p.Err)
			case p.API != oc.API:
				res.err = fmt.Errorf("part %s is %s, the case's %s", p.Name, p.API, oc.API)
			}
			if res.err != nil {
				return nil
			}
			runs = append(runs, mRun{oc, p.Dir})
		}
	}
	return runs
}

// checkRun checks run r of c against the oracle of its raw files and the
// truth at all kept to its messages.
func (res *mResult) checkRun(c mCase, r mRun, all string) {
	label := filepath.Base(r.dir)
	raws, cut, err := readRunRaws([]string{r.dir})
	if err != nil {
		res.err = err
		return
	}
	for _, why := range cut {
		res.problems = append(res.problems, "raw file: "+why+" (no process was killed)")
	}
	swallowed := c.Swallow != "" && routeAPI(c.Swallow) == r.c.API
	raw, err := unionRaw(raws, all, filepath.Join(r.dir, "oracle-truth.json"), swallowed, nil)
	if err != nil {
		res.err = err
		return
	}
	summary := filepath.Join(r.dir, rundir.SummaryFile)
	res.check(label, r.c, raw, summary)
	if c.Shape == shapeReplay {
		res.checkUnmatched(label, r.dir, raw)
	}
	if swallowed {
		res.checkAllLost(label, summary)
	}
}

// routeAPI is the API whose calls arrive on a sink route.
func routeAPI(route string) string {
	if route == "/webhook" {
		return rundir.APINotify
	}
	return rundir.APIMessaging
}

// check compares the summary at path with the oracle's figures of raw.
func (res *mResult) check(label string, oc oCase, raw *oRaw, path string) {
	sum, err := readSummaryMap(path)
	if err != nil {
		res.err = err
		return
	}
	want := oc.figures(raw)
	probs, notes := compareFigures(oc, want, sum)
	for _, p := range probs {
		res.problems = append(res.problems, label+": "+p)
	}
	for _, n := range append(want.notes, notes...) {
		res.notes = append(res.notes, label+": "+n)
	}
	if v, _ := sum.at("verdict"); v != reports.VerdictPass {
		rs, _ := sum.at("verdict_reasons")
		res.notes = append(res.notes, fmt.Sprintf("%s: verdict %v %v (figures compared all the same)", label, v, rs))
	}
}

// checkUnmatched: a replay's events that are not its own (ownEvents) are
// its unmatched ones, no more: the recorded run's tags it kept join by the
// notificationId answered.
func (res *mResult) checkUnmatched(label, dir string, own *oRaw) {
	sum, err := readSummaryMap(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		res.err = err
		return
	}
	all, err := readJSONLines[rundir.Event](filepath.Join(dir, rundir.EventsFile))
	if err != nil {
		res.err = err
		return
	}
	want := int64(len(all) - len(own.events))
	got, ok := sum.num("delivery.unmatched")
	if !ok || got != float64(want) {
		res.problems = append(res.problems, fmt.Sprintf("%s: delivery.unmatched: expected %d, measured %v (events of the copy that join no send of the run by its tag or the id the service answered)", label, want, got))
	}
}

// checkAllLost: a part none of whose calls arrived has every accepted
// message lost (whatever the other part received).
func (res *mResult) checkAllLost(label, path string) {
	sum, err := readSummaryMap(path)
	if err != nil {
		return
	}
	acc, _ := sum.num("requests.accepted")
	lost, _ := sum.num("delivery.lost")
	rec, _ := sum.num("delivery.received")
	if lost != acc || rec != 0 {
		res.problems = append(res.problems, fmt.Sprintf("%s: delivery.lost: expected %v (every accepted message: none of its calls arrived), measured %v, received %v", label, acc, lost, rec))
	}
	if v, _ := sum.at("verdict"); v == reports.VerdictPass && acc > 0 {
		res.problems = append(res.problems, fmt.Sprintf("%s: verdict: expected not pass, measured pass with %v of %v accepted lost", label, lost, acc))
	}
}

// partsYAML is a scenario with a part per run of c (n: notify, m:
// messaging), each its oCase's standalone scenario indented.
func (c mCase) partsYAML(env *mEnv) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: oracle-multi-%d\nparts:\n", c.Seed)
	for _, r := range c.Runs {
		y := r.scenarioYAML(env.simURL, env.sinkURL)
		y = strings.Replace(y, fmt.Sprintf("name: oracle-%d\n", c.Seed), "name: "+r.API[:1]+"\n", 1)
		for i, line := range strings.Split(strings.TrimRight(y, "\n"), "\n") {
			if i == 0 {
				b.WriteString("  - " + line + "\n")
			} else {
				b.WriteString("    " + line + "\n")
			}
		}
		if c.Swallow != "" && routeAPI(c.Swallow) == r.API {
			// A part whose every message is lost must not pass.
			b.WriteString("    thresholds: [ \"delivery.lost == 0\" ]\n")
		}
	}
	return b.String()
}

// replayYAML is the scenario replaying rec.har with its externalIds kept,
// each recorded client one of the run's.
func (c mCase) replayYAML(env *mEnv) string {
	r := c.Runs[0]
	var b strings.Builder
	fmt.Fprintf(&b, "name: oracle-replay-%d\napi: notify\ntarget: { baseUrl: %q, tokenUrl: %q }\nsink: %q\nclients:\n", c.Seed, env.simURL, env.simURL+"/oauth/token", env.sinkURL)
	for i := range r.Clients {
		fmt.Fprintf(&b, "  - { clientId: demo-%d, clientSecret: demo }\n", i+1)
	}
	b.WriteString("load: { profile: replay, file: rec.har, speed: 1, externalIds: keep, clientHeader: X-Client }\n")
	b.WriteString("limit: { rate: 100000/1m, mode: exceed }\n")
	if r.Retry {
		b.WriteString("retry: { on: [500, 503, timeout], max: 2, backoff: 50ms, jitter: 0, timeout: 5s }\n")
	} else {
		b.WriteString("retry: { max: 0, timeout: 5s }\n")
	}
	fmt.Fprintf(&b, "delivery: { via: sink, grace: %s }\n", r.Grace)
	return b.String()
}

// replayOptions are those of msgload replay har --notify-url … --sink …:
// the built-in replay scenario against the test's simulator and sink.
func (c mCase) replayOptions(env *mEnv, har string) ReplayOptions {
	o := ReplayOptions{File: har, ClientHeader: "X-Client", NotifyURL: env.simURL, SinkURL: env.sinkURL,
		Grace: c.Runs[0].Grace, Timeout: 5 * time.Second}
	for i := range c.Runs[0].Clients {
		o.Notify = append(o.Notify, scenarios.Cred{ID: fmt.Sprintf("demo-%d", i+1), Secret: "demo"})
	}
	return o
}

// writeRecording writes the HAR of c's recorded sends: msgload's own tagged
// externalIds of another run.
func (c mCase) writeRecording(path string) error {
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var entries []string
	for i, rec := range c.Recorded {
		ext := rundir.Tag{Run: fmt.Sprintf("recorded-%d", c.Seed), Seq: int64(i + 1), First: start.Add(rec.At)}.ExternalID()
		body := fmt.Sprintf(`{"externalId":%q,"recipient":{"value":"+7999000%04d"},"notificationText":"recorded %d"}`, ext, i, i)
		entries = append(entries, harEntry(start.Add(rec.At), "POST", "http://api.example/api/v1/notifications", rec.Client, body, 200))
	}
	har := `{"log":{"version":"1.2","creator":{"name":"oracle","version":"1"},"entries":[` + strings.Join(entries, ",\n") + `]}}`
	return os.WriteFile(path, []byte(har), 0o644)
}

// readRunRaws reads each directory's raw files, without truth. A JSON
// Lines file whose last line was cut short (by a kill) is read up to that
// line, from a copy cut there (the run's own files stay as they are); cut
// says which directory and why.
func readRunRaws(dirs []string) (out []*oRaw, cut map[int]string, err error) {
	cut = map[int]string{}
	for i, d := range dirs {
		r, err := readRaw(d, filepath.Join(d, "no-truth"))
		if err != nil {
			first := err
			cdir, cerr := cutCopy(d)
			if cerr != nil {
				return nil, nil, fmt.Errorf("%v (%v)", err, cerr)
			}
			if r, err = readRaw(cdir, filepath.Join(cdir, "no-truth")); err != nil {
				return nil, nil, err
			}
			cut[i] = fmt.Sprintf("%s: a line cut short (%v): read up to it", d, first)
		}
		out = append(out, r)
	}
	return out, cut, nil
}

// cutCopy copies run.json, attempts.jsonl and events.jsonl of dir into
// dir.oracle-cut, each JSON Lines file up to its last whole line.
func cutCopy(dir string) (string, error) {
	out := dir + ".oracle-cut"
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	for _, name := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.EventsFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return "", err
		}
		if name != rundir.MetaFile {
			b = b[:bytes.LastIndexByte(b, '\n')+1]
		}
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return "", err
		}
	}
	return out, nil
}

// unionRaw is the run the raws make together (one run, or the shards of
// one): the attempts of all, the events of all once each, then only those
// that are this run's (mOwn.events), with the truth at all filtered to
// this run's messages and written to truthPath. swallowed drops the run's
// calls from the truth (the test's front took them: the sink never saw
// them); meta, when set, is the union's run.json (else the first's).
func unionRaw(raws []*oRaw, all, truthPath string, swallowed bool, meta *rundir.Meta) (*oRaw, error) {
	u := &oRaw{meta: raws[0].meta}
	if meta != nil {
		u.meta = *meta
	}
	once := map[string]bool{}
	for _, r := range raws {
		u.attempts = append(u.attempts, r.attempts...)
		for _, e := range r.events {
			b, _ := json.Marshal(e)
			if !once[string(b)] {
				once[string(b)] = true
				u.events = append(u.events, e)
			}
		}
	}
	own := ownIDs(u)
	u.events = own.events(u)
	if err := filterTruth(all, truthPath, own, u.meta, swallowed); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(truthPath)
	if err != nil {
		return nil, err
	}
	// As readRaw reads a truth.json: the records and each call's channel.
	u.truth = &rundir.Truth{}
	var chans struct {
		Callbacks []struct {
			Channel string `json:"channel"`
		} `json:"callbacks"`
	}
	if err := json.Unmarshal(b, u.truth); err != nil {
		return nil, fmt.Errorf("%s: %v", truthPath, err)
	}
	if json.Unmarshal(b, &chans) == nil && len(chans.Callbacks) == len(u.truth.Callbacks) {
		for _, cb := range chans.Callbacks {
			u.cbChannels = append(u.cbChannels, cb.Channel)
		}
	}
	return u, nil
}

// mOwn is what names a run's messages: the ids the service answered its
// sends, and its sequences.
type mOwn struct {
	ids  map[string]bool
	seqs map[int64]bool
	api  string
}

func ownIDs(r *oRaw) mOwn {
	o := mOwn{ids: map[string]bool{}, seqs: map[int64]bool{}, api: r.meta.API}
	for _, a := range r.attempts {
		if a.Op != "send" || a.Seq <= 0 {
			continue
		}
		o.seqs[a.Seq] = true
		if a.API != "" {
			o.api = a.API
		}
		for _, id := range []string{a.TxID, a.NotificationID} {
			if id != "" {
				o.ids[id] = true
			}
		}
	}
	return o
}

// mTag is a msgload tag as the oracle reads it.
type mTag struct {
	run, part string
	seq       int64
}

// parseExtTag reads ml.<run>[.<part>].<seq>.<nanos>.
func parseExtTag(ext string) (mTag, bool) {
	f := strings.Split(ext, ".")
	if len(f) < 4 || len(f) > 5 || f[0] != "ml" {
		return mTag{}, false
	}
	t := mTag{run: f[1]}
	if len(f) == 5 {
		t.part = f[2]
	}
	n, err := strconv.ParseInt(f[len(f)-2], 10, 64)
	t.seq = n
	return t, err == nil
}

// owns says whether tag t names a message of r.
func (o mOwn) owns(t mTag, m rundir.Meta) bool {
	return t.run == m.ID && t.part == m.Part && o.seqs[t.seq]
}

// events are the events of r that are its own (DESIGN.md: a tagged event by
// its run, part and sequence; an untagged one only by the txId or
// notificationId the service answered), with a notify part's tag rewritten
// without its part, as figures reads a tag.
func (o mOwn) events(r *oRaw) []rundir.Event {
	var out []rundir.Event
	for _, e := range r.events {
		var p struct {
			TxID           string         `json:"txId"`
			NotificationID string         `json:"notificationId"`
			ExternalID     string         `json:"externalId"`
			TrackData      map[string]any `json:"trackData"`
		}
		if json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		switch e.Kind {
		case rundir.KindCallback:
			t := mTag{run: fmt.Sprint(p.TrackData[rundir.TrackRun])}
			if v, ok := p.TrackData[rundir.TrackPart]; ok {
				t.part = fmt.Sprint(v)
			}
			t.seq, _ = strconv.ParseInt(fmt.Sprint(p.TrackData[rundir.TrackSeq]), 10, 64)
			if o.ids[p.TxID] || p.TrackData != nil && o.owns(t, r.meta) {
				out = append(out, e)
			}
		case rundir.KindWebhook:
			t, tagged := parseExtTag(p.ExternalID)
			if !o.ids[p.NotificationID] && !(tagged && o.owns(t, r.meta)) {
				continue
			}
			if tagged && t.part != "" {
				var body map[string]any
				if json.Unmarshal(e.Payload, &body) == nil {
					f := strings.Split(p.ExternalID, ".")
					body["externalId"] = strings.Join([]string{f[0], f[1], f[3], f[4]}, ".")
					e.Payload, _ = json.Marshal(body)
				}
			}
			out = append(out, e)
		}
	}
	return out
}

// filterTruth writes to path the truth at all kept to own's messages (by the
// id the service answered, or the tag the simulator read), their calls
// (none when swallowed), a messaging part's tag key without its part.
func filterTruth(all, path string, own mOwn, meta rundir.Meta, swallowed bool) error {
	b, err := os.ReadFile(all)
	if err != nil {
		return err
	}
	var t map[string]any
	if err := json.Unmarshal(b, &t); err != nil {
		return fmt.Errorf("%s: %v", all, err)
	}
	keep := map[string]bool{}
	var msgs []any
	list := func(k string) []any { l, _ := t[k].([]any); return l }
	for _, x := range list("messages") {
		m, _ := x.(map[string]any)
		id, _ := m["id"].(string)
		ext, _ := m["external_id"].(string)
		api, _ := m["api"].(string)
		if api != own.api {
			continue
		}
		mine := own.ids[id]
		if api == rundir.APIMessaging {
			// run[.part].seq, the simulator's key of the trackData tag
			f := strings.Split(ext, ".")
			tag := mTag{run: f[0]}
			if len(f) == 3 {
				tag.part = f[1]
			}
			tag.seq, _ = strconv.ParseInt(f[len(f)-1], 10, 64)
			if len(f) >= 2 && own.owns(tag, meta) {
				mine = true
				m["external_id"] = tag.run + "." + strconv.FormatInt(tag.seq, 10)
			}
		} else if tag, ok := parseExtTag(ext); ok && own.owns(tag, meta) {
			mine = true
		}
		if mine {
			keep[id] = true
			msgs = append(msgs, m)
		}
	}
	var cbs []any
	for _, x := range list("callbacks") {
		m, _ := x.(map[string]any)
		if id, _ := m["id"].(string); keep[id] && !swallowed {
			cbs = append(cbs, m)
		}
	}
	t["messages"], t["callbacks"] = msgs, cbs
	out, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// ---- shards ----

// mShardEnv carries a shard's run to TestOracleMultiShardProcess.
const mShardEnv = "MSGLOAD_ORACLE_SHARD"

type mShardJob struct {
	Scenario string    `json:"scenario"` // the scenario file
	Out      string    `json:"out"`
	Index    int       `json:"index"`
	Count    int       `json:"count"`
	StartAt  time.Time `json:"start_at"`
}

// TestOracleMultiShardProcess is not a test: it is the shard process that
// TestOracleMulti starts (this test binary, run again) and kills.
func TestOracleMultiShardProcess(t *testing.T) {
	js := os.Getenv(mShardEnv)
	if js == "" {
		t.Skip("the shard process of TestOracleMulti")
	}
	var j mShardJob
	if err := json.Unmarshal([]byte(js), &j); err != nil {
		t.Fatal(err)
	}
	// Signals as msgload's own process takes them: the first SIGTERM stops
	// the sends (and flushes what was sent), the grace is still waited.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM)
	if _, err := runShard(j, os.Stderr, sig); err != nil {
		t.Fatal(err)
	}
}

// runShard runs shard j.Index of the scenario file; sig carries the
// process's signals to Run (nil in the test's own process).
func runShard(j mShardJob, stderr io.Writer, sig <-chan os.Signal) (*Result, error) {
	src, err := os.ReadFile(j.Scenario)
	if err != nil {
		return nil, err
	}
	s, err := scenarios.Parse(filepath.Base(j.Scenario), filepath.Dir(j.Scenario), src, func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	return Run(context.Background(), Options{Scenario: s, Out: j.Out, Stdout: io.Discard, Stderr: stderr, Quiet: true,
		ShardIndex: j.Index, ShardCount: j.Count, StartAt: j.StartAt, Signals: sig})
}

// runShardsCase runs the shards of c at once (the one stopped in a process
// of its own), merges them (render.Merge) and checks the merged summary
// against the oracle over the union of the shards' raw files, and each
// shard that finished against its own.
func runShardsCase(c mCase, env *mEnv, res *mResult) {
	oc := c.Runs[0]
	dirs, stopped := runShards(c, env, res)
	if res.err != nil {
		return
	}
	raws, cut, err := readRunRaws(dirs)
	if err != nil {
		res.err = err
		return
	}
	for i, why := range cut {
		if stopped && i == c.Kill {
			res.notes = append(res.notes, why)
		} else {
			res.problems = append(res.problems, "raw file: "+why+" (a shard that finished)")
		}
	}
	// A shard killed before its end copied no events from the sink: the
	// truth judges only the others' messages.
	gone := stopped && raws[c.Kill].meta.End.IsZero()
	meta := unionMeta(raws)
	waitSimDone(env.sv, meta.AttackEnd.Add(meta.Delivery.Grace.D()), oc.Callbacks.Delay+300*time.Millisecond)
	all := filepath.Join(res.dir, "truth-all.json")
	if res.err = fetchTruth(env.simURL, all); res.err != nil {
		return
	}
	merged := filepath.Join(res.dir, "merged")
	if _, err := render.Merge(merged, dirs, reports.MergeOptions{}); err != nil {
		res.err = fmt.Errorf("merge: %w", err)
		return
	}
	var judged []*oRaw
	for i, r := range raws {
		if !(gone && i == c.Kill) {
			judged = append(judged, r)
		}
	}
	u, err := unionRaw(raws, all, filepath.Join(res.dir, "oracle-truth.json"), false, &meta)
	if err == nil && gone {
		var ju *oRaw
		if ju, err = unionRaw(judged, all, filepath.Join(res.dir, "oracle-truth.json"), false, &meta); err == nil {
			u.truth, u.cbChannels = ju.truth, ju.cbChannels
		}
	}
	if err != nil {
		res.err = err
		return
	}
	res.check("merged", oc, u, filepath.Join(merged, rundir.SummaryFile))
	for i, r := range raws {
		if gone && i == c.Kill {
			continue
		}
		one, err := unionRaw([]*oRaw{r}, all, filepath.Join(dirs[i], "oracle-truth.json"), false, nil)
		if err != nil {
			res.err = err
			return
		}
		res.check(fmt.Sprintf("shard %d", i), oc, one, filepath.Join(dirs[i], rundir.SummaryFile))
	}
	if stopped {
		res.checkStopped(c, filepath.Join(merged, rundir.SummaryFile))
	}
}

// runShards runs the shards of c at once, from one start instant, the one
// to stop (c.Kill) in a process of its own; it returns the shards'
// directories and whether that one was signalled before it ended.
func runShards(c mCase, env *mEnv, res *mResult) (dirs []string, stopped bool) {
	scen := filepath.Join(res.dir, "sharded.yaml")
	y := strings.Replace(c.Runs[0].scenarioYAML(env.simURL, env.sinkURL), fmt.Sprintf("name: oracle-%d\n", c.Seed), fmt.Sprintf("name: oracle-shards-%d\n", c.Seed), 1)
	if res.err = os.WriteFile(scen, []byte(y), 0o644); res.err != nil {
		return nil, false
	}
	out := filepath.Join(res.dir, "runs")
	start := time.Now().Add(2 * time.Second) // the stopped shard's process starts in time
	errs := make([]error, c.Shards)
	stderrs := make([]syncBuffer, c.Shards)
	var wg sync.WaitGroup
	for i := range c.Shards {
		j := mShardJob{Scenario: scen, Out: out, Index: i, Count: c.Shards, StartAt: start}
		if i == c.Kill {
			wg.Go(func() { stopped, errs[i] = stopShard(j, c.KillAfter, c.Term, &stderrs[i]) })
			continue
		}
		wg.Go(func() {
			r, err := runShard(j, &stderrs[i], nil)
			if err == nil && r.Parts[0].Err != nil {
				err = r.Parts[0].Err
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i := range c.Shards {
		res.stderr += stderrs[i].String()
		if errs[i] != nil {
			res.err = fmt.Errorf("shard %d: %w", i, errs[i])
			return nil, false
		}
	}
	if c.Kill >= 0 && !stopped {
		res.notes = append(res.notes, fmt.Sprintf("shard %d finished before it had flushed %d attempts: nothing stopped", c.Kill, c.KillAfter))
	}
	ids, _ := os.ReadDir(out)
	if len(ids) != 1 {
		res.err = fmt.Errorf("the shards made %d run directories, want 1", len(ids))
		return nil, false
	}
	for i := range c.Shards {
		dirs = append(dirs, filepath.Join(out, ids[0].Name(), rundir.Shard{Index: i, Count: c.Shards}.Dir()))
	}
	return dirs, stopped
}

// unionMeta is the run.json of the shards' union as one process would have
// it: their id and plan, the first start, the last attack end and end.
func unionMeta(raws []*oRaw) rundir.Meta {
	meta := raws[0].meta
	for _, r := range raws {
		if r.meta.AttackEnd.After(meta.AttackEnd) {
			meta.AttackEnd = r.meta.AttackEnd
		}
		if r.meta.End.After(meta.End) {
			meta.End = r.meta.End
		}
		if !r.meta.Start.IsZero() && r.meta.Start.Before(meta.Start) {
			meta.Start = r.meta.Start
		}
	}
	return meta
}

// checkStopped: the merge of a run with a shard killed (or stopped by
// SIGTERM) is never pass, and its reasons name the shard.
func (res *mResult) checkStopped(c mCase, path string) {
	sum, err := readSummaryMap(path)
	if err != nil {
		res.err = err
		return
	}
	v, _ := sum.at("verdict")
	rs, _ := sum.at("verdict_reasons")
	name := "shard " + rundir.Shard{Index: c.Kill, Count: c.Shards}.String()
	if v != reports.VerdictIncomplete && v != reports.VerdictError || !strings.Contains(fmt.Sprint(rs), name) {
		res.problems = append(res.problems, fmt.Sprintf("merged verdict: expected incomplete (or error) naming %s (stopped), measured %v %v", name, v, rs))
	}
}

// stopShard runs shard j in a process of its own and, once its
// attempts.jsonl holds after lines, kills it with SIGKILL — or, with term >
// 0, sends SIGTERM and SIGKILL term later if it still runs, as a pod is
// stopped. stopped is false when it ended before.
func stopShard(j mShardJob, after int, term time.Duration, stderr io.Writer) (stopped bool, err error) {
	js, _ := json.Marshal(j)
	cmd := exec.Command(os.Args[0], "-test.run=^TestOracleMultiShardProcess$")
	cmd.Env = append(os.Environ(), mShardEnv+"="+string(js))
	cmd.Stderr, cmd.Stdout = stderr, io.Discard
	if err := cmd.Start(); err != nil {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	glob := filepath.Join(j.Out, "*", rundir.Shard{Index: j.Index, Count: j.Count}.Dir(), rundir.AttemptsFile)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(2 * time.Minute)
	for {
		select {
		case err := <-done:
			return false, err
		case <-limit:
			_ = cmd.Process.Kill()
			<-done
			return false, fmt.Errorf("shard %d did not flush %d attempts in 2 minutes", j.Index, after)
		case <-tick.C:
			ms, _ := filepath.Glob(glob)
			if len(ms) == 0 {
				continue
			}
			if b, _ := os.ReadFile(ms[0]); bytes.Count(b, []byte("\n")) < after {
				continue
			}
			if term > 0 {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-done: // it finished its grace and reports in time
					return true, nil
				case <-time.After(term):
				}
			}
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			return true, nil
		}
	}
}
