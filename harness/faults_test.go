package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// The fault suite: toxiproxy (in-process, on loopback) between the attacker
// and the simulator, and between the simulator and the sink, one toxic at a
// time. Each subtest is a bounded run (messaging viber → sms with failover, or
// notify) with retries on 500, 503 and timeouts, against a simulator served on
// its own URL and a standalone sink, each behind a proxy. The scenario's sink
// is the sink's proxy, so the simulator's calls and the harness's reads of the
// sink's events (GET /v1/events) both cross the faulted link. It checks that
//
//  1. the run ends within duration + grace + a generous margin;
//  2. every figure agrees with the simulator's truth (truth.json written into
//     the run directory, the reports rebuilt, summary.json truth.agrees);
//  3. nothing the sink acknowledged is missing: every call the truth records as
//     answered 2xx has its event in the run's events.jsonl.
//
// go test ./harness -run Faults  (MSGLOAD_FAULTS_OUT=DIR keeps the run directories)

// faultCase is one toxic on one link.
type faultCase struct {
	name string
	api  string         // rundir.APIMessaging (default) or rundir.APINotify
	typ  string         // toxiproxy toxic type
	attr map[string]any // its attributes
	// streams the toxic goes on: "upstream" (requests: client → server) and/or
	// "downstream" (answers: server → client).
	streams  []string
	toxicity float32
	// redraw, when set, draws the toxicity again this often for every open
	// connection while the run goes: a keep-alive connection that drew no
	// fault at its start can still meet one (toxiproxy draws per connection).
	redraw time.Duration
}

// faultCases are the toxics of the suite; each runs on both links.
var faultCases = []faultCase{
	{name: "latency", typ: "latency", attr: map[string]any{"latency": 150}, streams: []string{"upstream", "downstream"}, toxicity: 1},
	{name: "jitter", typ: "latency", attr: map[string]any{"latency": 100, "jitter": 90}, streams: []string{"upstream", "downstream"}, toxicity: 1},
	// The answer is lost after the server acted: an unknown outcome for the
	// client, which retries (the attacker: a second txId for the message; the
	// simulator: a second call of a callback the sink already logged).
	{name: "reset_peer", typ: "reset_peer", attr: map[string]any{"timeout": 0}, streams: []string{"downstream"}, toxicity: 0.3, redraw: 300 * time.Millisecond},
	// The request never arrives: reset before the server read it (nothing to
	// be unsure about: the retry is the only arrival).
	{name: "reset_peer-request", typ: "reset_peer", attr: map[string]any{"timeout": 0}, streams: []string{"upstream"}, toxicity: 0.3, redraw: 300 * time.Millisecond},
	// The answer never comes and the connection stays open (timeout 0: a
	// black hole): only the client's own timeout ends the wait.
	{name: "timeout", typ: "timeout", attr: map[string]any{"timeout": 0}, streams: []string{"downstream"}, toxicity: 0.3, redraw: 300 * time.Millisecond},
	// The same on the notification API: retries keep the externalId, so an
	// unknown outcome must not make a second notification; the token and
	// webhook registration go through the proxy too.
	{name: "reset_peer-notify", api: rundir.APINotify, typ: "reset_peer", attr: map[string]any{"timeout": 0}, streams: []string{"downstream"}, toxicity: 0.3, redraw: 300 * time.Millisecond},
	{name: "timeout-notify", api: rundir.APINotify, typ: "timeout", attr: map[string]any{"timeout": 0}, streams: []string{"downstream"}, toxicity: 0.3, redraw: 300 * time.Millisecond},
	{name: "bandwidth", typ: "bandwidth", attr: map[string]any{"rate": 16}, streams: []string{"upstream", "downstream"}, toxicity: 1},
	{name: "slicer", typ: "slicer", attr: map[string]any{"average_size": 16, "size_variation": 8, "delay": 200}, streams: []string{"upstream", "downstream"}, toxicity: 1},
}

