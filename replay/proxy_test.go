package replay

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Secrets used by the test traffic: none of them may appear in any byte of a
// recording.
const (
	testPassword     = "pw-Hunter2-Secret"
	testClientSecret = "cs-Very-Secret-123"
	testCookie       = "session=ck-Secret-Cookie-42"
	testJSONSecret   = "js-Nested-Secret-77"
	testQueryToken   = "qt-Query-Token-55"
)

// testToken is a JWT-shaped bearer token whose claims name client app-1.
var testToken = "eyJhbGciOiJIUzI1NiJ9." +
	base64.RawURLEncoding.EncodeToString([]byte(`{"client_id":"app-1","scope":"SCOPE_send"}`)) +
	".sig-Token-Secret-99"

func allTestSecrets() []string {
	return []string{testPassword, testClientSecret, testCookie, "ck-Secret-Cookie-42", testJSONSecret,
		testQueryToken, testToken, "sig-Token-Secret-99"}
}

// fakeUpstream answers like the two APIs and an OAuth token endpoint, and echoes
// things a careless service might echo (the token in a body).
func fakeUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.PostForm.Get("client_secret") != testClientSecret {
			http.Error(w, "bad secret", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", testCookie)
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":300}`, testToken)
	})
	mux.HandleFunc("POST /api/v1/notifications", func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		w.Header().Set("Content-Type", "application/json")
		// A careless service echoing the caller's token in a debug field.
		fmt.Fprintf(w, `{"notificationId":"n-%v","debug":%q}`, b["externalId"], r.Header.Get("Authorization"))
	})
	mux.HandleFunc("POST /messaging/v1/send", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"txId":"00000000-0000-0000-0000-000000000001","state":"ACCEPTED"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// startRecorder runs a recording proxy in front of upstream, writing to a file.
func startRecorder(t *testing.T, upstream string, o RedactOptions) (proxyURL string, closeFn func() string) {
	t.Helper()
	u, _ := url.Parse(upstream)
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := NewRecorder(RecorderOptions{Upstream: u, Out: f, Redact: o})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rec)
	return srv.URL, func() string {
		srv.Close()
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		if rec.Dropped() != 0 {
			t.Errorf("dropped %d exchanges", rec.Dropped())
		}
		f.Close()
		return path
	}
}

// assertNoSecrets fails if any secret appears anywhere in the file.
func assertNoSecrets(t *testing.T, path string, secrets []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("secret %q found in %s", s, path)
		}
	}
}

