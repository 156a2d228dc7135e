package replay_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
)

// The replay tests of `msgload replay FILE` without a scenario: the built-in
// replay scenario (harness.ReplayScenario) run by harness.Run, as the command
// does.

// startSim serves the simulator (sim.DefaultConfig) on loopback until the test ends.
func startSim(t *testing.T) *httptest.Server {
	t.Helper()
	s, err := sim.New(sim.DefaultConfig(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv
}

// runReplay replays o through the harness into a new directory.
func runReplay(t *testing.T, o harness.ReplayOptions) *harness.Result {
	t.Helper()
	s, notes, err := harness.ReplayScenario(o)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	res, err := harness.Run(t.Context(), harness.Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Parts {
		if p.Err != nil {
			t.Fatalf("part %s: %v\nnotes %v\nstderr:\n%s", p.Name, p.Err, notes, stderr.String())
		}
	}
	return res
}

func readReport(t *testing.T, dir string) replay.Report {
	t.Helper()
	var rep replay.Report
	b, err := os.ReadFile(filepath.Join(dir, replay.ReplayFile))
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("%s: replay.json: %v", dir, err)
	}
	return rep
}

func readAttempts(t *testing.T, dir string) []rundir.Attempt {
	t.Helper()
	var atts []rundir.Attempt
	err := rundir.ReadJSONL(filepath.Join(dir, rundir.AttemptsFile), func(a rundir.Attempt) error { atts = append(atts, a); return nil },
		func(int, error) { t.Error("bad line") })
	if err != nil {
		t.Fatal(err)
	}
	return atts
}

type seenReq struct {
	path, auth, body string
}

// recordingTarget is up behind a handler that keeps what each replayed request
// carried; it accepts webhook registrations, which up does not know.
func recordingTarget(t *testing.T, up *httptest.Server) (*httptest.Server, func() []seenReq) {
	var mu sync.Mutex
	var seen []seenReq
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		mu.Lock()
		seen = append(seen, seenReq{r.URL.Path, r.Header.Get("Authorization"), string(b)})
		mu.Unlock()
		if r.URL.Path == "/api/v1/webhooks" {
			w.Write([]byte(`{}`))
			return
		}
		up.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy, func() []seenReq { mu.Lock(); defer mu.Unlock(); return slices.Clone(seen) }
}

func TestRunRewritesAndReports(t *testing.T) {
	up := replay.FakeUpstream(t)
	base, stop := replay.StartRecorder(t, up.URL, replay.RedactOptions{})
	replay.SendTestTraffic(t, base, 10)
	file := stop()
	target, seen := recordingTarget(t, up)
	sinkSrv := httptest.NewServer(replay.NewCallbackCounter())
	defer sinkSrv.Close()
	res := runReplay(t, harness.ReplayOptions{
		File: file, Speed: 10, MessagingURL: target.URL, NotifyURL: target.URL,
		Messaging: []scenarios.Cred{{ID: "m-login", Secret: "m-pass"}}, Notify: []scenarios.Cred{{ID: "app-1", Secret: replay.TestClientSecret}},
		SinkURL: sinkSrv.URL, Grace: 100 * time.Millisecond,
	})
	if len(res.Parts) != 2 {
		t.Fatalf("%d parts, want messaging and notify", len(res.Parts))
	}
	// The recorded token call is not replayed; a fresh token is fetched once.
	planned, sent, matching := 0, 0, 0
	for _, p := range res.Parts {
		rep := readReport(t, p.Dir)
		planned, sent, matching = planned+rep.Planned, sent+rep.Sent, matching+rep.Matching
		if p.API == rundir.APINotify && (rep.Skipped[replay.SkipToken] != 1 || rep.TokenErrors != 0) {
			t.Errorf("notify report %+v", rep)
		}
	}
	if planned != 20 || sent != 20 || matching != 20 {
		t.Errorf("planned %d, sent %d, matching %d: want 20 each", planned, sent, matching)
	}
	tokens := 0
	for _, s := range seen() {
		switch s.path {
		case "/oauth/token":
			tokens++
		case "/messaging/v1/send":
			if s.auth != "Basic bS1sb2dpbjptLXBhc3M=" { // m-login:m-pass, not the recorded login-1
				t.Errorf("messaging auth %q", s.auth)
			}
			if !strings.Contains(s.body, `"callback":"`+sinkSrv.URL+`/callback"`) || !strings.Contains(s.body, `"msgload_run":"`+res.ID+`"`) {
				t.Errorf("messaging body not rewritten: %s", s.body)
			}
		case "/api/v1/notifications":
			if s.auth != "Bearer "+replay.TestToken {
				t.Errorf("notify auth %q", s.auth)
			}
			if !strings.Contains(s.body, `"externalId":"ext-`) { // keep mode
				t.Errorf("notify body %s", s.body)
			}
		}
	}
	if tokens != 1 {
		t.Errorf("%d token requests, want 1 (cached)", tokens)
	}
	// Each part's run directory has one attempt per send, with the answer's ids.
	for _, p := range res.Parts {
		n := 0
		for _, a := range readAttempts(t, p.Dir) {
			if a.Op != "send" {
				continue
			}
			n++
			if a.API == rundir.APINotify && (a.NotificationID != "n-"+a.ExternalID || a.Client != "app-1" || a.Seq == 0) {
				t.Errorf("notify attempt %+v", a)
			}
			if a.API == rundir.APIMessaging && (a.TxID == "" || a.Client != "m-login") {
				t.Errorf("messaging attempt %+v", a)
			}
			if a.Sent.Before(a.Intended.Add(-1e6)) { // never sent before the plan (1ms clock slack)
				t.Errorf("sent %v before intended %v", a.Sent, a.Intended)
			}
		}
		if n != 10 {
			t.Errorf("%s: %d send attempts, want 10", p.Name, n)
		}
		for _, f := range []string{rundir.ResultsFile, rundir.SummaryFile, rundir.HTMLFile} {
			if st, err := os.Stat(filepath.Join(p.Dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %s: %v", p.Name, f, err)
			}
		}
	}
}

// writeRecording writes a msgload recording of reqs (method, path, body), 10 ms apart.
func writeRecording(t *testing.T, bodies ...string) string {
	t.Helper()
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	lines := []string{fmt.Sprintf(`{"format":%q,"version":%d,"started":%q}`, replay.FormatName, replay.FormatVersion, start.Format(time.RFC3339Nano))}
	for i, b := range bodies {
		at := start.Add(time.Duration(i) * 10 * time.Millisecond)
		lines = append(lines, fmt.Sprintf(`{"time":%q,"offset_ns":%d,"method":"POST","path":"/api/v1/notifications","headers":{"Content-Type":["application/json"]},"body":%q,"client":"app-1","code":200,"latency_s":0.001}`,
			at.Format(time.RFC3339Nano), at.Sub(start).Nanoseconds(), b))
	}
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunNewExternalIDs(t *testing.T) {
	file := writeRecording(t, `{"externalId":"a"}`, `{"externalId":"a"}` /* the app's retry */, `{"externalId":"b"}`)
	up := replay.FakeUpstream(t)
	target, _ := recordingTarget(t, up)
	res := runReplay(t, harness.ReplayOptions{File: file, NotifyURL: target.URL, Notify: []scenarios.Cred{{ID: "app-1", Secret: replay.TestClientSecret}},
		ExternalIDs: replay.ExternalIDsNew})
	ids := map[int64][]string{}
	for _, a := range readAttempts(t, res.Parts[0].Dir) {
		if a.Op == "send" {
			ids[a.Seq] = append(ids[a.Seq], a.ExternalID)
		}
	}
	// A repeat of a recorded id keeps one fresh, run-tagged id (seq 1, two
	// attempts); b is the other message (seq 3: a message's seq is its hit of
	// the pacer, and hit 2 was the repeat).
	if len(ids) != 2 || len(ids[1]) != 2 || ids[1][0] != ids[1][1] || len(ids[3]) != 1 {
		t.Fatalf("ids %v", ids)
	}
	// Two messages planned, as the service sees them (run.json).
	var meta rundir.Meta
	if b, err := os.ReadFile(filepath.Join(res.Parts[0].Dir, rundir.MetaFile)); err != nil || json.Unmarshal(b, &meta) != nil || meta.Planned.Requests != 2 {
		t.Errorf("run.json planned %+v (%v): want 2 messages", meta.Planned, err)
	}
	for seq, v := range ids {
		tag, err := rundir.ParseExternalID(v[0])
		if err != nil || tag.Run != res.ID || tag.Seq != seq {
			t.Errorf("seq %d: id %q is not a tag of the run: %v", seq, v[0], err)
		}
	}
}

func TestSessionEmbedded(t *testing.T) {
	simSrv := startSim(t)
	const n = 5
	path := replay.RecordAgainstSim(t, simSrv.URL, n)

	res := runReplay(t, harness.ReplayOptions{File: path, Speed: 5, Grace: 10 * time.Second,
		ExternalIDs: replay.ExternalIDsNew}) // run-tagged ids: the sink can match every webhook by its tag
	if len(res.Parts) != 2 {
		t.Fatalf("dir %s, %d parts", res.Dir, len(res.Parts))
	}
	// A recording of both APIs is replayed as two parts, each a complete run directory.
	for i, api := range []string{rundir.APIMessaging, rundir.APINotify} {
		p := res.Parts[i]
		if p.API != api || p.Dir != filepath.Join(res.Dir, api) {
			t.Fatalf("part %d: %+v", i, p)
		}
		rep := readReport(t, p.Dir)
		// Against the embedded simulator every replayed request gets its recorded answer.
		if rep.Sent != n || rep.Matching != n {
			t.Errorf("%s: report %+v", api, rep)
		}
		for _, f := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.ResultsFile, rundir.EventsFile, rundir.TruthStreamFile, replay.ReplayFile, rundir.SummaryFile} {
			if st, err := os.Stat(filepath.Join(p.Dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %s missing or empty: %v", api, f, err)
			}
		}
		if p.Summary == nil {
			t.Fatalf("%s: no summary", api)
		}
		var meta rundir.Meta
		if b, err := os.ReadFile(filepath.Join(p.Dir, rundir.MetaFile)); err != nil || json.Unmarshal(b, &meta) != nil {
			t.Fatalf("%s: run.json: %v", api, err)
		}
		// run.json names the clients used: the first of the simulator's, for the one recorded client.
		wantClient := map[string]string{rundir.APIMessaging: "demo", rundir.APINotify: "demo-1"}[api]
		if meta.API != api || meta.Planned.Profile != "replay" || meta.Planned.Requests != n || len(meta.Clients) != 1 || meta.Clients[0] != wantClient {
			t.Errorf("%s: run.json %+v", api, meta)
		}
		// Delivery: every message of the part reached the embedded sink (callbacks,
		// webhooks), matched to the run — none counted as unmatched.
		kinds := map[string]int{}
		unmatched := 0 // by the sink
		rundir.ReadJSONL(filepath.Join(p.Dir, rundir.EventsFile), func(e rundir.Event) error {
			kinds[e.Kind]++
			if e.Corr != nil && !e.Corr.Matched {
				unmatched++
			}
			return nil
		}, nil)
		t.Logf("%s: events %v, unmatched by the sink %d", api, kinds, unmatched)
		want := rundir.KindCallback
		if api == rundir.APINotify {
			want = rundir.KindWebhook
			if rep.Webhooks != 1 { // the webhook was pointed at the part's sink first
				t.Errorf("webhooks registered: %d", rep.Webhooks)
			}
		}
		if kinds[want] == 0 {
			t.Errorf("%s: no %s reached the sink", api, want)
		}
		// Every message is delivered and matched to the run, none lost.
		d := p.Summary.Delivery
		if d.Expected != n || d.Received != n || d.Lost != 0 || d.Unmatched != 0 {
			t.Errorf("%s: delivery %+v", api, d)
		}
	}
}

func TestRoundTripThroughSimulator(t *testing.T) {
	simSrv := startSim(t)
	sinkC := replay.NewCallbackCounter()
	sinkSrv := httptest.NewServer(sinkC)
	defer sinkSrv.Close()

	const n = 15 // four replays of 15 sends per client stay under the 100/min limit
	path := replay.RecordAgainstSim(t, simSrv.URL, n)
	reqs, err := replay.Load(path, replay.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	recordedIDs := map[string]bool{}
	for _, r := range reqs {
		if r.ExternalID != "" {
			recordedIDs[r.ExternalID] = true
		}
	}

	replayOnce := func(speed float64) (string, map[string]string, map[string][]rundir.Attempt, []replay.Report) {
		res := runReplay(t, harness.ReplayOptions{
			File: path, Speed: speed, MessagingURL: simSrv.URL, NotifyURL: simSrv.URL,
			Messaging: []scenarios.Cred{{ID: "demo", Secret: "demo"}}, Notify: []scenarios.Cred{{ID: "demo-2", Secret: "demo"}},
			SinkURL: sinkSrv.URL, ExternalIDs: replay.ExternalIDsKeep, Grace: 100 * time.Millisecond,
		})
		ids := map[string]string{}
		atts := map[string][]rundir.Attempt{}
		var reps []replay.Report
		for _, p := range res.Parts {
			reps = append(reps, readReport(t, p.Dir))
			for _, a := range readAttempts(t, p.Dir) {
				if a.Op != "send" {
					continue
				}
				atts[p.API] = append(atts[p.API], a)
				if a.NotificationID != "" {
					ids[a.ExternalID] = a.NotificationID
				}
			}
		}
		return res.ID, ids, atts, reps
	}

	for _, speed := range []float64{1, 10} {
		_, _, atts, reps := replayOnce(speed)
		// Every recorded request but the token call was replayed, with the recorded answer.
		sent, matching := 0, 0
		for _, rep := range reps {
			sent, matching = sent+rep.Sent, matching+rep.Matching
		}
		if sent != 2*n || matching != 2*n {
			t.Errorf("%v×: sent %d, matching %d, reports %+v", speed, sent, matching, reps)
		}
		// Intended send times are the recorded offsets scaled by the speed,
		// exactly (within each part: each API is a part with its own attack).
		var lat []time.Duration
		for _, api := range []string{rundir.APIMessaging, rundir.APINotify} {
			var want, got []time.Duration
			for _, r := range reqs {
				if r.API == api && r.Op == replay.OpSend {
					want = append(want, time.Duration(float64(r.Offset)/speed))
				}
			}
			as := atts[api]
			slices.SortFunc(as, func(a, b rundir.Attempt) int { return a.Intended.Compare(b.Intended) })
			if len(as) != len(want) {
				t.Fatalf("%v× %s: %d sends, want %d", speed, api, len(as), len(want))
			}
			for _, a := range as {
				got = append(got, a.Intended.Sub(as[0].Intended))
				lat = append(lat, a.Late())
			}
			for i := range want {
				if d := want[i] - want[0]; got[i] != d {
					t.Errorf("%v× %s: hit %d intended at %v, want %v", speed, api, i, got[i], d)
					break
				}
			}
		}
		slices.Sort(lat)
		p99 := replay.Quantile(lat, 0.99)
		t.Logf("%v×: send lag p50 %v p99 %v max %v; pacer lateness %+v", speed,
			replay.Quantile(lat, 0.5), p99, lat[len(lat)-1], reps[0].Lateness)
		if p99 > 2*time.Second { // a generous bound: loopback on a busy 2-core machine
			t.Errorf("%v×: send lag p99 %v", speed, p99)
		}
	}

	// Idempotency across runs: with kept externalIds, two replays get the same notificationIds.
	runA, ids1, _, _ := replayOnce(10)
	_, ids2, _, _ := replayOnce(10)
	if len(ids1) != n || len(ids1) != len(recordedIDs) {
		t.Fatalf("%d notification ids for %d recorded externalIds", len(ids1), len(recordedIDs))
	}
	for ext, id := range ids1 {
		if !recordedIDs[ext] || ids2[ext] != id {
			t.Errorf("externalId %s: ids %q then %q", ext, id, ids2[ext])
		}
	}

	// Callbacks of the replays reach the sink, tagged with the replay's run.
	deadline := time.Now().Add(20 * time.Second)
	for sinkC.RunCount(runA) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if sinkC.RunCount(runA) == 0 {
		t.Errorf("no callback of run %s reached the sink: %v", runA, sinkC.Hits())
	}
}
