package harness

// TestOracle runs generated scenarios (oracle_gen_test.go) through Run and
// checks summary.json against figures the test computes itself from the run's
// raw files and the simulator's truth (oracle_figures_test.go). It shares no
// code with what it checks: no package reports or sink, no rule helper of
// rundir. Failing seeds go into testdata/oracle/regressions.txt (one a line,
// '#' starts a comment) and are always run first.
//
//	go test ./harness -run Oracle                      # 40 cases (8 with -short)
//	go test ./harness -run Oracle -oracle.cases 1000   # many
//	go test ./harness -run Oracle -oracle.seed 17 -v   # one seed again

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

var (
	oracleCases    = flag.Int("oracle.cases", 0, "TestOracle: generated cases to run (default 40, 8 with -short)")
	oracleSeed     = flag.String("oracle.seed", "", "TestOracle: run only these seeds (comma-separated)")
	oracleParallel = flag.Int("oracle.parallel", 4, "TestOracle: cases run at once")
	oracleShape    = flag.String("oracle.shape", "", "TestOracle: run only cases of this shape (classic, slow, poll, vkok-reorder, sink-fault, processed-then-500): the first -oracle.cases seeds that draw it")
	oraclePctRel   = flag.Float64("oracle.pct-rel", 0, "TestOracle: relative error allowed in summary percentiles (0: exact to the microsecond, as the design says; 0.001 tolerates an HDR histogram of 3 significant digits)")
)

const oracleRegressions = "testdata/oracle/regressions.txt"

// standaloneSinkLog is the log of a standalone case's own sink, in its directory.
const standaloneSinkLog = "standalone-sink.jsonl"

func TestOracle(t *testing.T) {
	var keep func(int64) bool
	if *oracleShape != "" {
		keep = func(seed int64) bool { return genCase(seed).Shape == *oracleShape }
	}
	seeds := oracleSeeds(t, oracleRegressions, 40, 8, keep)
	root, err := os.MkdirTemp("", "msgload-oracle-")
	if err != nil {
		t.Fatal(err)
	}
	results := make([]oResult, len(seeds))
	par := max(*oracleParallel, 1)
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	began := time.Now()
	for i, s := range seeds {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = runOracleCase(genCase(s), root)
		}()
	}
	wg.Wait()
	failed := false
	for _, res := range results {
		t.Run(fmt.Sprintf("seed=%d", res.c.Seed), func(t *testing.T) {
			if res.skipped != "" {
				t.Logf("%s: not compared: %s", res.c.describe(), res.skipped)
				os.RemoveAll(res.dir)
				return
			}
			if res.err == nil && len(res.problems) == 0 {
				for _, n := range res.notes {
					t.Log(n)
				}
				t.Logf("%s, %d messages, %s", res.c.describe(), res.c.Load.Requests, res.elapsed.Round(time.Millisecond))
				if res.dir != "" {
					os.RemoveAll(res.dir)
				}
				return
			}
			failed = true
			cfg, err := yaml.Marshal(res.c)
			if err != nil {
				cfg = []byte(err.Error())
			}
			var b strings.Builder
			fmt.Fprintf(&b, "seed %d (%s): rerun with go test ./harness -run Oracle -oracle.seed %d\n", res.c.Seed, res.c.describe(), res.c.Seed)
			if res.err != nil {
				fmt.Fprintf(&b, "run error: %v\n", res.err)
			}
			for _, p := range res.problems {
				fmt.Fprintf(&b, "  %s\n", p)
			}
			for _, n := range res.notes {
				fmt.Fprintf(&b, "  note: %s\n", n)
			}
			fmt.Fprintf(&b, "run directory (kept): %s\ngenerated case:\n%s\nscenario:\n%s", res.runDir, cfg, res.yaml)
			if res.stderr != "" {
				fmt.Fprintf(&b, "stderr of the run:\n%s", res.stderr)
			}
			t.Error(b.String())
		})
	}
	t.Logf("%d cases in %s (%d at once)", len(seeds), time.Since(began).Round(time.Second), par)
	t.Logf("cases drawn per shape: %s", shapeCounts(results))
	skipped := 0
	for _, res := range results {
		if res.skipped != "" {
			skipped++
		}
	}
	if skipped > 0 {
		t.Logf("%d cases not compared: the faults drawn refused the run's set-up (webhook registration)", skipped)
	}
	// Failing cases per figure, for a run of many.
	byFigure := map[string]int{}
	for _, res := range results {
		figs := map[string]bool{}
		for _, p := range res.problems {
			fig, _, _ := strings.Cut(p, ": expected")
			figs[fig] = true
		}
		if res.err != nil {
			figs["run error"] = true
		}
		for f := range figs {
			byFigure[f]++
		}
	}
	if len(byFigure) > 0 {
		var lines []string
		for f, n := range byFigure {
			lines = append(lines, fmt.Sprintf("%5d  %s", n, f))
		}
		sort.Sort(sort.Reverse(sort.StringSlice(lines)))
		t.Logf("failing cases per figure:\n%s", strings.Join(lines, "\n"))
	}
	if !failed {
		os.RemoveAll(root)
	} else {
		t.Logf("run directories of failed cases kept under %s", root)
	}
}

