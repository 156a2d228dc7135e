package grafana

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sink"
)

// testRun is the short run the end-to-end test scrapes: the servers exposing
// /metrics, their registries, and drive, which sends the run's traffic and
// returns when it is over. complete says the run exposes every metric the
// dashboards use, so a query it cannot answer is a failure, not a TODO.
type testRun struct {
	sources   []source
	gatherers []prometheus.Gatherer
	drive     func(t *testing.T)
	complete  bool
}

// startRun builds the run from the real packages that exist so far. TODO(lead):
// once attack, sim and harness land, replace it by a short harness smoke run
// against the embedded sim and sink and set complete.
func startRun(t *testing.T) *testRun {
	t.Helper()
	reg := prometheus.NewRegistry()
	sk, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl")}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sk.Close() })
	src := serve(t, "msgload-sink", reg, sk.Handler())
	return &testRun{
		sources:   []source{src},
		gatherers: []prometheus.Gatherer{reg},
		drive:     func(t *testing.T) { driveSink(t, src.srv.URL) },
	}
}

// driveSink plays, for about six seconds, what a simulator sends a sink during a
// messaging and a notify run: status records across states and channels with
// a failover step, a duplicate, an unmatched record, incoming replies,
// webhooks and one malformed call.
func driveSink(t *testing.T, base string) {
	t.Helper()
	post := func(route string, body any) int {
		b, _ := json.Marshal(body)
		resp, err := http.Post(base+route, "application/json", strings.NewReader(string(b)))
		if err != nil {
			t.Fatalf("post %s: %v", route, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tx := func(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
	chain := []string{"push", "sms"}
	seq := 0
	for tick := range 6 {
		for range 5 {
			seq++
			tag := rundir.Tag{Run: "e2e", Seq: int64(seq), First: time.Now().Add(-time.Duration(seq%7) * 150 * time.Millisecond), Chain: chain}
			rec := func(state, channel string) map[string]any {
				return map[string]any{"txId": tx(seq), "updatedAt": time.Now().UTC().Format(time.RFC3339), "state": state, "channel": channel, "trackData": tag.TrackData()}
			}
			post("/callback", rec("EXPIRED", "push"))
			post("/callback", rec("DELIVERED", "sms")) // the failover step push → sms
			if seq%3 == 0 {
				post("/callback", rec("DELIVERED", "sms")) // a duplicate
			}
			ntag := rundir.Tag{Run: "e2e", Seq: int64(1000 + seq), First: time.Now().Add(-300 * time.Millisecond)}
			post("/webhook", map[string]any{"externalId": ntag.ExternalID(), "notificationId": fmt.Sprintf("n%d", seq), "status": "DELIVERED"})
		}
		post("/callback", map[string]any{"txId": tx(90000 + tick), "updatedAt": time.Now().UTC().Format(time.RFC3339), "state": "DELIVERED", "channel": "sms"}) // unmatched
		post("/incoming", map[string]any{"txId": tx(80000 + tick), "channel": "sms", "recipient": map[string]string{"type": "MSISDN", "value": "79001234567"}, "sender": "shop", "outgoingTxId": tx(seq)})
		if code := post("/callback", map[string]any{"txId": "nope"}); code != http.StatusBadRequest {
			t.Errorf("malformed callback answered %d, want 400", code)
		}
		time.Sleep(time.Second)
	}
}
