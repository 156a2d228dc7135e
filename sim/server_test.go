package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
)

// receiver collects the calls the simulator makes.
type receiver struct {
	mu    sync.Mutex
	calls []call
	srv   *httptest.Server
}

type call struct {
	Path   string
	Body   []byte
	Header http.Header
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.calls = append(rc.calls, call{r.URL.Path, b, r.Header.Clone()})
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) snapshot() []call {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]call(nil), rc.calls...)
}

func fastConfig() Config {
	cfg := DefaultConfig()
	for ch, p := range cfg.Messaging.Profiles {
		p.Delay = Delay{Dist: "fixed", Median: 10 * time.Millisecond}
		p.SeenDelay = Delay{Dist: "fixed", Median: 10 * time.Millisecond}
		p.Outcomes = []Outcome{{State: rundir.StateDelivered, Weight: 1}}
		cfg.Messaging.Profiles[ch] = p
	}
	cfg.Notify.Delay = Delay{Dist: "fixed", Median: 10 * time.Millisecond}
	cfg.Notify.Outcomes = []Outcome{{State: rundir.NotifyDelivered, Weight: 1}}
	cfg.Seed = 1
	return cfg
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSmokeOverNetwork runs both APIs over a real loopback listener: a
// messaging send gets its status callback with trackData echoed, a
// notification gets its webhook, and Pending drains to zero.
func TestSmokeOverNetwork(t *testing.T) {
	rc := newReceiver(t)
	s, err := New(fastConfig(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	body := `{"scenario":[{"channel":"sms","recipient":{"type":"MSISDN","value":"+79990000001"},"sender":"Acme","text":"hi"}],
	  "callback":"` + rc.srv.URL + `/callback","trackData":{"msgload_run":"r1","msgload_seq":"7","msgload_sent":"1700000000000000000"}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/messaging/v1/send", strings.NewReader(body))
	req.SetBasicAuth("demo", "demo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var sr sendResponse
	_ = json.NewDecoder(resp.Body).Decode(&sr)
	resp.Body.Close()
	if resp.StatusCode != 200 || sr.State != rundir.StateAccepted || sr.TxID == "" {
		t.Fatalf("send: %d %+v", resp.StatusCode, sr)
	}

	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-1"}, "client_secret": {"demo"}}
	resp, err = http.PostForm(srv.URL+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if tok.AccessToken == "" {
		t.Fatalf("token: %d", resp.StatusCode)
	}
	post := func(path, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp = post("/api/v1/webhooks", `{"url":"`+rc.srv.URL+`/webhook"}`)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("webhook: %d", resp.StatusCode)
	}
	resp = post("/api/v1/notifications", `{"recipient":{"value":"+79990000002"},"notificationText":"x","externalId":"ml.r1.8.1700000000000000000"}`)
	var nr notificationResponse
	_ = json.NewDecoder(resp.Body).Decode(&nr)
	resp.Body.Close()
	if resp.StatusCode != 200 || nr.NotificationID == "" {
		t.Fatalf("notification: %d %+v", resp.StatusCode, nr)
	}

	waitFor(t, "callback and webhook", func() bool { return len(rc.snapshot()) >= 2 && s.Pending() == 0 })
	var sawCB, sawWH bool
	for _, c := range rc.snapshot() {
		switch c.Path {
		case "/callback":
			var rec map[string]any
			_ = json.Unmarshal(c.Body, &rec)
			td, _ := rec["trackData"].(map[string]any)
			sawCB = rec["txId"] == sr.TxID && rec["state"] == rundir.StateDelivered && td["msgload_seq"] == "7"
		case "/webhook":
			var ev notificationCallbackEvent
			_ = json.Unmarshal(c.Body, &ev)
			sawWH = ev.NotificationID == nr.NotificationID && ev.Status == rundir.NotifyDelivered && ev.ExternalID == "ml.r1.8.1700000000000000000"
		}
	}
	if !sawCB || !sawWH {
		t.Fatalf("callback %v webhook %v: %+v", sawCB, sawWH, rc.snapshot())
	}
	tr := s.Truth()
	if len(tr.Messages) != 2 || tr.Messages[0].Final != rundir.StateDelivered {
		t.Fatalf("truth: %+v", tr.Messages)
	}
}