// shapeCounts says how many cases of each shape (and of each API, load
// profile and target) were drawn.
func shapeCounts(results []oResult) string {
	n := map[string]int{}
	for _, res := range results {
		c := res.c
		n["shape "+c.Shape]++
		n[c.API]++
		n["load "+c.Load.Profile]++
		if c.Standalone {
			n["standalone"]++
		}
		if c.Incoming > 0 {
			n["incoming"]++
		}
		if c.MaxMessages > 0 {
			n["maxMessages"]++
		}
		for _, x := range res.showed {
			n["showed "+x]++
		}
	}
	keys := slices.Sorted(maps.Keys(n))
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%s %d", k, n[k])
	}
	return strings.Join(out, ", ")
}

// describe is a short line about c.
func (c oCase) describe() string {
	var parts []string
	parts = append(parts, c.Shape, c.API)
	if c.Simple {
		parts = append(parts, "simple")
	}
	if c.Standalone {
		parts = append(parts, "standalone sim+sink")
	}
	if len(c.Chain) > 0 {
		var ch []string
		for _, it := range c.Chain {
			s := it.Channel
			if it.Cond != "" {
				s += fmt.Sprintf("(%s,%ds)", it.Cond, it.TTL)
			}
			ch = append(ch, s)
		}
		parts = append(parts, strings.Join(ch, "→"))
	}
	parts = append(parts, c.Load.Profile)
	if c.Poll > 0 {
		parts = append(parts, fmt.Sprintf("poll every %s", c.Poll))
	}
	if f := c.SinkFault; f != nil {
		if f.Code != 0 {
			parts = append(parts, fmt.Sprintf("sink refuses %g with %d", f.Share, f.Code))
		} else {
			parts = append(parts, fmt.Sprintf("sink holds %g for %s (callback timeout %s)", f.Share, f.Delay, c.CallbackWait))
		}
	}
	parts = append(parts, fmt.Sprintf("grace %s", c.Grace))
	if c.Clients > 1 {
		parts = append(parts, fmt.Sprintf("%d clients", c.Clients))
	}
	if c.MaxMessages > 0 {
		parts = append(parts, fmt.Sprintf("maxMessages %d", c.MaxMessages))
	}
	if c.TextBytes > 0 || c.TextParts > 0 {
		parts = append(parts, fmt.Sprintf("text %dB/%d parts %s", c.TextBytes, c.TextParts, c.Fill))
	}
	if c.Incoming > 0 {
		parts = append(parts, fmt.Sprintf("incoming %g", c.Incoming))
	}
	if c.SimLatency > 0 {
		parts = append(parts, fmt.Sprintf("latency %s", c.SimLatency))
	}
	if len(c.Faults) > 0 {
		parts = append(parts, "faults")
	}
	if c.Retry {
		parts = append(parts, "retries")
	}
	if c.Callbacks != (oCallbacks{}) {
		parts = append(parts, "callback faults")
	}
	if c.Limit != nil {
		parts = append(parts, fmt.Sprintf("limit %d/%s %s", c.Limit.Requests, c.Limit.Window, c.Limit.Algorithm))
	}
	if c.Probes > 0 {
		parts = append(parts, "probes")
	}
	if c.OwnIDs {
		parts = append(parts, "own externalIds")
	}
	return strings.Join(parts, ", ")
}