// sendTestTraffic sends, through base, token requests, notifications with the
// token, cookies and secrets in bodies and queries, and messaging sends with
// Basic credentials.
func sendTestTraffic(t *testing.T, base string, n int) {
	t.Helper()
	c := &http.Client{}
	do := func(req *http.Request) {
		resp, err := c.Do(req)
		if err != nil {
			t.Error(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"app-1"}, "client_secret": {testClientSecret}}
	req, _ := http.NewRequest("POST", base+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	do(req)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"externalId":"ext-%d","recipient":"+7999123%04d","meta":{"password":%q}}`, i, i, testJSONSecret)
			req, _ := http.NewRequest("POST", base+"/api/v1/notifications?access_token="+testQueryToken+"&v=1", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+testToken)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Cookie", testCookie)
			do(req)
			body = fmt.Sprintf(`{"scenario":[{"channel":"sms","sender":"s","recipient":{"type":"MSISDN","value":"+7999123%04d"},"text":"hi"}],"callback":"http://app.local/cb"}`, i)
			req, _ = http.NewRequest("POST", base+"/messaging/v1/send", strings.NewReader(body))
			req.SetBasicAuth("login-1", testPassword)
			req.Header.Set("Content-Type", "application/json")
			do(req)
		}()
	}
	wg.Wait()
}

func TestRecorderConcurrentAndSecretFree(t *testing.T) {
	up := fakeUpstream(t)
	base, stop := startRecorder(t, up.URL, RedactOptions{})
	const n = 100
	sendTestTraffic(t, base, n)
	path := stop()
	assertNoSecrets(t, path, allTestSecrets())
	if os.Getenv("REPLAY_PEEK") != "" {
		b, _ := os.ReadFile(path)
		t.Logf("%s", b[:min(len(b), 2500)])
	}

	rs, err := Load(path, FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1+2*n { // every exchange written, under concurrent traffic
		t.Fatalf("%d requests recorded, want %d", len(rs), 1+2*n)
	}
	counts := map[string]int{}
	for _, r := range rs {
		counts[r.API+"/"+r.ClientID+"/"+fmt.Sprint(r.RecordedCode)]++
		if r.API == apiNotify && (r.ExternalID == "" || !strings.Contains(r.Query, "v=1") || strings.Contains(r.Query, "access_token")) {
			t.Errorf("notify request %+v", r)
		}
	}
	want := map[string]int{"token/app-1/200": 1, "notify/app-1/200": n, "messaging/login-1/200": n}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("count %s = %d, want %d (all: %v)", k, counts[k], v, counts)
		}
	}
}

func TestRecorderMasksRecipients(t *testing.T) {
	up := fakeUpstream(t)
	base, stop := startRecorder(t, up.URL, RedactOptions{MaskRecipients: true})
	sendTestTraffic(t, base, 3)
	path := stop()
	b, _ := os.ReadFile(path)
	for i := range 3 {
		if bytes.Contains(b, fmt.Appendf(nil, "+7999123%04d", i)) {
			t.Errorf("recipient %d not masked", i)
		}
	}
	if !bytes.Contains(b, []byte(`+7999*****0`)) {
		t.Errorf("masked form missing:\n%s", b)
	}
}

func TestRecorderUpstreamDown(t *testing.T) {
	up := fakeUpstream(t)
	base, stop := startRecorder(t, up.URL, RedactOptions{})
	up.Close() // nothing answers now
	resp, err := http.Post(base+"/api/v1/notifications", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("client saw %d, want 502", resp.StatusCode)
	}
	rs, err := Load(stop(), FormatMsgload)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].RecordedCode != 0 { // no answer is recorded as code 0, not as a 502
		t.Errorf("recorded %+v", rs)
	}
}

func TestMaskPhone(t *testing.T) {
	tests := []struct{ in, want string }{
		{"+79991234567", "+7999*****67"},           // the example: +7, three digits, last two
		{"+442071234567", "+44207*****67"},         // two-digit country code kept whole
		{"79991234567", "7999*****67"},             // no plus sign: kept without one
		{"hello", "hello"},                         // not a number
		{"+7999", "+7999"},                         // too short to be a phone number
		{"12345678901234567", "12345678901234567"}, // too long
	}
	for _, tt := range tests {
		if got := maskPhone(tt.in); got != tt.want {
			t.Errorf("MaskPhone(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if len(maskPhone(tt.in)) != len(tt.in) {
			t.Errorf("MaskPhone(%q) changed the length", tt.in)
		}
	}
}

func TestRedactorBody(t *testing.T) {
	r := newRedactor(RedactOptions{SecretFields: []string{"pin"}})
	tests := []struct{ ct, in, want string }{
		{"application/json", `{"a":1,"password":"x","n":{"PIN":"1234","k":[{"client_secret":"s"}]}}`, `{"a":1,"n":{"k":[{}]}}`},                         // nested, case-insensitive, configured field
		{"application/x-www-form-urlencoded", "grant_type=client_credentials&client_id=a&client_secret=s", "client_id=a&grant_type=client_credentials"}, // form
		{"", "grant_type=password&username=u&password=p", "grant_type=password&username=u"},                                                             // form without a content type
		{"text/plain", "just text", ""}, // anything else is redacted whole
	}
	for _, tt := range tests {
		if got := string(r.Body(tt.ct, []byte(tt.in))); got != tt.want {
			t.Errorf("Body(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// serveRecorder serves a recorder in front of a fake upstream, writing to
// out, as `msgload record` does; stop cancels it (what Ctrl-C does) and
// returns what Serve returned.
func serveRecorder(t *testing.T, out io.Writer) (addr string, stop func() error) {
	t.Helper()
	up := fakeUpstream(t)
	u, _ := url.Parse(up.URL)
	rec, err := NewRecorder(RecorderOptions{Upstream: u, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, rec) }()
	return ln.Addr().String(), func() error { cancel(); return <-done }
}

func TestServeFlushesOnCancel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	f, _ := os.Create(path)
	defer f.Close()
	addr, stop := serveRecorder(t, f)
	sendTestTraffic(t, "http://"+addr, 5)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	rs, err := Load(path, FormatMsgload)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 11 { // 1 token + 5 notify + 5 messaging, all flushed
		t.Errorf("%d exchanges after shutdown, want 11", len(rs))
	}
}

// A connection opened but never used (a client's spare keep-alive dial) does
// not hold the stop: Serve returns without error instead of timing out.
func TestServeStopsWithAnIdleNewConnection(t *testing.T) {
	addr, stop := serveRecorder(t, io.Discard)
	sendTestTraffic(t, "http://"+addr, 1)
	spare, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer spare.Close()
	time.Sleep(50 * time.Millisecond) // let the server accept it
	if err := stop(); err != nil {
		t.Fatalf("stop with a spare connection open: %v", err)
	}
}

func TestRecorderOmitsBodiesItCannotRedact(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/gz" {
			w.Header().Set("Content-Encoding", "gzip") // pretend: the bytes are opaque to the recorder
		}
		w.Write(b) // echo: the answer carries the same secret
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	path := filepath.Join(t.TempDir(), "rec.jsonl")
	f, _ := os.Create(path)
	rec, err := NewRecorder(RecorderOptions{Upstream: u, Out: f, MaxBody: 64})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rec)
	secret := `"password":"` + testPassword + `"`
	tests := []struct {
		path, body, encoding string
	}{
		{"/big", `{` + secret + `,"pad":"` + strings.Repeat("x", 100) + `"}`, ""}, // over MaxBody: a cut JSON body could not be redacted
		{"/gz", `{` + secret + `}`, "gzip"},                                       // encoded: cannot be read
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("POST", srv.URL+tt.path, strings.NewReader(tt.body))
		if tt.encoding != "" {
			req.Header.Set("Content-Encoding", tt.encoding)
			req.Header.Set("Accept-Encoding", tt.encoding) // so the client does not try to decompress the echo
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(got) != tt.body { // forwarded in full, both ways
			t.Errorf("%s: client got %d bytes, sent %d", tt.path, len(got), len(tt.body))
		}
	}
	srv.Close()
	rec.Close()
	f.Close()
	assertNoSecrets(t, path, []string{testPassword})
	rs, err := Load(path, FormatMsgload)
	if err != nil || len(rs) != 2 {
		t.Fatalf("%d exchanges, %v", len(rs), err)
	}
	for _, r := range rs { // the exchange is kept, its body is not
		if len(r.Body) != 0 || r.RecordedCode != 200 {
			t.Errorf("%s: body %q recorded, code %d", r.Path, r.Body, r.RecordedCode)
		}
	}
	b, _ := os.ReadFile(path)
	if n := bytes.Count(b, []byte(`"error":"request body not recorded (too large or encoded)"`)); n != 2 {
		t.Errorf("%d exchanges say why their body is missing, want 2", n)
	}
}

func TestRecorderQueryCredentials(t *testing.T) {
	up := fakeUpstream(t)
	base, stop := startRecorder(t, up.URL, RedactOptions{})
	// The messaging API also takes Basic credentials in the "authorization" query parameter.
	q := url.Values{"authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("login-q:"+testPassword))}, "x": {"1"}}
	resp, err := http.Post(base+"/messaging/v1/send?"+q.Encode(), "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	path := stop()
	assertNoSecrets(t, path, []string{testPassword, base64.StdEncoding.EncodeToString([]byte("login-q:" + testPassword))})
	rs, err := Load(path, FormatMsgload)
	if err != nil || len(rs) != 1 {
		t.Fatalf("%v %v", rs, err)
	}
	if rs[0].ClientID != "login-q" || rs[0].Query != "x=1" {
		t.Errorf("client %q query %q", rs[0].ClientID, rs[0].Query)
	}
}

func TestScrubEscapedSecret(t *testing.T) {
	r := newRedactor(RedactOptions{})
	r.Headers(http.Header{"Authorization": {"Bearer tok<&>en-123"}})
	// A service echoing the token inside JSON: json.Marshal escapes < & >.
	line, _ := marshalLine(map[string]string{"echo": "tok<&>en-123"})
	if got := r.Scrub(line); bytes.Contains(got, []byte(`tok\u003c\u0026\u003een-123`)) || !bytes.Contains(got, []byte("[redacted]")) {
		t.Errorf("escaped secret kept: %s", got)
	}
}

func TestRecorderCountsWhatItCannotQueue(t *testing.T) {
	up := fakeUpstream(t)
	u, _ := url.Parse(up.URL)
	var out bytes.Buffer
	// A queue of at most 10 body bytes: bodies of 20 bytes are never queued.
	rec, err := NewRecorder(RecorderOptions{Upstream: u, Out: &out, QueueBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rec)
	for range 5 {
		resp, err := http.Post(srv.URL+"/api/v1/notifications", "application/json", strings.NewReader(`{"externalId":"e1"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 { // the client is served whatever happens to the recording
			t.Errorf("code %d", resp.StatusCode)
		}
	}
	srv.Close()
	rec.Close()
	if rec.Dropped() != 5 || rec.Written() != 0 {
		t.Errorf("dropped %d, written %d; want 5, 0", rec.Dropped(), rec.Written())
	}
}
