package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// TestFetchEventsFromStandaloneSink posts callbacks of two runs to a real sink
// and copies one run's events through the read API, across several pages.
func TestFetchEventsFromStandaloneSink(t *testing.T) {
	k, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl")}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	srv := httptest.NewServer(k.Handler())
	defer srv.Close()
	post := func(run string, seq int64) {
		tag := rundir.Tag{Run: run, Seq: seq, First: time.Now()}
		body := fmt.Sprintf(`{"notificationId":"n-%s-%d","externalId":%q,"status":"DELIVERED","updatedAt":%q}`,
			run, seq, tag.ExternalID(), time.Now().UTC().Format(time.RFC3339Nano))
		resp, err := http.Post(srv.URL+"/webhook", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("sink answered %s", resp.Status)
		}
	}
	fetchPage = 4 // several pages, the last one short
	defer func() { fetchPage = 10000 }()
	const want = 10
	for i := int64(1); i <= want; i++ {
		post("runA", i)
		if i <= 7 {
			post("runB", i)
		}
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	n, err := fetchEvents(context.Background(), srv.URL, "runA", path)
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("copied %d events, want %d", n, want)
	}
	seen := map[int64]bool{}
	err = rundir.ReadJSONL(path, func(e rundir.Event) error {
		if e.Corr == nil || e.Corr.Run != "runA" {
			return fmt.Errorf("event of another run copied: %+v", e.Corr)
		}
		seen[e.Corr.Seq] = true
		return nil
	}, func(line int, err error) { t.Errorf("line %d: %v", line, err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != want {
		t.Fatalf("%d distinct messages in the copy, want %d", len(seen), want)
	}
}

// TestRunWithStandaloneSink sends the callbacks of an embedded-simulator run
// to a sink of its own (as a team would on another host): the run directory
// gets the run's events through the read API and the report finds none lost.
func TestRunWithStandaloneSink(t *testing.T) {
	k, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl")}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	srv := httptest.NewServer(k.Handler())
	defer srv.Close()
	src := fmt.Sprintf(`name: remote-sink
api: notify
target: embedded
sink: %s
clients: 2
load: { rate: 20/s, requests: 12 }
limit: { rate: 100/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { grace: 15s }
thresholds: [ "delivery.lost == 0", "delivery.received == 12" ]
`, srv.URL)
	p, stderr := runSource(t, "remote.yaml", t.TempDir(), src)
	requireGreen(t, p, stderr)
	if got := k.Stats().Webhooks; got != 12 {
		t.Errorf("standalone sink got %d webhooks, want 12", got)
	}
}

// TestRealTargetWithStandaloneSink is a run as against a real service: the
// simulator on a loopback URL of its own (not embedded, so the harness cannot
// ask it what is pending) and a standalone sink. The grace wait reads the
// sink's new events once a second and ends when every accepted message has a
// final status, long before the grace period; the run directory gets them all.
func TestRealTargetWithStandaloneSink(t *testing.T) {
	k, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl")}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	sinkSrv := httptest.NewServer(k.Handler())
	defer sinkSrv.Close()
	sv, err := sim.New(sim.DefaultConfig(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer sv.Close()
	simSrv := httptest.NewServer(sv.Handler())
	defer simSrv.Close()
	const grace = 60 * time.Second
	src := fmt.Sprintf(`name: real-target
api: notify
target: { baseUrl: %s, tokenUrl: %s/oauth/token }
sink: %s
clients:
  - { clientId: demo-1, clientSecret: demo }
  - { clientId: demo-2, clientSecret: demo }
load: { rate: 20/s, requests: 12 }
limit: { rate: 100/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { grace: %s }
thresholds: [ "delivery.lost == 0", "delivery.received == 12" ]
`, simSrv.URL, simSrv.URL, sinkSrv.URL, grace)
	p, stderr := runSource(t, "real.yaml", t.TempDir(), src)
	requireGreen(t, p, stderr)
	if strings.Contains(stderr, "grace period of") {
		t.Errorf("the grace wait ran out although every message had its webhook:\n%s", stderr)
	}
	var meta rundir.Meta
	b, _ := os.ReadFile(filepath.Join(p.Dir, rundir.MetaFile))
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if waited := meta.End.Sub(meta.AttackEnd); waited >= grace {
		t.Errorf("waited %v after the attack, the whole grace period", waited)
	}
	if !strings.Contains(stderr, "12 events copied from the sink") {
		t.Errorf("stderr does not report the copy:\n%s", stderr)
	}
}

// fetchEvents copies every event of run from a standalone sink into path, as
// the run's last copy does, and returns how many it copied.
func fetchEvents(ctx context.Context, sinkURL, run, path string) (int, error) {
	l, err := newRemoteLog(sinkURL, run, path)
	if err != nil {
		return 0, err
	}
	err = l.finish(ctx)
	return int(l.events.Load()), err
}

// TestFinishOutlivesALostAnswer puts a fault server of the test's own between
// the copy and a real sink: it swallows the answer to the first read (the
// connection stays open, nothing comes back, as behind a proxy that drops
// it) and passes the rest. The last copy must try again after a short
// bound and get every event within a budget that a single try as long as
// the whole budget (what finish did before: 30 s a try) would have spent
// waiting on the lost answer.
func TestFinishOutlivesALostAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out one read bound (5 s)")
	}
	k, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl")}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	real := httptest.NewServer(k.Handler())
	defer real.Close()
	const want = 5
	for i := int64(1); i <= want; i++ {
		tag := rundir.Tag{Run: "runA", Seq: i, First: time.Now()}
		body := fmt.Sprintf(`{"notificationId":"n-%d","externalId":%q,"status":"DELIVERED","updatedAt":%q}`,
			i, tag.ExternalID(), time.Now().UTC().Format(time.RFC3339Nano))
		resp, err := http.Post(real.URL+"/webhook", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var reads atomic.Int32
	fault := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reads.Add(1) == 1 {
			<-r.Context().Done() // the answer is lost: the client gives up
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, real.URL+r.URL.RequestURI(), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	defer fault.Close()

	path := filepath.Join(t.TempDir(), "events.jsonl")
	l, err := newRemoteLog(fault.URL, "runA", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := l.finish(ctx); err != nil {
		t.Fatalf("finish: %v (reads %d)", err, reads.Load())
	}
	if got := l.events.Load(); got != want {
		t.Fatalf("copied %d events, want %d", got, want)
	}
	if r := reads.Load(); r < 2 {
		t.Fatalf("%d reads: the lost answer was not tried again", r)
	}
}

// A standalone sink that could not write calls during the run (its
// /v1/stats write_errors grew: here a wrapper adds 3 once the run's first
// webhook came) has them in run.json (sink_write_errors: the growth over the
// run's window, not the count the sink had before it) and the summary warns,
// every message having its final status.
func TestStandaloneSinkWriteErrors(t *testing.T) {
	p, stderr := runBehindSink(t, "remote-sink", "15s", func(k *sink.Sink, h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/stats" {
				h.ServeHTTP(w, r)
				return
			}
			st := k.Stats()
			st.WriteErrors = 7 // failures before the run: not the run's
			if st.Webhooks > 0 {
				st.WriteErrors += 3
			}
			json.NewEncoder(w).Encode(st)
		}
	})
	if got := readMeta(t, p.Dir).SinkWriteErrors; got != 3 {
		t.Errorf("run.json sink_write_errors %d, want the 3 of the run's window\n%s", got, stderr)
	}
	if !strings.Contains(strings.Join(p.Summary.Warnings, "|"), "could not write 3 calls") {
		t.Errorf("warnings %q", p.Summary.Warnings)
	}
}

// A standalone sink the run could not read is unknown, never 0: its count of
// write failures answered 503 at the run's end, and its events refused (401)
// to the copy. run.json sink_unread says both, and the verdict is incomplete
// (the events after the refusal are in no figure), the environment's.
func TestStandaloneSinkUnread(t *testing.T) {
	var refuse atomic.Bool // the events' read API, once the sends are over
	// The refusals begin with the first webhook, and the grace ends once
	// the simulator owes nothing: a busy machine only makes the run longer.
	p, stderr := runBehindSink(t, "remote-sink-unread", "30s", func(k *sink.Sink, h http.Handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/v1/stats" && k.Stats().Webhooks > 0:
				http.Error(w, "stats are down", http.StatusServiceUnavailable)
			case r.URL.Path == "/v1/events" && refuse.Load():
				http.Error(w, "no", http.StatusUnauthorized)
			default:
				if r.URL.Path != "/v1/events" && r.URL.Path != "/v1/stats" && k.Stats().Webhooks >= 1 {
					refuse.Store(true)
				}
				h.ServeHTTP(w, r)
			}
		}
	})
	u := readMeta(t, p.Dir).SinkUnread
	if u == nil || !strings.Contains(u.WriteErrors, "at the run's end: GET /v1/stats answered 503") || !strings.Contains(u.Events, "refused the credentials") {
		t.Fatalf("run.json sink_unread %+v\n%s", u, stderr)
	}
	s := p.Summary
	if s.Verdict != reports.VerdictIncomplete {
		t.Errorf("verdict %s %q, want incomplete", s.Verdict, s.VerdictReasons)
	}
	found := false
	for _, x := range s.Reasons {
		found = found || (x.Whose == reports.WhoseEnvironment && strings.Contains(x.Text, "the copy of the sink's events did not finish"))
	}
	if !found {
		t.Errorf("reasons %+v", s.Reasons)
	}
	// The truth counts the calls the sink answered as arrived: the delivery
	// figures are not compared with it, never called a msgload bug.
	if s.Truth == nil || !strings.Contains(s.Truth.DeliveryNotCompared, "copy of the sink's events did not finish") {
		t.Errorf("truth %+v", s.Truth)
	}
	for _, x := range s.Reasons {
		if x.Whose == reports.WhoseMeasurement {
			t.Errorf("a reason of msgload's own: %+v", x)
		}
	}
}

// runBehindSink runs a 6-notification scenario (grace as given) against the
// embedded simulator, its webhooks to a standalone sink (sink.New) served
// through front, which gets the sink and its handler to answer or pass on.
func runBehindSink(t *testing.T, name, grace string, front func(k *sink.Sink, h http.Handler) http.HandlerFunc) (Part, string) {
	t.Helper()
	k, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl")}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	srv := httptest.NewServer(front(k, k.Handler()))
	t.Cleanup(srv.Close)
	src := fmt.Sprintf(`name: %s
api: notify
target: embedded
sink: %s
load: { rate: 20/s, requests: 6 }
limit: { rate: 100/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { grace: %s }
`, name, srv.URL, grace)
	p, stderr := runSource(t, "remote.yaml", t.TempDir(), src)
	if p.Summary == nil {
		t.Fatalf("no summary: %v\n%s", p.Err, stderr)
	}
	return p, stderr
}