type oResult struct {
	c        oCase
	yaml     string
	dir      string // this case's directory (removed when it passes)
	runDir   string
	stderr   string
	err      error
	problems []string
	notes    []string
	skipped  string   // why the case had nothing to compare (not a failure)
	showed   []string // what the case's figures exercised (censored latencies, redeliveries…)
	elapsed  time.Duration
}

// runOracleCase runs c under root and checks it.
func runOracleCase(c oCase, root string) (res oResult) {
	res.c = c
	began := time.Now()
	defer func() { res.elapsed = time.Since(began) }()
	dir := filepath.Join(root, fmt.Sprintf("seed-%d", c.Seed))
	res.dir = dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.err = err
		return
	}
	var simURL, sinkURL string
	var sv *sim.Server
	if c.Standalone {
		opts := sink.Options{LogPath: filepath.Join(dir, standaloneSinkLog)}
		if f := c.SinkFault; f != nil {
			opts.Fault = sink.Fault{Share: f.Share, Code: f.Code, Delay: f.Delay}
		}
		k, err := sink.New(opts, prometheus.NewRegistry())
		if err != nil {
			res.err = err
			return
		}
		defer k.Close()
		ks := httptest.NewServer(k.Handler())
		defer ks.Close()
		sv, err = sim.New(c.simConfig(), prometheus.NewRegistry())
		if err != nil {
			res.err = err
			return
		}
		defer sv.Close()
		ss := httptest.NewServer(sv.Handler())
		defer ss.Close()
		simURL, sinkURL = ss.URL, ks.URL
	}
	res.yaml = c.scenarioYAML(simURL, sinkURL)
	s, err := scenarios.Parse(fmt.Sprintf("oracle-%d.yaml", c.Seed), dir, []byte(res.yaml), func(string) string { return "" })
	if err != nil {
		res.err = fmt.Errorf("scenario: %w", err)
		return
	}
	var stderr strings.Builder
	out, err := Run(context.Background(), Options{Scenario: s, Out: dir, Stdout: io.Discard, Stderr: &stderr})
	res.stderr = stderr.String()
	if err == nil && out.Parts[0].Err != nil {
		err = out.Parts[0].Err
	}
	if err != nil && len(c.Faults) > 0 && strings.Contains(err.Error(), "register webhook") {
		// The faults drawn for the sends refused the webhook's registration
		// on every try (set-up, before any send): the run rightly did not
		// start, and there is nothing to compare.
		res.skipped = err.Error()
		return
	}
	if err != nil {
		res.err = err
		return
	}
	p := out.Parts[0]
	res.runDir = p.Dir
	if p.Err != nil {
		res.err = p.Err
		return
	}
	truthPath := ""
	if c.Standalone {
		// The simulator is not the harness's: its truth comes from its read
		// API, once it has nothing pending and its last calls had time to
		// start (at the latest at the run's deadline), so that calls the run
		// did not wait for are in it too.
		waitSimDone(sv, raw0Deadline(p.Dir), c.Callbacks.Delay+300*time.Millisecond)
		truthPath = filepath.Join(p.Dir, "oracle-truth.json")
		if err := fetchTruth(simURL, truthPath); err != nil {
			res.err = err
			return
		}
	}
	raw, err := readRaw(p.Dir, truthPath)
	if err != nil {
		res.err = err
		return
	}
	sum, err := readSummaryMap(filepath.Join(p.Dir, "summary.json"))
	if err != nil {
		res.err = err
		return
	}
	want := c.figures(raw)
	res.showed = want.showed()
	if c.Poll > 0 && c.Standalone {
		// Poll means poll: the service was given no callback address, so
		// the case's own sink saw none (not only the run's copy of it).
		evs, err := readJSONLines[map[string]any](filepath.Join(dir, standaloneSinkLog))
		if err != nil && !os.IsNotExist(err) {
			res.err = err
			return
		}
		for _, e := range evs {
			if e["kind"] == "callback" || e["kind"] == "webhook" {
				want.BesidePolls++
			}
		}
	}
	var notes []string
	res.problems, notes = compareFigures(c, want, sum)
	res.notes = append(want.notes, notes...)
	res.notes = append(res.notes, planNotes(sum)...)
	return res
}

