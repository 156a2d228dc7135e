package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// callbackCounter stands in for a standalone sink: it counts calls per route
// and the run tags they carry, and its read API has no events.
type callbackCounter struct {
	mu   sync.Mutex
	hits map[string]int // route → calls
	runs map[string]int // msgload_run in trackData → calls
}

func (c *callbackCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/events" {
		w.Write([]byte(`{"events":[]}`)) // the sink's read API, with nothing to read
		return
	}
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
