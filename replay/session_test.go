package replay

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

func TestSessionEmbedded(t *testing.T) {
	s, err := sim.New(sim.DefaultConfig(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(s.Handler())
	defer simSrv.Close()
	defer s.Close()
	const n = 5
	path := recordAgainstSim(t, simSrv.URL, n)

	var log bytes.Buffer
	out := t.TempDir()
	res, err := Session(t.Context(), SessionOptions{File: path, Speed: 5, Out: out, RunID: "sess-1", Grace: 10 * time.Second, Log: &log,
		ExternalIDs: ExternalIDsNew}) // run-tagged ids: the sink can match every webhook by its tag
	if err != nil {
		t.Fatal(err)
	}
	if res.Dir != filepath.Join(out, "sess-1") || len(res.Parts) != 2 {
		t.Fatalf("dir %s, %d parts", res.Dir, len(res.Parts))
	}
	// A recording of both APIs is replayed as two parts, each a complete run directory.
	for i, api := range []string{rundir.APIMessaging, rundir.APINotify} {
		p := res.Parts[i]
		if p.API != api || p.Dir != filepath.Join(res.Dir, api) || p.Err != nil {
			t.Fatalf("part %d: %+v", i, p)
		}
		// Against the embedded simulator every replayed request gets its recorded answer.
		if p.Report.Sent != n || p.Report.Matching != n {
			t.Errorf("%s: report %+v", api, p.Report)
		}
		for _, f := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.ResultsFile, rundir.EventsFile, rundir.TruthFile, ReplayFile, rundir.SummaryFile} {
			if st, err := os.Stat(filepath.Join(p.Dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %s missing or empty: %v", api, f, err)
			}
		}
		if p.Summary == nil {
			t.Fatalf("%s: no summary: %v", api, p.SummaryErr)
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
			if p.Report.Webhooks != 1 { // the webhook was pointed at the part's sink first
				t.Errorf("webhooks registered: %d %v", p.Report.Webhooks, p.Report.WebhookErrors)
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
	// A second replay into the same directory is refused, never mixed.
	if _, err := Session(t.Context(), SessionOptions{File: path, Out: out, RunID: "sess-1"}); err == nil {
		t.Error("run directory reused")
	}
}