// Bounds of one faulted run: messages, rate, grace, and the margin the end may
// exceed duration + grace by on a busy machine.
const (
	faultMessages = 30
	faultRate     = 10 // per second
	faultGrace    = 12 * time.Second
	faultMargin   = 45 * time.Second
	// faultCopy is what the last copy of the sink's events may take on top
	// when the sink sits behind the faulted link: an answer the toxic drops
	// costs a try (5 s, then 10, 20, 30, 30, 30 s, with pauses of 0.25 s
	// doubling to 5 s after each: remoteLog.finish), and each try meets the
	// toxic with its toxicity, 0.3. It covers six failed tries (138 s): the
	// copy overruns it only when seven fail in a row, once in 4,600 runs.
	// 40 s (before) covered three, and four in a row come once in 120: a CI
	// run met them (the copy took 70 s, 27 November).
	faultCopy = 145 * time.Second
)

func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault suite: a run per toxic and link")
	}
	for _, link := range []string{"attacker-sim", "sim-sink"} {
		for _, c := range faultCases {
			t.Run(link+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				runFault(t, link, c)
			})
		}
	}
}

// faultEnv is what one subtest starts on loopback: a sink and a simulator, each
// behind a toxiproxy proxy.
type faultEnv struct {
	sink             *sink.Sink
	sinkLog          string
	sim              *sim.Server
	simProxy         *toxiproxy.Proxy
	sinkProxy        *toxiproxy.Proxy
	simURL, sinkURL  string // the proxies' URLs: what the scenario and the simulator use
	simSrv, sinkSrv  *httptest.Server
	closeSim, closeK sync.Once
}

func startFaultEnv(t *testing.T) *faultEnv {
	t.Helper()
	e := &faultEnv{sinkLog: filepath.Join(t.TempDir(), "sink-events.jsonl")}
	k, err := sink.New(sink.Options{LogPath: e.sinkLog}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	e.sink = k
	e.sinkSrv = httptest.NewServer(k.Handler()) // 127.0.0.1:0
	t.Cleanup(e.stopSink)

	e.sinkProxy = testnet.Proxy(t, "sink", strings.TrimPrefix(e.sinkSrv.URL, "http://"))
	e.sinkURL = "http://" + e.sinkProxy.Listen

	cfg := sim.DefaultConfig()
	cfg.Seed = 7
	// The simulator calls the sink through its proxy: status callbacks (the
	// scenario's callback is the sink's URL too), static callbacks, incoming.
	for i := range cfg.Messaging.Accounts {
		cfg.Messaging.Accounts[i].CallbackURL = e.sinkURL + "/callback"
		cfg.Messaging.Accounts[i].PartnerURL = e.sinkURL
	}
	for i := range cfg.Notify.Clients {
		cfg.Notify.Clients[i].WebhookURL = e.sinkURL + "/webhook"
	}
	// Some viber messages fail over to sms; short callback timeouts so that a
	// call into a timeout toxic is retried within the grace period.
	viber := cfg.Messaging.Profiles[rundir.ChannelViber]
	viber.Outcomes = []sim.Outcome{{State: rundir.StateDelivered, Weight: 0.75}, {State: rundir.StateNotDelivered, Code: 501, Weight: 0.25}}
	cfg.Messaging.Profiles[rundir.ChannelViber] = viber
	cfg.Callbacks.Timeout = time.Second
	cfg.Callbacks.Attempts = 4
	sv, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	e.sim = sv
	e.simSrv = httptest.NewServer(sv.Handler())
	t.Cleanup(e.stopSim)
	e.simProxy = testnet.Proxy(t, "sim", strings.TrimPrefix(e.simSrv.URL, "http://"))
	e.simURL = "http://" + e.simProxy.Listen
	return e
}

// stopSim stops the simulator's engine and its server (once).
func (e *faultEnv) stopSim() {
	e.closeSim.Do(func() {
		_ = e.sim.Close()
		e.simSrv.Close()
	})
}

// stopSink closes the sink's server and flushes its log (once).
func (e *faultEnv) stopSink() {
	e.closeK.Do(func() {
		e.sinkSrv.Close()
		_ = e.sink.Close()
	})
}

// addToxic puts c on proxy, on each of its streams.
func addToxic(t *testing.T, p *toxiproxy.Proxy, c faultCase) {
	t.Helper()
	for _, st := range c.streams {
		b, err := json.Marshal(map[string]any{"name": c.name + "_" + st, "type": c.typ, "stream": st, "toxicity": c.toxicity, "attributes": c.attr})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(string(b))); err != nil {
			t.Fatalf("toxic %s on %s: %v", c.name, st, err)
		}
	}
}