// showed names what f exercised, so that a run of many cases says how
// many reached each rule (a shape that never shows its figure tests nothing).
func (f oFigures) showed() []string {
	var out []string
	for _, x := range []struct {
		name string
		n    int64
	}{{"censored", f.Latency.Censored}, {"duplicates", f.Duplicates}, {"redelivered", f.Redelivered}, {"refused", f.Refused},
		{"duplicate_deliveries", f.DupDeliveries}, {"unconfirmed", f.Unconfirmed}, {"failover steps", int64(len(f.Steps))},
		{"channel-less records", f.Channelless}, {"incoming replies", f.Replies}} {
		if x.n > 0 {
			out = append(out, x.name)
		}
	}
	return out
}

// planNotes says when the run did not hold its plan (the machine fell
// behind: an incomplete verdict with an environment reason). The oracle's
// figures come from the raw files of what was sent, whatever the plan, so
// they are compared all the same; the note says so.
func planNotes(sum oSum) []string {
	if v, _ := sum.at("verdict"); v != "incomplete" {
		return nil
	}
	rs, _ := sum.at("verdict_reasons")
	return []string{fmt.Sprintf("verdict incomplete (%v): the figures from the raw files are compared all the same", rs)}
}

// raw0Deadline is attack_end + grace of the run in dir (now when unreadable).
func raw0Deadline(dir string) time.Time {
	var m struct {
		AttackEnd time.Time `json:"attack_end"`
		Delivery  struct {
			Grace string `json:"grace"`
		} `json:"delivery"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return time.Now()
	}
	g, _ := time.ParseDuration(m.Delivery.Grace)
	return m.AttackEnd.Add(g)
}

// waitSimDone waits until sv has nothing pending, then linger, all at the
// latest until deadline.
func waitSimDone(sv *sim.Server, deadline time.Time, linger time.Duration) {
	for sv.Pending() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if d := time.Until(deadline); d < linger {
		linger = max(d, 0)
	}
	time.Sleep(linger)
}

func fetchTruth(simURL, path string) error {
	resp, err := http.Get(simURL + "/sim/v1/truth")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /sim/v1/truth: %s", resp.Status)
	}
	return os.WriteFile(path, b, 0o644)
}

// oSum is summary.json read as a generic tree.
type oSum map[string]any

func readSummaryMap(path string) (oSum, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m oSum
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("summary.json: %v", err)
	}
	return m, nil
}

// at walks a dotted path; ok is false when a part is missing.
func (s oSum) at(path string) (any, bool) {
	var cur any = map[string]any(s)
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func (s oSum) num(path string) (float64, bool) {
	v, ok := s.at(path)
	if !ok {
		return 0, false
	}
	f, ok := v.(float64)
	return f, ok
}

// compareFigures lists every figure of sum that differs from want.
func compareFigures(c oCase, want oFigures, sum oSum) (probs, notes []string) {
	bad := func(fig string, exp, got any, why string) {
		probs = append(probs, fmt.Sprintf("%s: expected %v, measured %v (%s)", fig, exp, got, why))
	}
	count := func(path string, exp int64, why string) {
		got, ok := sum.num(path)
		if !ok {
			bad(path, exp, "missing", why)
			return
		}
		if got != float64(exp) {
			bad(path, exp, got, why)
		}
	}
	seconds := func(path string, exp float64, why string) {
		got, ok := sum.num(path)
		if !ok {
			bad(path, exp, "missing", why)
			return
		}
		if math.Abs(got-exp) > math.Max(1.0001e-6, *oraclePctRel*math.Abs(exp)) {
			bad(path, fmt.Sprintf("%.6f", exp), fmt.Sprintf("%.6f", got), why)
		}
	}
	pcts := func(path string, p oPct, why string) {
		count(path+".count", p.Count, why)
		if p.Count == 0 {
			return
		}
		count(path+".censored", p.Censored, why)
		for _, q := range []struct {
			k string
			v float64
		}{{"p50", p.P50}, {"p90", p.P90}, {"p95", p.P95}, {"p99", p.P99}, {"max", p.Max}} {
			if p.Bound[q.k] { // only a lower bound: null, and the bound beside it
				if v, ok := sum.at(path + "." + q.k); !ok || v != nil {
					bad(path+"."+q.k, "null (a lower bound)", v, why)
				}
				seconds(path+"."+q.k+"_at_least", q.v, why)
				continue
			}
			seconds(path+"."+q.k, q.v, why)
		}
	}
	count("requests.total", want.Total, "attempts.jsonl lines")
	count("requests.messages", want.Messages, "first attempts of sends")
	count("requests.accepted", want.Accepted, "messages with a 2xx answer of the API on some attempt")
	count("idempotency.retries", want.Retries, "attempts after the first of any request, probes excluded")
	count("idempotency.probes", want.Probes, "probe attempts")
	codes := map[string]int64{}
	if v, ok := sum.at("requests.codes"); ok {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				if f, ok := x.(float64); ok && f != 0 {
					codes[k] = int64(f)
				}
			}
		}
	}
	if fmt.Sprint(sortedMap(codes)) != fmt.Sprint(sortedMap(want.Codes)) {
		bad("requests.codes", sortedMap(want.Codes), sortedMap(codes), "attempts by HTTP status")
	}
	count("delivery.expected", want.Expected, "accepted messages")
	count("delivery.received", want.Received, "accepted messages with an ending record")
	count("delivery.lost", want.Lost, "accepted, no ending record by attack_end+grace (late included)")
	count("delivery.late", want.Late, "ending record only after attack_end+grace")
	count("delivery.duplicates", want.Duplicates, "second arrivals of one (txId, channel, state) / (notification, status)")
	pcts("delivery.latency", want.Latency, "every accepted message: first send → first arrival of an ending record by the deadline, else censored at first send → deadline; nearest rank, the censored last")
	var gotChans []string
	if v, ok := sum.at("delivery.by_channel"); ok {
		if m, ok := v.(map[string]any); ok {
			gotChans = slices.Sorted(maps.Keys(m))
		}
	}
	if wantChans := slices.Sorted(maps.Keys(want.ByChannel)); fmt.Sprint(gotChans) != fmt.Sprint(wantChans) {
		bad("delivery.by_channel", wantChans, gotChans, "channels of the final states, and of the item a message without one was on at the deadline")
	}
	for _, ch := range slices.Sorted(maps.Keys(want.ByChannel)) {
		pcts("delivery.by_channel."+ch, want.ByChannel[ch], "delivery.latency of the messages ending on the channel (censored: on the channel they were on at the deadline)")
	}
	if c.API == "messaging" {
		got := map[string]int64{}
		if v, ok := sum.at("delivery.failover.steps"); ok {
			if l, ok := v.([]any); ok {
				for _, x := range l {
					m, _ := x.(map[string]any)
					n, _ := m["count"].(float64)
					if n != 0 {
						got[fmt.Sprint(m["from"])+">"+fmt.Sprint(m["to"])] = int64(n)
					}
				}
			}
		}
		if fmt.Sprint(sortedMap(got)) != fmt.Sprint(sortedMap(want.Steps)) {
			bad("delivery.failover.steps", sortedMap(want.Steps), sortedMap(got), "messages with a failover step (NOT_DELIVERED/FAILED/EXPIRED on an item with failover) or a record on a later item, per (from, to)")
		}
	}
	count("delivery.redelivered", want.Redelivered, "next arrival, accepted, of a (txId, channel, state) / (notification, status) after one the sink refused or held on purpose")
	count("delivery.refused_on_purpose", want.Refused, "arrivals of this run's messages the sink answered with a non-2xx on purpose")
	count("idempotency.duplicate_deliveries", want.DupDeliveries, "messages whose ending records came under two txIds (messaging) / with two terminal statuses (notify), any time")
	count("delivery.unconfirmed", want.Unconfirmed, "messages with a record ending them, any time, none of whose attempts was accepted")
	count("incoming.received", want.Incoming, "incoming events")
	if c.Poll == 0 {
		count("incoming.replies", want.Replies, "incoming events whose outgoingTxId is a txId the service answered this run's sends with")
	}
	if c.Poll > 0 && want.BesidePolls > 0 {
		bad("callbacks in a poll run", 0, want.BesidePolls, "poll means poll: no callback address is given to the simulator")
	}
	if !want.HasTruth {
		return probs, notes
	}
	if want.PollTruth != nil {
		for _, p := range want.PollTruth {
			bad("delivery end against truth (poll)", "what the polls could see", p, "a poll shows a status from when the simulator set it")
		}
		if !c.Standalone {
			count("truth.messages", want.TruthMessages, "messages the simulator accepted")
		}
		return probs, notes
	}
	if want.LostLo > want.Lost || want.Lost > want.LostHi {
		bad("delivery.lost against truth", fmt.Sprintf("%d..%d", want.LostLo, want.LostHi), want.Lost,
			"lost by the raw files against accepted messages none of whose ending callbacks got through (truth.callbacks)")
	}
	if want.Lost > want.LostWaitedHi && want.LostLo <= want.Lost && want.Lost <= want.LostHi {
		bad("delivery.lost had the run waited", fmt.Sprintf("at most %d", want.LostWaitedHi), want.Lost,
			"ending callbacks of accepted messages started after the run stopped waiting, before attack_end+grace (grace wait ended early)")
	}
	if want.Unsent > 0 {
		bad("truth: status changes never called back", 0, want.Unsent,
			"the run closed the simulator with callbacks still to send (grace wait ended early)")
	}
	for _, tr := range want.Transit {
		bad("delivery end against truth", "arrival 0..1s after the simulator started the ending callback", tr, "the end rule picks the first ending record")
	}
	if want.MeasuredSame.Count > 0 {
		tol := func(a, b float64) bool { return math.Abs(a-b) <= math.Max(0.001, 0.01*math.Max(a, b)) }
		tp, mp := want.TrueSame, want.MeasuredSame
		for _, q := range []struct {
			k    string
			a, b float64
		}{{"p50", tp.P50, mp.P50}, {"p90", tp.P90, mp.P90}, {"p95", tp.P95, mp.P95}, {"p99", tp.P99, mp.P99}, {"max", tp.Max, mp.Max}} {
			if !tol(q.a, q.b) {
				notes = append(notes, fmt.Sprintf("latency %s true/measured over %d messages: true (the simulator's start of the first ending callback) %.6f, measured (its arrival) %.6f, both from the first send: beyond max(1ms, 1%%) by callback transit", q.k, mp.Count, q.a, q.b))
			}
		}
	}
	if _, ok := sum.at("truth"); !ok {
		if !c.Standalone {
			bad("truth", "present", "missing", "truth.json exists")
		}
		return probs, notes
	}
	count("truth.messages", want.TruthMessages, "messages the simulator accepted")
	count("truth.callbacks_dropped", want.Dropped, "truth.callbacks action dropped")
	count("truth.callbacks_duplicated", want.Duplicated, "truth.callbacks action duplicated")
	count("truth.callbacks_failed", want.Failed, "truth.callbacks action failed")
	if got, ok := sum.num("truth.expected_lost"); !ok || got < float64(want.LostLo) || got > float64(want.LostHi) {
		bad("truth.expected_lost", fmt.Sprintf("%d..%d", want.LostLo, want.LostHi), got, "accepted messages none of whose ending callbacks got through")
	}
	// Schema 1 reads truth.true_latency from acceptance to the first ending
	// status drawn; schema 2 from the first send to the start of the
	// simulator's first call of an ending record.
	if v, _ := sum.num("schema"); v >= 2 {
		if want.TrueAmbiguous == 0 {
			pcts("truth.true_latency", want.TrueFromSend, "every accepted message: first send → start of the simulator's first ending callback by the deadline, else censored at first send → deadline; nearest rank, the censored last")
		} else {
			notes = append(notes, fmt.Sprintf("truth.true_latency not compared: the true end of %d accepted messages cannot be told from truth.json", want.TrueAmbiguous))
		}
	} else {
		pcts("truth.true_latency", want.TrueLatency, "per message: acceptance → first ending status drawn, nearest rank")
	}
	return probs, notes
}

func sortedMap(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s:%d", k, v))
	}
	sort.Strings(out)
	return slices.Clip(out)
}
