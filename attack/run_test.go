package attack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// fakeService is a small stand-in for both APIs: it records what it got and
// answers as the seeds describe, with knobs for faults.
type fakeService struct {
	t *testing.T

	mu    sync.Mutex
	sends []fakeSend
	byExt map[string]string // client+externalId → notificationId
	// forgetExt: every notification gets a new id, its externalId never
	// remembered (decided under mu with the lookup, so concurrent copies
	// cannot find each other's id in between)
	forgetExt bool
	polls     map[string]int    // txId → polls so far
	webhooks  map[string]string // client → url
	tokens    atomic.Int64
	nextID    atomic.Int64
	fail      func(seq int64, arrival int, r *http.Request) int // status for the arrival-th send of message seq, 0 = normal
	arrivals  map[int64]int
	refuse    map[string]bool      // bearer tokens to answer 401
	expires   map[string]time.Time // bearer token → expiry; expired tokens get 401
	expired   atomic.Int64         // requests refused for an expired token
	ttl       int                  // expires_in of tokens
}

type fakeSend struct {
	client string
	auth   string
	body   map[string]any
	at     time.Time
}

func newFakeService(t *testing.T) *fakeService {
	return &fakeService{t: t, byExt: map[string]string{}, polls: map[string]int{}, webhooks: map[string]string{}, refuse: map[string]bool{}, expires: map[string]time.Time{}, arrivals: map[int64]int{}, ttl: 3600}
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/token":
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
			http.Error(w, `{"error":"invalid_request"}`, 400)
			return
		}
		id := r.PostForm.Get("client_id")
		if r.PostForm.Get("client_secret") != "secret-"+id {
			http.Error(w, `{"error":"invalid_client"}`, 401)
			return
		}
		n := f.tokens.Add(1)
		tok := fmt.Sprintf("tok-%s-%d", id, n)
		f.mu.Lock()
		f.expires[tok] = time.Now().Add(time.Duration(f.ttl) * time.Second)
		f.mu.Unlock()
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d}`, tok, f.ttl)
	case r.URL.Path == "/api/v1/webhooks":
		client, ok := f.bearerClient(w, r)
		if !ok {
			return
		}
		var b struct{ URL string }
		json.NewDecoder(r.Body).Decode(&b)
		f.mu.Lock()
		f.webhooks[client] = b.URL
		f.mu.Unlock()
		w.Write([]byte(`{}`))
	case r.URL.Path == "/api/v1/notifications":
		client, ok := f.bearerClient(w, r)
		if !ok {
			return
		}
		body := f.record(r, client)
		if f.injected(w, r, body) {
			return
		}
		ext, _ := body["externalId"].(string)
		f.mu.Lock()
		id, ok := f.byExt[client+"/"+ext]
		if !ok || f.forgetExt {
			id = fmt.Sprintf("n-%d", f.nextID.Add(1))
			f.byExt[client+"/"+ext] = id
		}
		f.mu.Unlock()
		fmt.Fprintf(w, `{"notificationId":%q}`, id)
	case r.URL.Path == "/messaging/v1/send":
		user, pass, ok := r.BasicAuth()
		if !ok || pass != "secret-"+user {
			w.WriteHeader(401)
			return
		}
		body := f.record(r, user)
		if f.injected(w, r, body) {
			return
		}
		fmt.Fprintf(w, `{"txId":"00000000-0000-4000-8000-%012d","state":"ACCEPTED","updatedAt":"2026-01-01T00:00:00Z"}`, f.nextID.Add(1))
	case strings.HasPrefix(r.URL.Path, "/messaging/v1/check-status/"):
		tx := strings.TrimPrefix(r.URL.Path, "/messaging/v1/check-status/")
		f.mu.Lock()
		f.polls[tx]++
		n := f.polls[tx]
		f.mu.Unlock()
		state := "ACCEPTED"
		if n >= 3 {
			state = "DELIVERED"
		}
		fmt.Fprintf(w, `{"txId":%q,"state":%q,"channel":"sms"}`, tx, state)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeService) bearerClient(w http.ResponseWriter, r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer tok-")
	f.mu.Lock()
	refused := f.refuse["tok-"+tok]
	exp, known := f.expires["tok-"+tok]
	f.mu.Unlock()
	if known && time.Now().After(exp) {
		f.expired.Add(1)
		refused = true
	}
	if !ok || refused {
		w.WriteHeader(401)
		return "", false
	}
	return tok[:strings.LastIndexByte(tok, '-')], true
}

func (f *fakeService) record(r *http.Request, client string) map[string]any {
	if strings.Contains(r.RequestURI, "#") {
		f.t.Errorf("request URI %q carries a fragment", r.RequestURI)
	}
	for _, h := range []string{"X-Vegeta-Seq", "X-Vegeta-Attack"} {
		if r.Header.Get(h) != "" {
			f.t.Errorf("internal header %s reached the service", h)
		}
	}
	if r.Header.Get("Content-Type") != "application/json" {
		f.t.Errorf("Content-Type %q", r.Header.Get("Content-Type"))
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.t.Errorf("send body: %v", err)
	}
	f.mu.Lock()
	f.sends = append(f.sends, fakeSend{client: client, auth: r.Header.Get("Authorization"), body: body, at: time.Now()})
	f.mu.Unlock()
	return body
}

func (f *fakeService) injected(w http.ResponseWriter, r *http.Request, body map[string]any) bool {
	var tag rundir.Tag
	if ext, ok := body["externalId"].(string); ok {
		tag, _ = rundir.ParseExternalID(ext)
	} else if td, ok := body["trackData"].(map[string]any); ok {
		tag, _ = rundir.ParseTrackData(td)
	}
	f.mu.Lock()
	f.arrivals[tag.Seq]++
	n := f.arrivals[tag.Seq]
	f.mu.Unlock()
	if f.fail == nil {
		return false
	}
	code := f.fail(tag.Seq, n, r)
	if code == 0 {
		return false
	}
	if code == 429 {
		w.Header().Set("Retry-After", "0")
	}
	w.WriteHeader(code)
	return true
}

// memRecorder keeps attempts in memory.
type memRecorder struct {
	mu       sync.Mutex
	attempts []rundir.Attempt
	results  []vegeta.Result
}

func (m *memRecorder) Record(a *rundir.Attempt, r *vegeta.Result) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.attempts = append(m.attempts, *a)
	m.results = append(m.results, *r)
	return nil
}

func (m *memRecorder) ops(op string) []rundir.Attempt {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []rundir.Attempt
	for _, a := range m.attempts {
		if a.Op == op {
			out = append(out, a)
		}
	}
	return out
}

func messagingBody(seq int64, client string, tag rundir.Tag) ([]byte, error) {
	return json.Marshal(map[string]any{"trackData": tag.TrackData(), "seq": seq, "client": client})
}

func notifyBody(seq int64, client string, tag rundir.Tag) ([]byte, error) {
	return json.Marshal(map[string]any{"externalId": tag.ExternalID(), "text": fmt.Sprint("hello ", seq)})
}

func clients(ids ...string) []Client {
	var cs []Client
	for _, id := range ids {
		cs = append(cs, Client{ID: id, Secret: "secret-" + id})
	}
	return cs
}

func TestRunMessagingRecordsEveryAttempt(t *testing.T) {
	f := newFakeService(t)
	srv := httptest.NewServer(f)
	defer srv.Close()
	dir := t.TempDir()
	rec, err := NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{
		API: rundir.APIMessaging, BaseURL: srv.URL, Clients: clients("alice", "bob"),
		Pacer: Constant(vegeta.Rate{Freq: 500, Per: time.Second}), Requests: 20,
		Body: messagingBody, Chain: []string{"viber", "sms"}, RunID: "r1", Out: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Sent != 20 || res.Accepted != 20 || res.Errors != 0 {
		t.Fatalf("result %+v: want 20 sent and accepted, no error", res.Snapshot)
	}
	// The service saw 20 sends, alternating clients, each with its Basic auth
	// and a tag in trackData whose sequence matches.
	if len(f.sends) != 20 {
		t.Fatalf("service got %d sends, want 20", len(f.sends))
	}
	perClient := map[string]int{}
	for _, s := range f.sends {
		perClient[s.client]++
		td, _ := s.body["trackData"].(map[string]any)
		tag, err := rundir.ParseTrackData(td)
		if err != nil || tag.Run != "r1" || float64(tag.Seq) != s.body["seq"].(float64) {
			t.Errorf("send %v: tag %+v, %v", s.body, tag, err)
		}
		if strings.Join(tag.Chain, ",") != "viber,sms" {
			t.Errorf("chain %v", tag.Chain)
		}
		if (tag.Seq%2 == 1) != (s.client == "alice") {
			t.Errorf("seq %d went to %s: want round robin", tag.Seq, s.client)
		}
	}
	if perClient["alice"] != 10 || perClient["bob"] != 10 {
		t.Errorf("per client %v, want 10 each", perClient)
	}
	// attempts.jsonl has one line per send with the ids of the answer.
	var got []rundir.Attempt
	err = rundir.ReadJSONL(filepath.Join(dir, attemptsFile), func(a rundir.Attempt) error { got = append(got, a); return nil }, func(line int, err error) { t.Errorf("line %d: %v", line, err) })
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, a := range got {
		if a.Op != OpSend || a.Code != 200 || a.Outcome != rundir.OutcomeOK || a.Class != "ok" || a.TxID == "" || a.State != "ACCEPTED" || a.Attempt != 1 || a.Channel != "viber" {
			t.Errorf("attempt %+v", a)
		}
		if a.Sent.Before(a.Intended.Add(-time.Millisecond)) || a.FirstSent.After(a.Sent) || a.Latency <= 0 || a.BytesOut == 0 || a.BytesIn == 0 {
			t.Errorf("attempt times or sizes %+v", a)
		}
		seen[a.Seq] = true
	}
	if len(got) != 20 || len(seen) != 20 {
		t.Fatalf("%d attempts over %d sequences, want 20 and 20", len(got), len(seen))
	}
	// results.bin decodes with vegeta's decoder into the same 20 requests.
	fh, err := os.Open(filepath.Join(dir, resultsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	dec := vegeta.NewDecoder(fh)
	var n int
	for {
		var r vegeta.Result
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if r.Code != 200 || r.Method != "POST" || !strings.HasSuffix(r.URL, "/messaging/v1/send") {
			t.Errorf("result %+v", r)
		}
		n++
	}
	if n != 20 {
		t.Errorf("%d vegeta results, want 20", n)
	}
	assertNoSecret(t, dir)
}

// assertNoSecret fails when a client secret, token or Authorization value is
// in any file under dir.
func assertNoSecret(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		for _, s := range []string{"secret-", "tok-", "Basic ", "Bearer "} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds %q", p, s)
			}
		}
		return nil
	})
}

// TestParkSpill: a message whose slot is still taken goes through the spill
// map and both come back by sequence.
func TestParkSpill(t *testing.T) {
	e := &engine{slots: make([]atomic.Pointer[message], scheduleSlots)}
	a, b := &message{seq: 5, hit: 5}, &message{seq: 5 + scheduleSlots, hit: 5 + scheduleSlots}
	e.park(a)
	e.park(b) // same slot
	if e.unpark(b.seq) != b || e.unpark(a.seq) != a || e.unpark(a.seq) != nil {
		t.Fatal("park/unpark lost or duplicated a message")
	}
}

// TestOptionsCheck: every problem of the options is reported at once.
func TestOptionsCheck(t *testing.T) {
	_, err := Run(context.Background(), Options{
		API: "sms", BaseURL: "not a url", Clients: []Client{{ID: "a"}, {ID: "a"}},
		RunID: "bad id!", Limit: Limit{Mode: modeRespect}, Probes: 2, Retry: Retry{Jitter: 3},
	})
	if !errors.Is(err, errOptions) {
		t.Fatalf("err %v, want ErrOptions", err)
	}
	for _, want := range []string{`api "sms"`, "base URL", "listed twice", "no pacer", "neither a duration",
		"no body function", "run id", "respect needs", "jitter", "probes 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
