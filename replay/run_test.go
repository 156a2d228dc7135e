package replay

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// authCheckingUpstream wraps fakeUpstream's behaviour and records what each
// replayed request carried.
type seenReq struct {
	path, auth, body string
}

func recordingTarget(t *testing.T, up *httptest.Server) (*httptest.Server, func() []seenReq) {
	var mu sync.Mutex
	var seen []seenReq
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		if r.Body != nil {
			buf := make([]byte, 1<<16)
			n, _ := r.Body.Read(buf)
			b.Write(buf[:n])
			r.Body = readCloser(b.String())
		}
		mu.Lock()
		seen = append(seen, seenReq{r.URL.Path, r.Header.Get("Authorization"), b.String()})
		mu.Unlock()
		up.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy, func() []seenReq { mu.Lock(); defer mu.Unlock(); return append([]seenReq(nil), seen...) }
}

func readCloser(s string) *nopCloser { return &nopCloser{strings.NewReader(s)} }

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

func TestRunRewritesAndReports(t *testing.T) {
	up := fakeUpstream(t)
	base, stop := startRecorder(t, up.URL, RedactOptions{})
	sendTestTraffic(t, base, 10)
	reqs, err := Load(stop(), FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	target, seen := recordingTarget(t, up)
	dir := t.TempDir()
	rep, err := Run(t.Context(), RunOptions{
		Requests: reqs, Speed: 10, MessagingURL: target.URL, NotifyURL: target.URL,
		Messaging: []Cred{{"m-login", "m-pass"}}, Notify: []Cred{{"app-1", testClientSecret}},
		SinkURL: "http://127.0.0.1:1", RunID: "r1", Dir: dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The recorded token call is not replayed; a fresh token is fetched once.
	if rep.Planned != 20 || rep.Sent != 20 || rep.Skipped["token endpoint (fresh tokens are used)"] != 1 || rep.TokenErrors != 0 {
		t.Errorf("report %+v", rep)
	}
	if rep.Matching != 20 {
		t.Errorf("matching %d of 20: %+v", rep.Matching, rep.Codes)
	}
	tokens := 0
	for _, s := range seen() {
		switch s.path {
		case "/oauth/token":
			tokens++
		case "/messaging/v1/send":
			if s.auth != "Basic bS1sb2dpbjptLXBhc3M=" { // m-login:m-pass, not the recorded login-1
				t.Errorf("messaging auth %q", s.auth)
			}
			if !strings.Contains(s.body, `"callback":"http://127.0.0.1:1/callback"`) || !strings.Contains(s.body, `"msgload_run":"r1"`) {
				t.Errorf("messaging body not rewritten: %s", s.body)
			}
		case "/api/v1/notifications":
			if s.auth != "Bearer "+testToken {
				t.Errorf("notify auth %q", s.auth)
			}
			if !strings.Contains(s.body, `"externalId":"ext-`) { // keep mode
				t.Errorf("notify body %s", s.body)
			}
		}
	}
	if tokens != 1 {
		t.Errorf("%d token requests, want 1 (cached)", tokens)
	}
	// The run directory has one attempt per request, with the answer's ids.
	var atts []rundir.Attempt
	err = rundir.ReadJSONL(filepath.Join(dir, rundir.AttemptsFile), func(a rundir.Attempt) error { atts = append(atts, a); return nil }, func(int, error) { t.Error("bad line") })
	if err != nil || len(atts) != 20 {
		t.Fatalf("%d attempts, err %v", len(atts), err)
	}
	for _, a := range atts {
		if a.API == rundir.APINotify && (a.NotificationID != "n-"+a.ExternalID || a.Client != "app-1" || a.Seq == 0) {
			t.Errorf("notify attempt %+v", a)
		}
		if a.API == rundir.APIMessaging && (a.TxID == "" || a.Client != "m-login") {
			t.Errorf("messaging attempt %+v", a)
		}
		if a.Sent.Before(a.Intended.Add(-1e6)) { // never sent before the plan (1ms clock slack)
			t.Errorf("sent %v before intended %v", a.Sent, a.Intended)
		}
	}
	var onDisk Report
	b, _ := os.ReadFile(filepath.Join(dir, ReplayFile))
	if err := json.Unmarshal(b, &onDisk); err != nil || onDisk.Matching != 20 {
		t.Errorf("replay.json: %v %+v", err, onDisk)
	}
	if st, err := os.Stat(filepath.Join(dir, rundir.ResultsFile)); err != nil || st.Size() == 0 {
		t.Errorf("results.bin: %v", err)
	}
}

func TestRunNewExternalIDs(t *testing.T) {
	reqs := []Request{
		{API: APINotify, Op: OpSend, Method: "POST", Path: "/api/v1/notifications", Body: []byte(`{"externalId":"a"}`), ExternalID: "a", RecordedCode: 200},
		{API: APINotify, Op: OpSend, Method: "POST", Path: "/api/v1/notifications", Body: []byte(`{"externalId":"a"}`), ExternalID: "a", RecordedCode: 200}, // the app's retry
		{API: APINotify, Op: OpSend, Method: "POST", Path: "/api/v1/notifications", Body: []byte(`{"externalId":"b"}`), ExternalID: "b", RecordedCode: 200},
	}
	up := fakeUpstream(t)
	dir := t.TempDir()
	_, err := Run(t.Context(), RunOptions{Requests: reqs, Speed: 1, NotifyURL: up.URL, Notify: []Cred{{"app-1", testClientSecret}},
		ExternalIDs: ExternalIDsNew, RunID: "r2", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int64][]string{}
	rundir.ReadJSONL(filepath.Join(dir, rundir.AttemptsFile), func(a rundir.Attempt) error {
		ids[a.Seq] = append(ids[a.Seq], a.ExternalID)
		return nil
	}, nil)
	// A repeat of a recorded id keeps one fresh, run-tagged id (seq 1, two attempts).
	if len(ids) != 2 || len(ids[1]) != 2 || ids[1][0] != ids[1][1] || len(ids[2]) != 1 {
		t.Fatalf("ids %v", ids)
	}
	for seq, v := range ids {
		tag, err := rundir.ParseExternalID(v[0])
		if err != nil || tag.Run != "r2" || tag.Seq != seq {
			t.Errorf("seq %d: id %q is not a tag of the run: %v", seq, v[0], err)
		}
	}
}
