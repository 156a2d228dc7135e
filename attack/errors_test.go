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
	toks := rec.ops(opToken)
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
	e := &engine{o: &Options{Chain: []string{"viber:DELIVERED", "sms"}}}
	for _, tc := range []struct {
		state, channel string
		cur            int // the item the message is on before the record
		want           bool
		next           int // the item after it
	}{
		{"DELIVERED", "viber", 0, true, 0},        // delivered on viber: the condition is met
		{"SEEN", "viber", 0, true, 0},             // seen implies delivered
		{"NOT_DELIVERED", "viber", 0, false, 1},   // not delivered on viber: the service goes on to sms
		{"FAILED", "viber", 0, false, 1},          // failed on viber: likewise
		{"NOT_DELIVERED", "sms", 1, true, 1},      // on the last channel: the end
		{"FAILED", "", 0, false, 1},               // no channel: on the item the message is on (viber)
		{"FAILED", "", 1, true, 1},                // no channel, on sms: the end
		{"NOT_DELIVERED", "telegram", 0, true, 0}, // a channel outside the chain: judged by state alone
		{"EXPIRED", "viber", 0, false, 1},         // viber expired: the failover goes on to sms
		{"EXPIRED", "sms", 1, true, 1},            // the last channel expired: the end
		{"ACCEPTED", "", 0, false, 0},             // still under way
	} {
		cur := tc.cur
		if got := e.terminal(tc.state, tc.channel, &cur); got != tc.want || cur != tc.next {
			t.Errorf("terminal(%s, %s) on item %d = %v, item %d; want %v, item %d", tc.state, tc.channel, tc.cur, got, cur, tc.want, tc.next)
		}
	}
	seen := &engine{o: &Options{Chain: []string{"viber:SEEN", "sms"}}}
	cur := 0
	if seen.terminal("DELIVERED", "viber", &cur) {
		t.Error("DELIVERED on viber ends a message whose failover awaits SEEN")
	}
}
