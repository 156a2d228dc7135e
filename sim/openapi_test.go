package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
)

const uuidPattern = `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`

func loadSpec(t *testing.T, name, base string) (*openapi3.T, routers.Router) {
	t.Helper()
	openapi3.DefineStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(uuidPattern))
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("../api/" + name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s is not a valid OpenAPI 3 document: %v", name, err)
	}
	doc.Servers = openapi3.Servers{{URL: base}}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, r
}

// TestOpenAPI sends requests of every operation to the simulator over HTTP
// and validates each request (when it is meant to be valid) and each answer
// against api/*.yaml with kin-openapi; then the calls the simulator made
// (status callbacks, incoming messages, webhooks) against their schemas.
func TestOpenAPI(t *testing.T) {
	rc := newReceiver(t)
	cfg := fastConfig()
	cfg.Messaging.IncomingShare = 1
	cfg.Messaging.ReplyOnShare = 0.5
	cfg.Messaging.IncomingDelay = fixed(10 * time.Millisecond)
	cfg.Messaging.Accounts[0].PartnerURL = rc.srv.URL
	cfg.Messaging.Accounts[0].Channels = allChannels
	cfg.Messaging.Profiles[rundir.ChannelViber] = channelProfile{Delay: fixed(10 * time.Millisecond), Outcomes: []Outcome{{State: rundir.StateDelivered, Weight: 1}}, SeenShare: 1, SeenDelay: fixed(10 * time.Millisecond)}
	cfg.Messaging.Profiles[rundir.ChannelSMS] = channelProfile{Delay: fixed(10 * time.Millisecond), Outcomes: []Outcome{{State: rundir.StateNotDelivered, Code: 6, Weight: 1}}}
	cfg.RateLimit.Requests = 8
	s, err := New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	mdoc, mrouter := loadSpec(t, "messaging.yaml", srv.URL)
	ndoc, nrouter := loadSpec(t, "notification.yaml", srv.URL)

	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	check := func(router routers.Router, req *http.Request, body []byte, validReq bool, wantCode int) []byte {
		t.Helper()
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Fatalf("%s %s: no route: %v", req.Method, req.URL.Path, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		if validReq {
			if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
				t.Fatalf("%s %s: request breaks the document: %v", req.Method, req.URL.Path, err)
			}
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.RequestURI = ""
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != wantCode {
			t.Fatalf("%s %s: %d, want %d: %s", req.Method, req.URL.Path, resp.StatusCode, wantCode, rb)
		}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: opts}
		out.SetBodyBytes(rb)
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Fatalf("%s %s %d: answer breaks the document: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, rb)
		}
		return rb
	}
	mk := func(method, path, ctype, body string, hdr ...string) (*http.Request, []byte) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		return req, []byte(body)
	}
	basic := func(l, p string) string { return "Basic " + base64Std(l+":"+p) }
	const js = "application/json"

	// Messaging.
	send := `{"callback":"` + rc.srv.URL + `/callback","trackData":{"msgload_run":"r","msgload_seq":"1"},"scenario":[` +
		itemJSON("channel", `"viber"`, "failover", `{"ttl":60,"condition_status":"SEEN"}`, "buttons", `[{"caption":"c","action":"https://a"}]`) + `,` + itemJSON() + `]}`
	req, b := mk("POST", "/messaging/v1/send", js, send, "Authorization", basic("demo", "demo"))
	var sr sendResponse
	_ = json.Unmarshal(check(mrouter, req, b, true, 200), &sr)
	send2 := `{"callback":"` + rc.srv.URL + `/callback","scenario":[` + itemJSON() + `]}`
	req, b = mk("POST", "/messaging/v1/send", js, send2, "Authorization", basic("demo", "demo"))
	check(mrouter, req, b, true, 200)
	req, b = mk("POST", "/messaging/v1/send?authorization="+url.QueryEscape(basic("demo", "demo")), js, send2)
	check(mrouter, req, b, true, 200)
	req, b = mk("POST", "/messaging/v1/send", js, `{"scenario":[`+itemJSON("sender", `"ABCDEFGHIJKL"`)+`]}`, "Authorization", basic("demo", "demo"))
	check(mrouter, req, b, true, 400) // valid for the document (21 max), refused by the sms rule
	req, b = mk("POST", "/messaging/v1/send", js, `{"scenario":[]}`, "Authorization", basic("demo", "demo"))
	check(mrouter, req, b, false, 400)
	req, b = mk("POST", "/messaging/v1/send", js, send2, "Authorization", basic("demo", "x"))
	check(mrouter, req, b, true, 401)
	req, b = mk("POST", "/messaging/v1/send", js, send2, "Authorization", basic("blocked", "blocked"))
	check(mrouter, req, b, true, 403)
	req, b = mk("GET", "/messaging/v1/check-status/"+sr.TxID, "", "", "Authorization", basic("demo", "demo"))
	check(mrouter, req, b, true, 200)
	req, b = mk("GET", "/messaging/v1/check-status/00000000-0000-0000-0000-000000000000", "", "", "Authorization", basic("demo", "demo"))
	check(mrouter, req, b, true, 404)

	// Notification.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-1"}, "client_secret": {"demo"}}.Encode()
	req, b = mk("POST", "/oauth/token", "application/x-www-form-urlencoded", form)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.Unmarshal(check(nrouter, req, b, true, 200), &tok)
	req, b = mk("POST", "/oauth/token", "application/x-www-form-urlencoded", url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-1"}, "client_secret": {"x"}}.Encode())
	check(nrouter, req, b, true, 401)
	req, b = mk("POST", "/oauth/token", "application/x-www-form-urlencoded", "grant_type=password")
	check(nrouter, req, b, false, 400)
	bearer := "Bearer " + tok.AccessToken
	req, b = mk("POST", "/api/v1/webhooks", js, `{"url":"`+rc.srv.URL+`/webhook"}`, "Authorization", bearer)
	check(nrouter, req, b, true, 200)
	req, b = mk("GET", "/api/v1/webhooks", "", "", "Authorization", bearer)
	check(nrouter, req, b, true, 200)
	nbody := `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"ml.r.2.1700000000000000000"}`
	req, b = mk("POST", "/api/v1/notifications", js, nbody, "Authorization", bearer)
	check(nrouter, req, b, true, 200)
	req, b = mk("POST", "/api/v1/notifications", js, nbody, "Authorization", bearer)
	check(nrouter, req, b, true, 200) // replay
	req, b = mk("POST", "/api/v1/notifications", js, `{"recipient":{"value":"8"},"notificationText":"hi"}`, "Authorization", bearer)
	check(nrouter, req, b, true, 400)
	req, b = mk("POST", "/api/v1/notifications", js, nbody, "Authorization", "Bearer nope")
	check(nrouter, req, b, true, 401)
	only := token(t, s, "notify-only")
	req, b = mk("POST", "/api/v1/webhooks", js, `{"url":"http://x.test/w"}`, "Authorization", "Bearer "+only)
	check(nrouter, req, b, true, 403)
	// demo-1 has used 5 of its 8 (webhook set and read, send, replay, 400); the 9th is refused.
	for i := 0; i < 3; i++ {
		req, b = mk("POST", "/api/v1/notifications", js, nbody, "Authorization", bearer)
		check(nrouter, req, b, true, 200)
	}
	req, b = mk("POST", "/api/v1/notifications", js, nbody, "Authorization", bearer)
	check(nrouter, req, b, true, 429)

	// The calls the simulator made.
	// 4 status callbacks (viber DELIVERED and SEEN, two sms NOT_DELIVERED), 1 incoming reply, 1 webhook.
	waitFor(t, "the calls", func() bool { return s.Pending() == 0 && len(rc.snapshot()) >= 6 })
	schema := func(doc *openapi3.T, name string) *openapi3.Schema { return doc.Components.Schemas[name].Value }
	seen := map[string]int{}
	for _, c := range rc.snapshot() {
		var v any
		if err := json.Unmarshal(c.Body, &v); err != nil {
			t.Fatalf("%s: not JSON: %s", c.Path, c.Body)
		}
		var sc *openapi3.Schema
		switch c.Path {
		case "/callback":
			sc = schema(mdoc, "StatusRecord")
		case "/incoming":
			sc = schema(mdoc, "IncomingMessage")
		case "/webhook":
			sc = schema(ndoc, "NotificationCallbackEvent")
		default:
			t.Fatalf("call to %s", c.Path)
		}
		if err := sc.VisitJSON(v); err != nil {
			t.Fatalf("%s body breaks the document: %v\n%s", c.Path, err, c.Body)
		}
		seen[c.Path]++
	}
	if seen["/callback"] == 0 || seen["/incoming"] == 0 || seen["/webhook"] != 1 {
		t.Fatalf("calls seen: %v", seen)
	}
}
