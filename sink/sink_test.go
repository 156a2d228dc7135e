package sink

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgload/msgload/rundir"
)

// fixedNow is the sink's clock in these tests: every event arrives at this instant.
var fixedNow = time.Date(2026, 11, 23, 2, 0, 10, 0, time.UTC)

type harness struct {
	t   *testing.T
	s   *Sink
	reg *prometheus.Registry
	srv *httptest.Server
	log string
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	if opts.LogPath == "" {
		opts.LogPath = filepath.Join(t.TempDir(), rundir.EventsFile)
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	reg := prometheus.NewRegistry()
	s, err := New(opts, reg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, s: s, reg: reg, srv: httptest.NewServer(s.Handler()), log: opts.LogPath}
	t.Cleanup(func() {
		h.srv.Close()
		s.Close()
	})
	return h
}

func (h *harness) post(route, body string, hdr http.Header) int {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.srv.URL+route, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// events reads the log as written so far.
func (h *harness) events() []rundir.Event {
	h.t.Helper()
	var evs []rundir.Event
	err := rundir.ReadJSONL(h.log, func(e rundir.Event) error { evs = append(evs, e); return nil },
		func(line int, err error) { h.t.Errorf("log line %d does not decode: %v", line, err) })
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}

func (h *harness) last() rundir.Event {
	evs := h.events()
	if len(evs) == 0 {
		h.t.Fatal("log is empty")
	}
	return evs[len(evs)-1]
}

// status builds a status record; tag nil means no trackData.
func status(tx, state, channel string, tag *rundir.Tag) string {
	m := map[string]any{"txId": tx, "updatedAt": "2026-11-23T02:00:05Z", "state": state}
	if channel != "" {
		m["channel"] = channel
	}
	if tag != nil {
		m["trackData"] = tag.TrackData()
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// txID returns a distinct uuid per n.
func txID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

func TestCallbackCorrelation(t *testing.T) {
	sent := fixedNow.Add(-1500 * time.Millisecond) // the tag's first-attempt send time
	tag := &rundir.Tag{Run: "run1", Seq: 7, First: sent}
	chain := &rundir.Tag{Run: "run1", Seq: 8, First: sent, Chain: []string{"viber:DELIVERED", "sms"}}
	seenChain := &rundir.Tag{Run: "run1", Seq: 9, First: sent, Chain: []string{"viber:SEEN", "sms"}}
	other := &rundir.Tag{Run: "other", Seq: 1, First: sent}

	// Each step posts one callback to the same sink, in order, and checks the event
	// written and the counters after it.
	steps := []struct {
		name                  string
		body                  string
		wantCode              int
		wantKind              string
		matched, dup, term    bool
		failover              bool
		latency               float64 // 0: none
		duplicates, unmatched int64
		terminalMsgs          int64
	}{
		// A first DELIVERED is a latency point, measured from the tag alone: the sink
		// has never heard of this message (the callback beat the send response).
		{"callback before response", status(txID(1), "DELIVERED", "sms", tag), 200, rundir.KindCallback, true, false, true, false, 1.5, 0, 0, 1},
		// The same state again is a duplicate: kept, counted, no latency point.
		{"duplicate", status(txID(1), "DELIVERED", "sms", tag), 200, rundir.KindCallback, true, true, true, false, 0, 1, 0, 1},
		// SEEN arriving after DELIVERED is a new state: a first arrival; the message
		// was already terminal, so the terminal count stays.
		{"second state", status(txID(1), "SEEN", "sms", tag), 200, rundir.KindCallback, true, false, true, false, 1.5, 1, 0, 1},
		// Out of order: SEEN before DELIVERED for another message; both are first arrivals.
		{"out of order SEEN", status(txID(2), "SEEN", "sms", tag), 200, rundir.KindCallback, true, false, true, false, 1.5, 1, 0, 2},
		{"out of order DELIVERED", status(txID(2), "DELIVERED", "sms", tag), 200, rundir.KindCallback, true, false, true, false, 1.5, 1, 0, 2},
		// No trackData: valid, kept, unmatched, no latency.
		{"unmatched no tag", status(txID(3), "FAILED", "", nil), 200, rundir.KindCallback, false, false, true, false, 0, 1, 1, 3},
		// A tag of another run is unmatched when the sink has a run id.
		{"unmatched other run", status(txID(4), "DELIVERED", "sms", other), 200, rundir.KindCallback, false, false, true, false, 0, 1, 2, 4},
		// EXPIRED on the first channel of viber,sms is a failover step, not the end.
		{"expired mid-chain", status(txID(5), "EXPIRED", "viber", chain), 200, rundir.KindCallback, true, false, false, true, 1.5, 1, 2, 4},
		// DELIVERED on sms ends it; the step into sms was already counted.
		{"delivered after failover", status(txID(5), "DELIVERED", "sms", chain), 200, rundir.KindCallback, true, false, true, false, 1.5, 1, 2, 5},
		// EXPIRED on the last channel of the chain is terminal; being on sms shows the
		// step from viber (its earlier events never came).
		{"expired last channel", status(txID(6), "EXPIRED", "sms", chain), 200, rundir.KindCallback, true, false, true, true, 1.5, 1, 2, 6},
		// NOT_DELIVERED on viber is a cascade step too (the service goes on with sms).
		{"not delivered mid-chain", status(txID(7), "NOT_DELIVERED", "viber", chain), 200, rundir.KindCallback, true, false, false, true, 1.5, 1, 2, 6},
		// The same state on the next channel is not a duplicate: it ends the message.
		{"not delivered on the last channel", status(txID(7), "NOT_DELIVERED", "sms", chain), 200, rundir.KindCallback, true, false, true, false, 1.5, 1, 2, 7},
		// Under a SEEN condition, DELIVERED on viber is not the end: the service
		// waits for SEEN, then fails over (EXPIRED without a channel: on viber).
		{"delivered awaiting SEEN", status(txID(8), "DELIVERED", "viber", seenChain), 200, rundir.KindCallback, true, false, false, false, 1.5, 1, 2, 7},
		{"expired awaiting SEEN", status(txID(8), "EXPIRED", "", seenChain), 200, rundir.KindCallback, true, false, false, true, 1.5, 1, 2, 7},
		{"delivered on sms after SEEN failed", status(txID(8), "DELIVERED", "sms", seenChain), 200, rundir.KindCallback, true, false, true, false, 1.5, 1, 2, 8},
		// A malformed body is kept with its reason, answered 400 and counts nothing else.
		{"malformed", `{"txId":"nope","state":"DELIVERED"}`, 400, rundir.KindMalformed, false, false, false, false, 0, 1, 2, 8},
	}
	h := newHarness(t, Options{RunID: "run1"})
	for _, st := range steps {
		if code := h.post("/callback", st.body, nil); code != st.wantCode {
			t.Fatalf("%s: code %d, want %d", st.name, code, st.wantCode)
		}
		ev := h.last()
		if ev.Kind != st.wantKind || !ev.ReceivedAt.Equal(fixedNow) || ev.API != rundir.APIMessaging {
			t.Fatalf("%s: event %+v", st.name, ev)
		}
		if !bytes.Equal(compact(t, ev.Payload), compact(t, []byte(st.body))) {
			t.Errorf("%s: payload %s, want the body as received %s", st.name, ev.Payload, st.body)
		}
		if st.wantKind == rundir.KindMalformed {
			if ev.Reason == "" || ev.Corr != nil {
				t.Errorf("%s: malformed event without reason or with correlation: %+v", st.name, ev)
			}
		} else {
			c := ev.Corr
			if c == nil || c.Matched != st.matched || c.Duplicate != st.dup || c.Terminal != st.term || c.FailoverStep != st.failover {
				t.Errorf("%s: corr %+v, want matched=%v dup=%v terminal=%v failover=%v", st.name, c, st.matched, st.dup, st.term, st.failover)
			} else if c.Latency != st.latency {
				t.Errorf("%s: latency %v, want %v", st.name, c.Latency, st.latency)
			}
		}
		s := h.s.Stats()
		if s.Duplicates != st.duplicates || s.Unmatched != st.unmatched || s.TerminalMessages != st.terminalMsgs {
			t.Errorf("%s: stats %+v, want duplicates=%d unmatched=%d terminal=%d", st.name, s, st.duplicates, st.unmatched, st.terminalMsgs)
		}
	}
	// Counters as Prometheus sees them.
	checks := []struct {
		c    prometheus.Collector
		want float64
	}{
		{h.s.met.duplicates.WithLabelValues(rundir.APIMessaging), 1},
		{h.s.met.unmatched.WithLabelValues(rundir.APIMessaging), 2},
		{h.s.met.malformed.WithLabelValues("/callback"), 1},
		{h.s.met.failover.WithLabelValues("viber", "sms"), 4}, // messages 5, 6, 7 and 8 moved from viber to sms
		{h.s.met.events.WithLabelValues(rundir.APIMessaging, rundir.KindCallback, "DELIVERED", "sms"), 6},
	}
	for i, c := range checks {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("check %d: %v, want %v", i, got, c.want)
		}
	}
	// Latency points: 8 first arrivals of matched messages, all 1.5 s.
	if n := testutil.CollectAndCount(h.s.met.latency); n == 0 {
		t.Error("no latency series")
	}
	// Messages 3 (no tag) and 4 (another run) ended unmatched.
	if s := h.s.Stats(); s.TerminalMatched != 6 {
		t.Errorf("terminal matched %d, want 6 of %d", s.TerminalMatched, s.TerminalMessages)
	}
	if s := h.s.Stats(); s.FailoverSteps != 4 || s.Callbacks != 15 || s.Malformed != 1 || s.Events != 16 {
		t.Errorf("final stats %+v", s)
	}
}

func compact(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("compact %s: %v", b, err)
	}
	return out.Bytes()
}

func TestWebhookAndIncoming(t *testing.T) {
	sent := fixedNow.Add(-250 * time.Millisecond)
	ext := rundir.Tag{Run: "r", Seq: 3, First: sent}.ExternalID()
	h := newHarness(t, Options{})
	rows := []struct {
		name, route, body string
		wantCode          int
		check             func(rundir.Event) string // "" when fine
	}{
		// A webhook with a tagged externalId: matched, terminal, latency 0.25 s.
		{"webhook first", "/webhook", `{"externalId":"` + ext + `","notificationId":"n1","status":"DELIVERED"}`, 200, func(e rundir.Event) string {
			if c := e.Corr; e.Kind != rundir.KindWebhook || !c.Matched || !c.Terminal || c.Duplicate || c.Latency != 0.25 || c.Key != ext || c.Seq != 3 {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		// The same webhook again: duplicate.
		{"webhook duplicate", "/webhook", `{"externalId":"` + ext + `","notificationId":"n1","status":"DELIVERED"}`, 200, func(e rundir.Event) string {
			if !e.Corr.Duplicate || e.Corr.Latency != 0 {
				return fmt.Sprintf("%+v", e.Corr)
			}
			return ""
		}},
		// No externalId: keyed by notificationId, unmatched (joined in the report).
		{"webhook no external id", "/webhook", `{"notificationId":"n2","status":"FAILED"}`, 200, func(e rundir.Event) string {
			if e.Corr.Matched || e.Corr.Key != "n2" {
				return fmt.Sprintf("%+v", e.Corr)
			}
			return ""
		}},
		// A status callback first, so the incoming reply below can be tied to it.
		{"outgoing", "/callback", status(txID(9), "DELIVERED", "sms", nil), 200, func(rundir.Event) string { return "" }},
		// An incoming reply tied to a known outgoing message.
		{"incoming reply", "/incoming", `{"txId":"` + txID(10) + `","channel":"sms","recipient":{"type":"MSISDN","value":"79001234567"},"sender":"shop","outgoingTxId":"` + txID(9) + `"}`, 200, func(e rundir.Event) string {
			if c := e.Corr; e.Kind != rundir.KindIncoming || !c.Matched || c.OutgoingTxID != txID(9) || c.Channel != "sms" {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		// No outgoingTxId, but a quotation of the outgoing message: tied through replyOn.
		{"incoming quote", "/incoming", `{"txId":"` + txID(12) + `","channel":"sms","recipient":{"type":"MSISDN","value":"7"},"sender":"shop","replyOn":{"txId":"` + txID(9) + `","type":"OUTGOING"}}`, 200, func(e rundir.Event) string {
			if c := e.Corr; !c.Matched || c.OutgoingTxID != txID(9) {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		// A quotation of another incoming message does not tie it to an outgoing one.
		{"incoming quotes incoming", "/incoming", `{"txId":"` + txID(13) + `","channel":"sms","recipient":{"type":"MSISDN","value":"7"},"sender":"shop","replyOn":{"txId":"` + txID(9) + `","type":"INCOMING"}}`, 200, func(e rundir.Event) string {
			if c := e.Corr; c.Matched || c.OutgoingTxID != "" {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		// An incoming message replying to an unknown message: kept, not matched.
		{"incoming unknown", "/incoming", `{"txId":"` + txID(11) + `","channel":"viber","recipient":{"type":"MSISDN","value":"7"},"sender":"shop","outgoingTxId":"` + txID(99) + `"}`, 200, func(e rundir.Event) string {
			if e.Corr.Matched {
				return "matched an unknown message"
			}
			return ""
		}},
		// A non-JSON body: malformed, kept as raw text.
		{"incoming not json", "/incoming", `hello`, 400, func(e rundir.Event) string {
			if e.Kind != rundir.KindMalformed || e.Raw != "hello" || e.Payload != nil {
				return fmt.Sprintf("%+v", e)
			}
			return ""
		}},
	}
	for _, r := range rows {
		if code := h.post(r.route, r.body, nil); code != r.wantCode {
			t.Fatalf("%s: code %d, want %d", r.name, code, r.wantCode)
		}
		if msg := r.check(h.last()); msg != "" {
			t.Errorf("%s: %s", r.name, msg)
		}
	}
	s := h.s.Stats()
	if s.Webhooks != 3 || s.Incoming != 4 || s.Duplicates != 1 || s.TerminalMessages != 3 || s.Malformed != 1 {
		t.Errorf("stats %+v", s)
	}
	if got := testutil.ToFloat64(h.s.met.incoming.WithLabelValues("sms")); got != 3 {
		t.Errorf("incoming{sms} = %v", got)
	}
}

func TestAuthAndLimits(t *testing.T) {
	const body = `{"notificationId":"n1","status":"DELIVERED"}`
	mac := hmac.New(sha256.New, []byte("hmac-secret"))
	mac.Write([]byte(body))
	goodSig := hex.EncodeToString(mac.Sum(nil))
	whSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("standard-webhooks-secret"))
	wh, err := standardwebhooks.NewWebhook(whSecret)
	if err != nil {
		t.Fatal(err)
	}
	swSig := func(ts time.Time) http.Header {
		sig, err := wh.Sign("msg_1", ts, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Timestamp": {strconv.FormatInt(ts.Unix(), 10)}, "Webhook-Signature": {sig}}
	}
	basic := func(u, p string) http.Header {
		r, _ := http.NewRequest("GET", "/", nil)
		r.SetBasicAuth(u, p)
		return r.Header
	}
	rows := []struct {
		name string
		auth Auth
		hdr  http.Header
		want int
	}{
		// No scheme configured: every call passes.
		{"open", Auth{}, nil, 200},
		{"basic ok", Auth{BasicUser: "u", BasicPassword: "pw-secret"}, basic("u", "pw-secret"), 200},
		{"basic wrong", Auth{BasicUser: "u", BasicPassword: "pw-secret"}, basic("u", "nope"), 401},
		{"basic missing", Auth{BasicUser: "u", BasicPassword: "pw-secret"}, nil, 401},
		{"bearer ok", Auth{BearerToken: "tok-secret"}, http.Header{"Authorization": {"Bearer tok-secret"}}, 200},
		{"bearer wrong", Auth{BearerToken: "tok-secret"}, http.Header{"Authorization": {"Bearer tok"}}, 401},
		{"hmac ok", Auth{HMACSecret: []byte("hmac-secret")}, http.Header{DefaultSignatureHeader: {"sha256=" + goodSig}}, 200},
		{"hmac bare hex ok", Auth{HMACSecret: []byte("hmac-secret")}, http.Header{DefaultSignatureHeader: {goodSig}}, 200},
		{"hmac of another body", Auth{HMACSecret: []byte("hmac-secret")}, http.Header{DefaultSignatureHeader: {"sha256=" + strings.Repeat("ab", 32)}}, 401},
		{"standard webhooks ok", Auth{WebhookSecret: whSecret}, swSig(time.Now()), 200},
		// A signature older than the 5-minute tolerance is a replay.
		{"standard webhooks replay", Auth{WebhookSecret: whSecret}, swSig(time.Now().Add(-time.Hour)), 401},
		// With two schemes, either one passes.
		{"bearer or basic", Auth{BearerToken: "tok-secret", BasicUser: "u", BasicPassword: "pw-secret"}, basic("u", "pw-secret"), 200},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			h := newHarness(t, Options{Auth: r.auth})
			if code := h.post("/webhook", body, r.hdr); code != r.want {
				t.Fatalf("code %d, want %d", code, r.want)
			}
			ev := h.last()
			raw, _ := os.ReadFile(h.log)
			for _, secret := range []string{"pw-secret", "tok-secret", "hmac-secret", whSecret} {
				if bytes.Contains(raw, []byte(secret)) {
					t.Errorf("the log contains the secret %q", secret)
				}
			}
			if r.want == 401 {
				if ev.Kind != rundir.KindUnauthorized || ev.Reason == "" || h.s.Stats().Unauthorized != 1 {
					t.Errorf("event %+v stats %+v", ev, h.s.Stats())
				}
				if got := testutil.ToFloat64(h.s.met.refused.WithLabelValues("/webhook", refusedAuth)); got != 1 {
					t.Errorf("refused{auth} = %v", got)
				}
			} else if ev.Kind != rundir.KindWebhook {
				t.Errorf("event %+v", ev)
			}
		})
	}

	t.Run("size limit", func(t *testing.T) {
		h := newHarness(t, Options{MaxBody: 64})
		// One byte over the limit is refused.
		big := `{"notificationId":"` + strings.Repeat("x", 65-len(`{"notificationId":""}`)) + `"}`
		if len(big) != 65 {
			t.Fatalf("test body is %d bytes", len(big))
		}
		if code := h.post("/webhook", big, nil); code != http.StatusRequestEntityTooLarge {
			t.Fatalf("code %d, want 413", code)
		}
		ev := h.last()
		if ev.Kind != rundir.KindMalformed || !strings.HasPrefix(ev.Reason, "too_large") {
			t.Errorf("event %+v", ev)
		}
		if got := testutil.ToFloat64(h.s.met.refused.WithLabelValues("/webhook", refusedTooLarge)); got != 1 {
			t.Errorf("refused{too_large} = %v", got)
		}
		// Exactly at the limit passes.
		exact := `{"notificationId":"` + strings.Repeat("x", 64-len(`{"notificationId":""}`)) + `"}`
		if code := h.post("/webhook", exact, nil); code != 200 {
			t.Errorf("body of exactly MaxBody: code %d", code)
		}
	})
	t.Run("method", func(t *testing.T) {
		h := newHarness(t, Options{})
		resp, err := h.srv.Client().Get(h.srv.URL + "/callback")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || len(h.events()) != 0 {
			t.Errorf("GET /callback: %d", resp.StatusCode)
		}
		if got := testutil.ToFloat64(h.s.met.refused.WithLabelValues("/callback", refusedMethod)); got != 1 {
			t.Errorf("refused{method} = %v", got)
		}
	})
}

func TestReadEventsPaging(t *testing.T) {
	h := newHarness(t, Options{})
	sent := fixedNow.Add(-time.Second)
	for i := 1; i <= 5; i++ {
		run := "a"
		if i%2 == 0 {
			run = "b"
		}
		if code := h.post("/callback", status(txID(i), "DELIVERED", "sms", &rundir.Tag{Run: run, Seq: int64(i), First: sent}), nil); code != 200 {
			t.Fatal(code)
		}
	}
	get := func(q string) EventsPage {
		resp, err := h.srv.Client().Get(h.srv.URL + "/v1/events?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var p EventsPage
		if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Run a has seqs 1, 3, 5: two pages of 2, then the rest.
	p1 := get("run=a&limit=2")
	p2 := get("run=a&limit=2&after=" + strconv.FormatInt(p1.Next, 10))
	var seqs []int64
	for _, e := range append(p1.Events, p2.Events...) {
		seqs = append(seqs, e.Corr.Seq)
	}
	if fmt.Sprint(seqs) != "[1 3 5]" || !p1.More || p2.More {
		t.Errorf("run a pages: seqs %v more %v %v", seqs, p1.More, p2.More)
	}
	// A malformed call carries no run: only untagged=true adds it to run a.
	h.post("/callback", `{}`, nil)
	if p := get("run=a"); len(p.Events) != 3 {
		t.Errorf("run a: %d events", len(p.Events))
	}
	if p := get("run=a&untagged=true"); len(p.Events) != 4 || p.Events[3].Kind != rundir.KindMalformed {
		t.Errorf("run a with untagged: %d events", len(p.Events))
	}
	if all := get(""); len(all.Events) != 6 {
		t.Errorf("all: %d events", len(all.Events))
	}
	resp, _ := h.srv.Client().Get(h.srv.URL + "/v1/events?limit=0")
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("limit=0: %d", resp.StatusCode)
	}
}

func TestRestartAppendsAndRepairs(t *testing.T) {
	path := filepath.Join(t.TempDir(), rundir.EventsFile)
	// A previous sink was killed mid-line.
	if err := os.WriteFile(path, []byte(`{"kind":"callback","route":"/callback"}`+"\n"+`{"kind":"callb`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{LogPath: path})
	if code := h.post("/callback", status(txID(1), "FAILED", "", nil), nil); code != 200 {
		t.Fatal(code)
	}
	h.s.Close()
	var kinds []string
	bad := 0
	rundir.ReadJSONL(path, func(e rundir.Event) error { kinds = append(kinds, e.Kind); return nil }, func(int, error) { bad++ })
	// The old line is kept, the cut line stays a line of its own, the new event follows.
	if fmt.Sprint(kinds) != "[callback callback]" || bad != 1 {
		t.Errorf("kinds %v, bad lines %d", kinds, bad)
	}
	// A call after Close is refused, not lost silently.
	if code := h.post("/callback", status(txID(2), "FAILED", "", nil), nil); code != http.StatusServiceUnavailable {
		t.Errorf("after Close: %d", code)
	}
}

func TestMetricsLint(t *testing.T) {
	h := newHarness(t, Options{})
	h.post("/callback", status(txID(1), "DELIVERED", "sms", &rundir.Tag{Run: "r", Seq: 1, First: fixedNow.Add(-time.Second)}), nil)
	h.post("/webhook", `{"notificationId":"n","status":"DELIVERED"}`, nil)
	problems, err := testutil.GatherAndLint(h.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestFsyncModes(t *testing.T) {
	// Every mode writes every answered event; only when it is synced differs.
	for _, mode := range []FsyncMode{FsyncBatch, fsyncAlways, fsyncNone} {
		t.Run(string(mode), func(t *testing.T) {
			h := newHarness(t, Options{Fsync: mode})
			for i := range 20 {
				if code := h.post("/callback", status(txID(i), "DELIVERED", "sms", nil), nil); code != 200 {
					t.Fatal(code)
				}
			}
			if n := len(h.events()); n != 20 {
				t.Errorf("%d events in the log, want 20", n)
			}
		})
	}
	if _, err := ParseFsyncMode("sometimes"); err == nil {
		t.Error("ParseFsyncMode accepted sometimes")
	}
}
