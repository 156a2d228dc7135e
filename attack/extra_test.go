package attack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// TestExtraRequests sends requests besides the messages (a replay's recorded
// status checks and other calls) at their planned times on the pacer's clock,
// with the client's credentials and the given headers, each recorded once as
// an attempt of its own op with seq 0 and never counted as a message.
func TestExtraRequests(t *testing.T) {
	f := newFakeService(t)
	type seen struct {
		path, auth, ctype, custom string
	}
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/messaging/v1/send" {
			mu.Lock()
			got = append(got, seen{r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), r.Header.Get("X-App")})
			mu.Unlock()
		}
		if r.URL.Path == "/messaging/v1/other" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		f.ServeHTTP(w, r)
	}))
	defer srv.Close()
	rec := &memRecorder{}
	res, err := Run(context.Background(), Options{
		API: rundir.APIMessaging, BaseURL: srv.URL, Clients: clients("alice", "bob"),
		Pacer: Constant(vegeta.Rate{Freq: 20, Per: time.Second}), Requests: 4,
		Body: messagingBody, RunID: "x1", Out: rec,
		Extra: []Extra{
			{At: 120 * time.Millisecond, Op: OpOther, Client: "bob", Method: http.MethodPost, Path: "/messaging/v1/other?x=1",
				Header: http.Header{"Content-Type": {"text/plain"}, "X-App": {"a"}}, Body: []byte("hi")},
			{At: 50 * time.Millisecond, Op: opCheckStatus, Method: http.MethodGet, Path: "/messaging/v1/check-status/tx-1"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 4 || res.Requests != 6 {
		t.Errorf("sent %d, requests %d: want 4 messages and 6 requests", res.Sent, res.Requests)
	}
	if len(got) != 2 {
		t.Fatalf("service got %d extra requests, want 2: %+v", len(got), got)
	}
	// Each as its client, with its own headers (the times are checked on the
	// attempts below: two extras due at once on a busy machine race).
	byPath := map[string]seen{}
	for _, g := range got {
		byPath[g.path] = g
	}
	if g := byPath["/messaging/v1/check-status/tx-1"]; g.auth != "Basic YWxpY2U6c2VjcmV0LWFsaWNl" {
		t.Errorf("status check %+v: want it sent as the first client", g)
	}
	if g := byPath["/messaging/v1/other?x=1"]; g.auth != "Basic Ym9iOnNlY3JldC1ib2I=" || g.ctype != "text/plain" || g.custom != "a" {
		t.Errorf("other call %+v: want it sent as bob with its own headers", g)
	}
	var start time.Time
	for _, a := range rec.ops(OpSend) {
		if a.Seq == 1 {
			start = a.Intended.Add(-50 * time.Millisecond) // the pacer's zero: at 20/s the first send is due 50 ms in
		}
	}
	checks, others := rec.ops(opCheckStatus), rec.ops(OpOther)
	if len(checks) != 1 || len(others) != 1 {
		t.Fatalf("attempts: %d check_status, %d %s; want one each", len(checks), len(others), OpOther)
	}
	for _, c := range []struct {
		a    rundir.Attempt
		at   time.Duration
		code int
	}{{checks[0], 50 * time.Millisecond, 200}, {others[0], 120 * time.Millisecond, 404}} {
		if c.a.Seq != 0 || c.a.Code != c.code || c.a.Intended.Sub(start) != c.at || c.a.Sent.Before(c.a.Intended) {
			t.Errorf("attempt %+v: want seq 0, code %d, intended %v after the start (got %v)", c.a, c.code, c.at, c.a.Intended.Sub(start))
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.results {
		if strings.HasSuffix(r.URL, "/other?x=1") && r.Method != http.MethodPost {
			t.Errorf("result of the other call: %s %s", r.Method, r.URL)
		}
	}
}
