package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// runScenario parses src and runs it into out, failing the test on a parse
// or start error.
func runScenario(t *testing.T, src, out string) *Result {
	t.Helper()
	s, err := scenarios.Parse("whose.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	res, err := Run(context.Background(), Options{Scenario: s, Out: out, Stderr: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, p := range res.Parts {
		if p.Err != nil || p.Summary == nil {
			t.Fatalf("part %s: %v\n%s", p.Name, p.Err, stderr.String())
		}
	}
	return res
}

// TestPartsWithOneStandaloneSink: a notify part and a messaging part of one
// run against one standalone simulator and one standalone sink, the
// notification service sending no webhook at all. Both parts number their
// messages from 1 under the same run id: the notify part must not take the
// messaging part's callbacks for its own — every accepted notification is lost.
func TestPartsWithOneStandaloneSink(t *testing.T) {
	simSrv := realSim(t, func(c *sim.Config) {
		p := c.Messaging.Profiles[rundir.ChannelSMS]
		p.Delay = sim.Delay{Dist: "uniform", Min: 50 * time.Millisecond, Max: 500 * time.Millisecond}
		p.Outcomes = []sim.Outcome{{State: rundir.StateDelivered, Weight: 1}}
		p.SeenShare = 0
		c.Messaging.Profiles[rundir.ChannelSMS] = p
	})
	k, _ := standaloneSink(t)
	// The notification service's webhooks never reach the sink.
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/webhook" {
			w.WriteHeader(http.StatusOK)
			return
		}
		k.Handler().ServeHTTP(w, r)
	}))
	defer front.Close()
	src := fmt.Sprintf(`name: shared
sink: %[2]s
parts:
  - name: n
    api: notify
    target: { baseUrl: %[1]s, tokenUrl: %[1]s/oauth/token }
    clients: [ { clientId: demo-1, clientSecret: demo } ]
    load: { rate: 20/s, requests: 10 }
    limit: { rate: 100/1m, mode: respect }
    message: { recipient: "+79990000001", text: "x {{.Seq}}" }
    delivery: { grace: 2s }
    thresholds: [ "delivery.lost == 0" ]
  - name: m
    api: messaging
    target: { baseUrl: %[1]s }
    clients: [ { clientId: demo, clientSecret: demo } ]
    load: { rate: 20/s, requests: 10 }
    message: { recipient: "+79990000001", text: "x {{.Seq}}", scenario: [ { channel: sms, sender: msgload } ] }
    delivery: { grace: 30s }
`, simSrv.URL, front.URL)
	res := runScenario(t, src, t.TempDir())
	for _, p := range res.Parts {
		d, acc := p.Summary.Delivery, p.Summary.Requests.Accepted
		if acc == 0 {
			t.Fatalf("part %s: nothing accepted, the test proves nothing", p.Name)
		}
		switch p.API {
		case rundir.APINotify:
			if d.Lost != acc || d.Received != 0 {
				t.Errorf("notify part: lost %d, received %d of %d accepted; no webhook was sent: want all lost", d.Lost, d.Received, acc)
			}
		case rundir.APIMessaging:
			if d.Lost != 0 || d.Received != acc || d.Duplicates != 0 {
				t.Errorf("messaging part: lost %d, received %d, duplicates %d of %d accepted: want every one received once", d.Lost, d.Received, d.Duplicates, acc)
			}
		}
	}
	if v := res.Verdict(); v == reports.VerdictPass {
		t.Errorf("verdict %s with every notification lost", v)
	}
	// Each part copied only its own tagged events from the shared sink.
	for _, p := range res.Parts {
		meta := readMeta(t, p.Dir)
		err := rundir.ReadJSONL(filepath.Join(p.Dir, rundir.EventsFile), func(e rundir.Event) error {
			if c := e.Corr; c != nil && c.Run == meta.ID && c.Part != meta.Part {
				t.Errorf("part %s (tag %q) copied an event of part %q", p.Name, meta.Part, c.Part)
			}
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if meta.Part == "" {
			t.Errorf("part %s: run.json names no part", p.Name)
		}
	}
}

// TestConcurrentRunsShareASink: two runs at once, two clients of one
// notification service, both sending their own externalIds order-1 …
// order-10, through one standalone sink; the service drops some webhooks and
// sends some twice. Each run's lost and duplicates are its own truth: an
// untagged webhook joins a send by the notificationId the service answered,
// never by the externalId alone, which is unique only per client.
func TestConcurrentRunsShareASink(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.Seed = 5
	cfg.Callbacks.Drop, cfg.Callbacks.Duplicate = 0.3, 0.2
	cfg.Notify.Delay = sim.Delay{Dist: "uniform", Min: 50 * time.Millisecond, Max: 300 * time.Millisecond}
	sv, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(sv.Handler())
	defer func() { simSrv.Close(); _ = sv.Close() }()
	_, sinkSrv := standaloneSink(t)
	run := func(client string) *Result {
		return runScenario(t, fmt.Sprintf(`name: run-%[3]s
api: notify
target: { baseUrl: %[1]s, tokenUrl: %[1]s/oauth/token }
sink: %[2]s
clients: [ { clientId: %[3]s, clientSecret: demo } ]
load: { rate: 20/s, requests: 10 }
limit: { rate: 100/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}", externalId: "order-{{.Seq}}" }
delivery: { grace: 3s }
`, simSrv.URL, sinkSrv.URL, client), t.TempDir())
	}
	clients := []string{"demo-1", "demo-2"}
	results := make([]*Result, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() { results[i] = run(c) })
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// The truth: per client, the notifications whose webhook never reached
	// the sink, and the second arrivals of the others. A busy machine may
	// make a webhook late: one answered by the run's deadline surely counts,
	// one begun after the run's end surely does not; the measurement must lie
	// between the two judgements.
	truth := sv.Truth()
	owner := map[string]string{}
	for _, m := range truth.Messages {
		owner[m.ID] = m.Client
	}
	type bound struct{ lostMin, lostMax, dupsMin, dupsMax int64 }
	want := map[string]*bound{}
	for i, c := range clients {
		meta := readMeta(t, results[i].Parts[0].Dir)
		dl, end := meta.AttackEnd.Add(meta.Delivery.Grace.D()), meta.End
		sure, maybe := map[string]int64{}, map[string]int64{}
		for _, cb := range truth.Callbacks {
			if owner[cb.ID] != c || cb.Action != rundir.CallbackSent && cb.Action != rundir.CallbackRetried || cb.Status/100 != 2 {
				continue
			}
			if !cb.Done.After(dl) {
				sure[cb.ID]++
			}
			if !cb.At.After(end) {
				maybe[cb.ID]++
			}
		}
		b := &bound{}
		for id, client := range owner {
			if client != c {
				continue
			}
			if sure[id] == 0 {
				b.lostMax++
			}
			if maybe[id] == 0 {
				b.lostMin++
			}
			b.dupsMin += max(sure[id]-1, 0)
			b.dupsMax += max(maybe[id]-1, 0)
		}
		want[c] = b
	}
	lost := map[string]int64{}
	for i, c := range clients {
		d, b := results[i].Parts[0].Summary.Delivery, want[c]
		lost[c] = b.lostMin
		if d.Lost < b.lostMin || d.Lost > b.lostMax || d.Duplicates < b.dupsMin || d.Duplicates > b.dupsMax {
			t.Errorf("run of %s: lost %d, duplicates %d; true %d to %d, %d to %d", c, d.Lost, d.Duplicates, b.lostMin, b.lostMax, b.dupsMin, b.dupsMax)
		}
	}
	if lost["demo-1"]+lost["demo-2"] == 0 {
		t.Error("no webhook dropped: the test proves nothing")
	}
}

// TestPollMeansPoll: delivery by polling against the embedded simulator,
// which drops half of its callbacks. The simulator gets no callback address
// (nothing reaches the sink), the delivery figures are the polls', and the
// truth comparison judges them by what the polls could see: it agrees.
func TestPollMeansPoll(t *testing.T) {
	src := `name: polled
api: messaging
target: embedded
load: { rate: 20/s, requests: 20 }
message: { recipient: "+79990000001", text: "x {{.Seq}}", scenario: [ { channel: sms, sender: msgload } ] }
delivery: { via: poll, pollInterval: 200ms, grace: 5s }
sim:
  callbacks: { drop: 50% }
  profiles:
    sms: { median: 200ms, p95: 600ms, outcomes: { DELIVERED: 100% } }
`
	res := runScenario(t, src, t.TempDir())
	p := res.Parts[0]
	s := p.Summary
	if s.Truth == nil || s.Truth.Agrees == nil || !*s.Truth.Agrees {
		var b strings.Builder
		render.Terminal(&b, s)
		t.Fatalf("truth does not agree with a polled run:\n%s", b.String())
	}
	if s.Delivery.Received == 0 {
		t.Fatal("no poll saw a final status: the test proves nothing")
	}
	n := 0
	if err := rundir.ReadJSONL(filepath.Join(p.Dir, rundir.EventsFile), func(e rundir.Event) error {
		if e.Kind == rundir.KindCallback {
			n++
		}
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d callbacks reached the sink of a polled run: the simulator was given a callback address", n)
	}
}

// TestSinkFaultsAreTheSinks: a standalone sink that holds its answer past the
// service's callback timeout, or refuses every call, makes the service send
// again. The arrivals the sink caused are redelivered on request, never the
// service's duplicates; a refused arrival is the sink's refusal, not a
// redelivery.
func TestSinkFaultsAreTheSinks(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault sink.Fault
	}{
		{"held", sink.Fault{Share: 0.5, Delay: 600 * time.Millisecond}},
		{"refused", sink.Fault{Share: 1, Code: 503}},
	} {
		t.Run(c.name, func(t *testing.T) {
			simSrv := realSim(t, func(cfg *sim.Config) {
				cfg.Callbacks.Timeout, cfg.Callbacks.Attempts, cfg.Callbacks.Backoff = 200*time.Millisecond, 3, 20*time.Millisecond
				p := cfg.Messaging.Profiles[rundir.ChannelSMS]
				p.Delay = sim.Delay{Dist: "uniform", Min: 50 * time.Millisecond, Max: 300 * time.Millisecond}
				p.Outcomes = []sim.Outcome{{State: rundir.StateDelivered, Weight: 1}}
				p.SeenShare = 0
				cfg.Messaging.Profiles[rundir.ChannelSMS] = p
			})
			k, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl"), Fault: c.fault}, prometheus.NewRegistry())
			if err != nil {
				t.Fatal(err)
			}
			sinkSrv := httptest.NewServer(k.Handler())
			defer func() { sinkSrv.Close(); _ = k.Close() }()
			res := runScenario(t, fmt.Sprintf(`name: sink-%s
api: messaging
target: { baseUrl: %s }
sink: %s
clients: [ { clientId: demo, clientSecret: demo } ]
load: { rate: 20/s, requests: 10 }
message: { recipient: "+79990000001", text: "x {{.Seq}}", scenario: [ { channel: sms, sender: msgload } ] }
delivery: { grace: 5s }
`, c.name, simSrv.URL, sinkSrv.URL), t.TempDir())
			d, st := res.Parts[0].Summary.Delivery, k.Stats()
			if st.Faulted == 0 {
				t.Fatal("the sink faulted no call: the test proves nothing")
			}
			if d.Duplicates != 0 || st.Duplicates != 0 {
				t.Errorf("duplicates: report %d, sink %d; the service sent nothing twice of its own", d.Duplicates, st.Duplicates)
			}
			// The wait may end before the service's last resends (every message
			// had its final status at its first arrival): the report counts at
			// most what the sink saw.
			if d.Redelivered > st.Redelivered {
				t.Errorf("redelivered: report %d, sink %d", d.Redelivered, st.Redelivered)
			}
			switch c.name {
			case "held":
				if d.Refused != 0 {
					t.Errorf("refused %d: the sink held calls, it refused none", d.Refused)
				}
			case "refused":
				acc := res.Parts[0].Summary.Requests.Accepted
				if d.Redelivered != 0 || d.Refused < acc || d.Refused > st.Callbacks {
					t.Errorf("redelivered %d, refused %d (%d accepted, %d arrivals): every arrival was refused, none is a redelivery", d.Redelivered, d.Refused, acc, st.Callbacks)
				}
			}
		})
	}
}

// TestReplayKeepsTaggedExternalIDs: a recording of msgload's own notify run
// replayed with its externalIds kept carries that run's tags. They are not
// this run's: its webhooks join the sends by the notificationId answered —
// every one delivered, none unmatched — through the embedded sink or a
// standalone one (whose copy then takes other runs' tagged events too).
func TestReplayKeepsTaggedExternalIDs(t *testing.T) {
	for _, where := range []string{"embedded", "standalone"} {
		t.Run(where+" sink", func(t *testing.T) {
			dir := t.TempDir()
			const sends = 4
			start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
			var entries []string
			for i := range sends {
				ext := rundir.Tag{Run: "recorded-run", Seq: int64(i + 1), First: start}.ExternalID()
				body := fmt.Sprintf(`{"externalId":%q,"recipient":{"value":"+7999000000%d"},"notificationText":"recorded"}`, ext, i)
				entries = append(entries, harEntry(start.Add(time.Duration(i+1)*100*time.Millisecond), "POST", "http://api.example/api/v1/notifications", "app", body, 200))
			}
			writeHAR(t, filepath.Join(dir, "rec.har"), entries)
			sinkLine := ""
			if where == "standalone" {
				_, srv := standaloneSink(t)
				sinkLine = "sink: " + srv.URL + "\n"
			}
			src := `name: kept-tags
api: notify
target: embedded
` + sinkLine + `load: { profile: replay, file: rec.har, speed: 2, externalIds: keep, clientHeader: X-Client }
limit: { mode: exceed }
delivery: { grace: 15s }
`
			p, _ := runSource(t, filepath.Join(dir, "kept.yaml"), dir, src)
			if p.Err != nil || p.Summary == nil {
				t.Fatalf("run: %v", p.Err)
			}
			d := p.Summary.Delivery
			if d.Received != sends || d.Lost != 0 || d.Unmatched != 0 {
				t.Errorf("delivery: received %d, lost %d, unmatched %d; want %d received, none lost or unmatched", d.Received, d.Lost, d.Unmatched, sends)
			}
			if d.Latency.Max > 60 {
				t.Errorf("latency max %v s: measured from the recorded run's send time", d.Latency.Max)
			}
		})
	}
}

// TestStrippedTagsSameFigures (metamorphic: no oracle needed): stripping the
// run's tags from every event — the sink's correlation and the tag in the
// body — and joining by the ids the service answered gives the same
// delivery, idempotency and truth figures.
func TestStrippedTagsSameFigures(t *testing.T) {
	src := `name: strip
target: embedded
parts:
  - name: n
    api: notify
    clients: 2
    load: { rate: 20/s, requests: 12 }
    limit: { mode: exceed }
    message: { recipient: "+79990000001", text: "x {{.Seq}}" }
    delivery: { grace: 10s }
    sim: { callbacks: { drop: 20%, duplicate: 20% } }
  - name: m
    api: messaging
    load: { rate: 20/s, requests: 12 }
    message:
      recipient: "+79990000001"
      text: "x {{.Seq}}"
      scenario:
        - { channel: viber, sender: msgload, failover: { ttl: 1, condition_status: DELIVERED } }
        - { channel: sms, sender: msgload }
    delivery: { grace: 10s }
    sim: { callbacks: { drop: 20%, duplicate: 20% } }
`
	res := runScenario(t, src, t.TempDir())
	for _, p := range res.Parts {
		stripped := t.TempDir()
		entries, err := os.ReadDir(p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || e.Name() == rundir.EventsFile {
				continue
			}
			b, err := os.ReadFile(filepath.Join(p.Dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(stripped, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var lines []string
		err = rundir.ReadJSONL(filepath.Join(p.Dir, rundir.EventsFile), func(e rundir.Event) error {
			if c := e.Corr; c != nil {
				c.Run, c.Part, c.Seq, c.FirstSent, c.Matched, c.Latency = "", "", 0, time.Time{}, false, 0
			}
			var body map[string]any
			if json.Unmarshal(e.Payload, &body) == nil {
				delete(body, "trackData")
				delete(body, "externalId")
				e.Payload, _ = json.Marshal(body)
			}
			b, err := json.Marshal(e)
			lines = append(lines, string(b))
			return err
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stripped, rundir.EventsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		tagged, err := reports.Analyze(p.Dir)
		if err != nil {
			t.Fatal(err)
		}
		joined, err := reports.Analyze(stripped)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []struct {
			name string
			a, b any
		}{
			{"delivery", tagged.Delivery, joined.Delivery},
			{"idempotency", tagged.Idempotency, joined.Idempotency},
			{"truth", tagged.Truth, joined.Truth},
		} {
			x, _ := json.Marshal(f.a)
			y, _ := json.Marshal(f.b)
			if string(x) != string(y) {
				t.Errorf("part %s: %s differs once the tags are stripped:\ntagged: %s\njoined: %s", p.Name, f.name, x, y)
			}
		}
		if tagged.Delivery.Received == 0 {
			t.Errorf("part %s: nothing delivered: the test proves nothing", p.Name)
		}
	}
}
