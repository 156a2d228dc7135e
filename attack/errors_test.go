package attack

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// TestTransportErrors: what happens on the wire is classed in each attempt.
func TestTransportErrors(t *testing.T) {
	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	// A server that drops the connection after reading the request.
	reset := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			c.Close()
		}
	}))
	defer reset.Close()
	for _, tc := range []struct {
		name    string
		url     string
		class   string
		outcome string
	}{
		// Refused: nothing reached the service, the message surely was not sent.
		{"refused", closed, "conn", rundir.OutcomeFail},
		// Dropped after the request: it may have been processed.
		{"reset", reset.URL, "reset", rundir.OutcomeUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &memRecorder{}
			res, err := Run(context.Background(), Options{
				API: rundir.APIMessaging, BaseURL: tc.url, Clients: clients("a"),
				Pacer: Constant(vegeta.Rate{Freq: 100, Per: time.Second}), Requests: 2,
				Body: messagingBody, RunID: "err", Out: rec,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent != 2 || res.Errors != 2 || res.Accepted != 0 {
				t.Fatalf("%+v", res.Snapshot)
			}
			for _, a := range rec.ops(OpSend) {
				if a.Code != 0 || a.Class != tc.class || a.Outcome != tc.outcome || a.Error == "" {
					t.Errorf("attempt code %d class %s outcome %s error %q; want class %s outcome %s",
						a.Code, a.Class, a.Outcome, a.Error, tc.class, tc.outcome)
				}
			}
		})
	}
}

// TestTokenEndpointRefuses: a token endpoint that refuses the client fails the
// sends without sending them, records the token attempts, and keeps the
// endpoint's answer body (which may echo credentials) out of every record.
func TestTokenEndpointRefuses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			r.ParseForm()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			w.Write([]byte(`{"error":"invalid_client","error_description":"bad secret ` + r.PostForm.Get("client_secret") + `"}`))
			return
		}
		t.Errorf("%s reached the service without a token", r.URL.Path)
	}))
	defer srv.Close()
	rec := &memRecorder{}
	res, err := Run(context.Background(), Options{
		API: rundir.APINotify, BaseURL: srv.URL, TokenURL: srv.URL + "/token", Clients: clients("c"),
		Pacer: Constant(vegeta.Rate{Freq: 100, Per: time.Second}), Requests: 3,
		Body: notifyBody, RunID: "tokfail", Out: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 0 || res.Sent != 3 {
		t.Fatalf("%+v", res.Snapshot)
	}
	toks := rec.ops(OpToken)
	if len(toks) == 0 || toks[0].Code != 401 || toks[0].Outcome != rundir.OutcomeFail {
		t.Fatalf("token attempts %+v", toks)
	}
	for _, a := range rec.attempts {
		if strings.Contains(a.Error, "secret-c") {
			t.Errorf("secret in a record: %+v", a)
		}
	}
	for _, a := range rec.ops(OpSend) {
		if a.Outcome != rundir.OutcomeFail || !strings.Contains(a.Error, "token endpoint answered 401") {
			t.Errorf("send %+v", a)
		}
	}
}

func TestTerminal(t *testing.T) {
	e := &engine{o: &Options{Chain: []string{"viber", "sms"}}}
	for _, tc := range []struct {
		state, channel string
		want           bool
	}{
		{"DELIVERED", "viber", true},        // a delivery ends it on any channel
		{"SEEN", "viber", true},             // so does being seen
		{"NOT_DELIVERED", "viber", false},   // not delivered on viber: the service goes on to sms
		{"FAILED", "viber", false},          // failed on viber: likewise
		{"NOT_DELIVERED", "sms", true},      // on the last channel: the end
		{"FAILED", "", true},                // no channel to go on from
		{"NOT_DELIVERED", "telegram", true}, // a channel outside the chain: nothing follows
		{"EXPIRED", "viber", false},         // viber expired: the failover goes on to sms
		{"EXPIRED", "sms", true},            // the last channel expired: the end
		{"EXPIRED", "", true},               // no channel to go on from
		{"ACCEPTED", "", false},             // still under way
	} {
		if got := e.terminal(tc.state, tc.channel); got != tc.want {
			t.Errorf("terminal(%s, %s) = %v, want %v", tc.state, tc.channel, got, tc.want)
		}
	}
}
