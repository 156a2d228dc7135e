package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

// callbackCounter stands in for the sink: it counts calls per route and the
// run tags they carry.
type callbackCounter struct {
	mu   sync.Mutex
	hits map[string]int // route → calls
	runs map[string]int // msgload_run in trackData → calls
}

func (c *callbackCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body struct {
		TrackData map[string]any `json:"trackData"`
	}
	json.Unmarshal(b, &body)
	c.mu.Lock()
	c.hits[r.URL.Path]++
	if run, ok := body.TrackData[rundir.TrackRun].(string); ok {
		c.runs[run]++
	}
	c.mu.Unlock()
}

func (c *callbackCounter) runCount(run string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs[run]
}

// appSecret is the notify client secret and the messaging password the "app"
// uses while being recorded: the simulator's built-in demo credentials.
const simSecret = "demo"

// recordAgainstSim records an app's traffic through the proxy in front of the
// simulator: a token request, n notifications with externalIds and n messaging
// sends, one every 20 ms, with an app callback URL that must be rewritten.
func recordAgainstSim(t *testing.T, simURL string, n int) (path string) {
	t.Helper()
	base, stop := startRecorder(t, simURL, RedactOptions{MaskRecipients: true})
	c := &http.Client{Timeout: 10 * time.Second}
	post := func(req *http.Request) []byte {
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", req.URL.Path, resp.StatusCode, b)
		}
		return b
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-1"}, "client_secret": {simSecret}}
	req, _ := http.NewRequest("POST", base+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.Unmarshal(post(req), &tok)
	if tok.AccessToken == "" {
		t.Fatal("no token from the simulator")
	}
	for i := range n {
		body := fmt.Sprintf(`{"externalId":"app-%d","recipient":{"value":"+7999123%04d"},"notificationText":"hello %d"}`, i, i, i)
		req, _ := http.NewRequest("POST", base+"/api/v1/notifications", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		post(req)
		body = fmt.Sprintf(`{"scenario":[{"channel":"sms","sender":"shop","recipient":{"type":"MSISDN","value":"+7999123%04d"},"text":"hi %d"}],"callback":"http://app.invalid/cb"}`, i, i)
		req, _ = http.NewRequest("POST", base+"/messaging/v1/send", strings.NewReader(body))
		req.SetBasicAuth("demo", simSecret)
		req.Header.Set("Content-Type", "application/json")
		post(req)
		time.Sleep(20 * time.Millisecond)
	}
	path = stop()
	// The token the simulator issued must not be in the recording either.
	assertNoSecrets(t, path, []string{tok.AccessToken, "ZGVtbzpkZW1v" /* demo:demo */, "client_secret="})
	return path
}

func TestRoundTripThroughSimulator(t *testing.T) {
	s, err := sim.New(sim.DefaultConfig(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(s.Handler())
	defer simSrv.Close()
	defer s.Close()
	sinkC := &callbackCounter{hits: map[string]int{}, runs: map[string]int{}}
	sinkSrv := httptest.NewServer(sinkC)
	defer sinkSrv.Close()

	const n = 15 // three passes of 15 sends per client stay under the 100/min limit
	reqs, err := Load(recordAgainstSim(t, simSrv.URL, n), FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	recordedIDs := map[string]bool{}
	for _, r := range reqs {
		if r.ExternalID != "" {
			recordedIDs[r.ExternalID] = true
		}
	}

	replayOnce := func(run string, speed float64) (map[string]string, []rundir.Attempt, *Report) {
		dir := t.TempDir()
		rep, err := Run(t.Context(), RunOptions{
			Requests: reqs, Speed: speed, MessagingURL: simSrv.URL, NotifyURL: simSrv.URL,
			Messaging: []Cred{{"demo", simSecret}}, Notify: []Cred{{"demo-2", simSecret}},
			SinkURL: sinkSrv.URL, ExternalIDs: ExternalIDsKeep, RunID: run, Dir: dir,
		})
		if err != nil {
			t.Fatal(err)
		}
		var atts []rundir.Attempt
		rundir.ReadJSONL(filepath.Join(dir, rundir.AttemptsFile), func(a rundir.Attempt) error { atts = append(atts, a); return nil }, nil)
		ids := map[string]string{}
		for _, a := range atts {
			if a.NotificationID != "" {
				ids[a.ExternalID] = a.NotificationID
			}
		}
		return ids, atts, rep
	}

	for _, speed := range []float64{1, 10} {
		run := fmt.Sprintf("rt-%vx", speed)
		_, atts, rep := replayOnce(run, speed)
		// Every recorded request but the token call was replayed, with the recorded answer.
		if rep.Sent != 2*n || rep.Matching != 2*n {
			t.Errorf("%v×: sent %d, matching %d, codes %+v", speed, rep.Sent, rep.Matching, rep.Codes)
		}
		// Intended send times are the recorded offsets scaled by the speed, exactly.
		var want, got []time.Duration
		for _, r := range reqs {
			if r.API != APIToken {
				want = append(want, time.Duration(float64(r.Offset)/speed))
			}
		}
		slices.SortFunc(atts, func(a, b rundir.Attempt) int { return a.Intended.Compare(b.Intended) })
		var lat []time.Duration
		for _, a := range atts {
			got = append(got, a.Intended.Sub(atts[0].Intended))
			lat = append(lat, a.Late())
		}
		for i := range want {
			if d := want[i] - want[0]; got[i] != d {
				t.Errorf("%v×: hit %d intended at %v, want %v", speed, i, got[i], d)
				break
			}
		}
		slices.Sort(lat)
		p99 := quantile(lat, 0.99)
		t.Logf("%v×: span %v, send lag p50 %v p99 %v max %v; pacer lateness %+v", speed, want[len(want)-1]-want[0],
			quantile(lat, 0.5), p99, lat[len(lat)-1], rep.Lateness)
		if p99 > 2*time.Second { // a generous bound: loopback on a busy 2-core machine
			t.Errorf("%v×: send lag p99 %v", speed, p99)
		}
	}

	// Idempotency across runs: with kept externalIds, two replays get the same notificationIds.
	ids1, _, _ := replayOnce("rt-a", 10)
	ids2, _, _ := replayOnce("rt-b", 10)
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
	for sinkC.runCount("rt-a") == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if sinkC.runCount("rt-a") == 0 {
		t.Errorf("no callback of run rt-a reached the sink: %v", sinkC.hits)
	}
}