// redrawToxic draws c's toxicity again on every connection of p every
// c.redraw until stop is closed.
func redrawToxic(t *testing.T, p *toxiproxy.Proxy, c faultCase, stop <-chan struct{}) {
	tick := time.NewTicker(c.redraw)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		for _, st := range c.streams {
			// Only the toxicity: toxiproxy decodes attributes into the toxic
			// its connections are running.
			b, _ := json.Marshal(map[string]any{"toxicity": c.toxicity})
			if _, err := p.Toxics.UpdateToxicJson(c.name+"_"+st, strings.NewReader(string(b))); err != nil {
				t.Errorf("redraw toxic %s on %s: %v", c.name, st, err)
				return
			}
		}
	}
}

func runFault(t *testing.T, link string, c faultCase) {
	e := startFaultEnv(t)
	proxy := e.simProxy
	if link == "sim-sink" {
		proxy = e.sinkProxy
	}
	addToxic(t, proxy, c)
	// toxiproxy's UpdateToxicJson writes the toxicity its connections read
	// without a lock: under -race the draw is once per connection only (fewer
	// faults, no report of a race in toxiproxy).
	if c.redraw > 0 && !raceDetector {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); redrawToxic(t, proxy, c, stop) }()
		defer wg.Wait()
		defer close(stop)
	}

	src := fmt.Sprintf(`name: fault-%s-%s
api: messaging
target: { baseUrl: %s }
sink: %s
clients: [ { login: demo, password: demo } ]
load: { rate: %d/s, requests: %d }
message:
  recipient: "+7999{0000000-0000999}"
  text: "fault {{.Seq}}"
  scenario:
    - { channel: viber, sender: msgload, failover: { ttl: 3, condition_status: DELIVERED } }
    - { channel: sms, sender: msgload }
retry: { on: [500, 503, timeout], max: 4, backoff: 200ms, maxBackoff: 1s, timeout: 2s }
delivery: { grace: %s }
thresholds: [ "delivery.malformed == 0" ]
`, link, c.name, e.simURL, e.sinkURL, faultRate, faultMessages, faultGrace)
	if c.api == rundir.APINotify {
		src = fmt.Sprintf(`name: fault-%s-%s
api: notify
target: { baseUrl: %s, tokenUrl: %s/oauth/token }
sink: %s
clients:
  - { clientId: demo-1, clientSecret: demo }
  - { clientId: demo-2, clientSecret: demo }
load: { rate: %d/s, requests: %d }
limit: { rate: 100/1m, mode: respect }
message: { recipient: "+7999{0000000-0000999}", text: "fault {{.Seq}}" }
retry: { on: [500, 503, timeout], max: 4, backoff: 200ms, maxBackoff: 1s, timeout: 2s }
idempotency: { probes: 20%% }
delivery: { grace: %s }
thresholds: [ "delivery.malformed == 0", "idempotency.mismatches == 0", "idempotency.duplicate_deliveries == 0" ]
`, link, c.name, e.simURL, e.simURL, e.sinkURL, faultRate, faultMessages, faultGrace)
	}
	s, err := scenarios.Parse("fault.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}

	// (1) The run ends in time: sending takes messages/rate, then at most the
	// grace period; the margin is generous (a busy 2-core machine, retries).
	bound := time.Duration(faultMessages/faultRate)*time.Second + faultGrace + faultMargin
	if link == "sim-sink" {
		bound += faultCopy
	}
	var stderr syncBuffer
	type outcome struct {
		res *Result
		err error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	out := t.TempDir()
	if keep := os.Getenv("MSGLOAD_FAULTS_OUT"); keep != "" {
		out = keep // the run directories stay for a look at their raw files
	}
	go func() {
		res, err := Run(context.Background(), Options{Scenario: s, Out: out, Stderr: &stderr})
		done <- outcome{res, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(bound):
		t.Fatalf("the run did not end within %v (duration %v + grace %v + margin %v, + %v for the copy of the sink's events behind the sim-sink link)\nstderr:\n%s",
			bound, time.Duration(faultMessages/faultRate)*time.Second, faultGrace, faultMargin, faultCopy, stderr.String())
	}
	took := time.Since(start)
	if o.err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", o.err, stderr.String())
	}
	p := o.res.Parts[0]
	t.Logf("run ended after %v; dir %s", took.Round(time.Millisecond), p.Dir)
	if p.Err != nil {
		t.Errorf("part: %v\nstderr:\n%s", p.Err, stderr.String())
	}

	// The truth from the simulator itself (not through the proxy), closed as
	// the harness closes an embedded one: no new deliveries, the calls in
	// flight finished (answered or timed out). Then flush the sink's log.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_ = e.sim.Shutdown(ctx)
	cancel()
	truth := e.sim.Truth()
	e.stopSim()
	e.stopSink()
	if err := writeJSON(filepath.Join(p.Dir, rundir.TruthFile), truth); err != nil {
		t.Fatal(err)
	}

	// (2) Every figure agrees with the truth.
	sum, err := render.Build(p.Dir)
	if err != nil {
		t.Fatalf("reports: %v", err)
	}
	tr := sum.Truth
	switch {
	case tr == nil:
		t.Errorf("summary.json has no truth although %s was written", rundir.TruthFile)
	case tr.Agrees == nil || !*tr.Agrees:
		t.Errorf("truth.agrees is not true; disagreements:\n  %s\nrun: %s%s", strings.Join(tr.Disagreements, "\n  "), faultFigures(sum), unanswered(t, truth, e.sinkLog))
	}
	if p.Summary != nil && !p.Summary.OK() && !planNotHeld(p.Summary) {
		var b strings.Builder
		render.Terminal(&b, p.Summary)
		t.Errorf("a threshold failed:\n%s", b.String())
	}

	// (3) Nothing the sink acknowledged is missing.
	runEvents := eventKeys(t, filepath.Join(p.Dir, rundir.EventsFile))
	sinkEvents := eventKeys(t, e.sinkLog)
	meta := readMeta(t, p.Dir)
	var missing []string
	acked := 0
	for _, cb := range truth.Callbacks {
		if cb.Status/100 != 2 || (cb.Action != rundir.CallbackSent && cb.Action != rundir.CallbackRetried) {
			continue
		}
		if !meta.End.IsZero() && cb.Done.After(meta.End) {
			continue // answered after the run ended: not the run's to copy
		}
		acked++
		k := evKey{cb.ID, cb.State}
		if runEvents.has(k, cb.Channel) {
			continue
		}
		where := "not in the sink's own log either"
		if sinkEvents.has(k, cb.Channel) {
			where = "in the sink's own log"
		}
		missing = append(missing, fmt.Sprintf("%s %s %s %s (attempt %d, answered %d at %s): %s",
			cb.Kind, cb.ID, cb.Channel, cb.State, cb.Attempt, cb.Status, cb.Done.Format("15:04:05.000"), where))
	}
	if len(missing) > 0 {
		t.Errorf("%d of %d calls the sink answered 2xx are missing from the run's %s:\n  %s",
			len(missing), acked, rundir.EventsFile, strings.Join(missing, "\n  "))
	}
	if t.Failed() {
		t.Logf("stderr of the run:\n%s", stderr.String())
	}
}

// unanswered says how many calls the simulator made got no answer (status 0:
// a reset, a timeout) and how many of those the sink logged all the same (it
// holds more events of that id, state and channel than calls were answered):
// the truth counts such a call as not arrived.
func unanswered(t *testing.T, truth rundir.Truth, sinkLog string) string {
	logged := eventKeys(t, sinkLog)
	type key struct{ id, state, channel string }
	answered, silent := map[key]int{}, map[key]int{}
	n := 0
	for _, c := range truth.Callbacks {
		if c.Action != rundir.CallbackSent && c.Action != rundir.CallbackRetried {
			continue
		}
		k := key{c.ID, c.State, c.Channel}
		if c.Status != 0 {
			answered[k]++
			continue
		}
		silent[k]++
		n++
	}
	if n == 0 {
		return ""
	}
	arrived := 0
	for k, u := range silent {
		extra := logged.count(evKey{k.id, k.state}, k.channel) - answered[k]
		arrived += max(0, min(u, extra))
	}
	return fmt.Sprintf("\n%d calls of the simulator got no answer (status 0); the sink logged %d of them all the same", n, arrived)
}

// faultFigures is a one-line digest of the figures a disagreement is about.
func faultFigures(s *reports.Summary) string {
	d, r := s.Delivery, s.Truth
	return fmt.Sprintf("accepted %d, received %d, lost %d (true %d), duplicates %d (true %d), unconfirmed %d, retries %d, duplicate deliveries %d, true messages %d, reaccepted %d",
		d.Expected, d.Received, d.Lost, r.ExpectedLost, d.Duplicates, r.ExpectedDuplicates, d.Unconfirmed,
		s.Idempotency.Retries, s.Idempotency.DuplicateDeliveries, r.Messages, r.ExpectedReaccepted)
}

// evKey is a call as the truth names it: the message's id (txId,
// notificationId) and the state it reported.
type evKey struct{ id, state string }

// evSet is the events of a log: the channels each (id, state) arrived with
// ("" when the call named none).
type evSet map[evKey][]string

// count is how many events of k arrived on channel (or without one).
func (s evSet) count(k evKey, channel string) int {
	n := 0
	for _, c := range s[k] {
		if channel == "" || c == channel || c == "" {
			n++
		}
	}
	return n
}

// has reports whether an event of k arrived on channel (or without one: the
// seed lets some records omit it).
func (s evSet) has(k evKey, channel string) bool {
	chs, ok := s[k]
	if !ok {
		return false
	}
	if channel == "" {
		return true
	}
	for _, c := range chs {
		if c == channel || c == "" {
			return true
		}
	}
	return false
}

// eventKeys reads an events.jsonl and returns its calls by id and state, from
// the bodies as received.
func eventKeys(t *testing.T, path string) evSet {
	t.Helper()
	set := evSet{}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("%s: %v", path, err)
		return set
	}
	err := rundir.ReadJSONL(path, func(ev rundir.Event) error {
		var b struct {
			TxID           string `json:"txId"`
			NotificationID string `json:"notificationId"`
			State          string `json:"state"`
			Status         string `json:"status"`
			Channel        string `json:"channel"`
			OutgoingTxID   string `json:"outgoingTxId"`
		}
		if len(ev.Payload) > 0 {
			_ = json.Unmarshal(ev.Payload, &b)
		}
		id, state := b.TxID, b.State
		if ev.Kind == rundir.KindWebhook || b.NotificationID != "" {
			id, state = b.NotificationID, b.Status
		}
		if ev.Kind == rundir.KindIncoming {
			id, state = b.OutgoingTxID, "" // the truth names an incoming call by the message it answers
		}
		if id == "" {
			return nil
		}
		k := evKey{id, state}
		set[k] = append(set[k], b.Channel)
		return nil
	}, func(line int, err error) { t.Errorf("%s:%d: %v", path, line, err) })
	if err != nil {
		t.Errorf("read %s: %v", path, err)
	}
	return set
}

func readMeta(t *testing.T, dir string) rundir.Meta {
	t.Helper()
	var m rundir.Meta
	b, err := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Errorf("%s: %v", rundir.MetaFile, err)
	}
	return m
}

// syncBuffer is a strings.Builder safe for the run's writes while the test
// reads it (on a timeout).
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
