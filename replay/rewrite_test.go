package replay

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

func TestClientMap(t *testing.T) {
	reqs := []Request{
		{API: apiNotify, ClientID: "rec-b"}, // first seen: gets the first scenario client
		{API: apiNotify, ClientID: "rec-a"}, // second: the second
		{API: apiNotify, ClientID: "rec-b"}, // seen before: same as before
		{API: apiNotify, ClientID: "rec-c"}, // more recorded than scenario clients: round robin back to the first
		{API: apiToken, ClientID: "rec-a"},  // token calls use the notify clients
		{API: apiMessaging, ClientID: "login-x"},
		{API: apiNotify, ClientID: ""}, // unknown client: by position (index 6 % 2 = 0)
	}
	cm := newClientMap(reqs, map[string][]string{apiNotify: {"s1", "s2"}, apiMessaging: {"m1"}})
	want := []string{"s1", "s2", "s1", "s1", "s2", "m1", "s1"}
	for i := range reqs {
		if got := cm.Client(i, &reqs[i]); got != want[i] {
			t.Errorf("request %d (%s): client %q, want %q", i, reqs[i].ClientID, got, want[i])
		}
	}
	// An API with no scenario clients keeps the recorded ids.
	cm = newClientMap(reqs, nil)
	if got := cm.Client(0, &reqs[0]); got != "rec-b" {
		t.Errorf("no scenario clients: %q", got)
	}
}

func TestRewriteBody(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		o    bodyRewrite
		want string
	}{
		{ // callback goes to the sink, the tag joins the recorded trackData, masked recipient gets digits
			"messaging send",
			Request{API: apiMessaging, Op: OpSend, Body: []byte(`{"callback":"http://app/cb","trackData":{"k":"v"},"scenario":[{"recipient":{"value":"+7999*****67"}}]}`)},
			bodyRewrite{SinkURL: "http://127.0.0.1:9/", TrackData: map[string]string{"msgload_run": "r1"}},
			`{"callback":"http://127.0.0.1:9/callback","scenario":[{"recipient":{"value":"` + unmask("+7999*****67") + `"}}],"trackData":{"k":"v","msgload_run":"r1"}}`,
		},
		{ // a fresh externalId replaces the recorded one
			"notify new id",
			Request{API: apiNotify, Op: OpSend, Body: []byte(`{"externalId":"old","n":1.50}`)},
			bodyRewrite{ExternalID: "ml.r1.1.5"},
			`{"externalId":"ml.r1.1.5","n":1.50}`,
		},
		{ // keep mode: the recorded externalId stays
			"notify keep",
			Request{API: apiNotify, Op: OpSend, Body: []byte(`{"externalId":"old"}`)},
			bodyRewrite{},
			`{"externalId":"old"}`,
		},
		{ // webhook registration points at the sink
			"webhook",
			Request{API: apiNotify, Op: opWebhook, Body: []byte(`{"url":"https://app/hook"}`)},
			bodyRewrite{SinkURL: "http://127.0.0.1:9"},
			`{"url":"http://127.0.0.1:9/webhook"}`,
		},
		{ // a body that is not JSON is sent as recorded
			"not json",
			Request{API: apiMessaging, Op: OpSend, Body: []byte(`{broken`)},
			bodyRewrite{SinkURL: "http://s"},
			`{broken`,
		},
	}
	for _, tt := range tests {
		got, err := rewriteBody(&tt.req, tt.o)
		if err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(got, []byte(tt.want)) && string(got) != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return string(ja) == string(jb)
}

func TestUnmask(t *testing.T) {
	a, b := unmask("+7999*****67"), unmask("+7999*****68")
	if a == b || a != unmask("+7999*****67") { // stable, and distinct masks stay distinct here
		t.Errorf("Unmask not stable or collides: %s %s", a, b)
	}
	if len(a) != 12 || a[:5] != "+7999" || a[10:] != "67" || maskPhone(a) != "+7999*****67" {
		t.Errorf("Unmask changed the kept digits: %s", a)
	}
	if unmask("a*b") != "a*b" { // not a masked number
		t.Error("Unmask touched text")
	}
}

func TestForAttack(t *testing.T) {
	reqs := []Request{
		{API: apiToken, Op: opToken, ClientID: "a"},
		{API: apiNotify, Op: OpSend, ClientID: "a", ExternalID: "x", Body: []byte(`{"externalId":"x"}`)},
		{API: apiMessaging, Op: OpSend, ClientID: "m", Body: []byte(`{"scenario":[{"channel":"viber"},{"channel":"sms"}]}`)},
		{API: apiNotify, Op: OpSend, ClientID: "b", ExternalID: "y", Body: []byte(`{"externalId":"y"}`)},
	}
	tag := rundir.Tag{Run: "r", Seq: 2, First: time.Unix(0, 5)}
	// Only the notify sends become messages; keep mode sends the recorded ids.
	p, err := ForAttack(reqs, apiNotify, []string{"s1", "s2"}, AttackRewrite{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Requests != 2 || p.ClientFor(1) != "s1" || p.ClientFor(2) != "s2" {
		t.Errorf("plan: %d requests, clients %q %q", p.Requests, p.ClientFor(1), p.ClientFor(2))
	}
	if b, _ := p.Body(2, "s2", tag); string(b) != `{"externalId":"y"}` {
		t.Errorf("keep: %s", b)
	}
	// New mode sends the tag's externalId.
	p, _ = ForAttack(reqs, apiNotify, []string{"s1"}, AttackRewrite{ExternalIDs: ExternalIDsNew}, 1)
	if b, _ := p.Body(2, "s1", tag); string(b) != `{"externalId":"`+tag.ExternalID()+`"}` {
		t.Errorf("new: %s", b)
	}
	// Messaging: the tag carries the message's own channel chain.
	p, _ = ForAttack(reqs, apiMessaging, []string{"login"}, AttackRewrite{SinkURL: "http://s"}, 1)
	b, _ := p.Body(1, "login", tag)
	var m struct {
		Callback  string            `json:"callback"`
		TrackData map[string]string `json:"trackData"`
	}
	json.Unmarshal(b, &m)
	if m.Callback != "http://s/callback" || m.TrackData[rundir.TrackChain] != "viber,sms" || m.TrackData[rundir.TrackRun] != "r" {
		t.Errorf("messaging body %s", b)
	}
	if _, err := ForAttack(reqs[:1], apiNotify, nil, AttackRewrite{}, 1); !errors.Is(err, ErrNoRequests) {
		t.Errorf("no sends: %v", err)
	}
}
