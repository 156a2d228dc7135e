package replay

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/msgload/msgload/rundir"
)

// ReplayFile is the name of the replay report in a run directory.
const ReplayFile = "replay.json"

// DefaultTokenPath is appended to the notify base URL when no token URL is given.
const DefaultTokenPath = "/oauth/token"

// Cred is one client's credentials: a messaging login and password, or a notify
// client_id and client_secret.
type Cred struct{ ID, Secret string }

// RunOptions describe one replay.
type RunOptions struct {
	Requests     []Request     // as Load returns them
	Speed        float64       // time scale: 2 sends twice as fast as recorded
	MessagingURL string        // base URL for messaging requests (and requests of no known API)
	NotifyURL    string        // base URL for notify requests
	TokenURL     string        // notify token endpoint; "" is NotifyURL + DefaultTokenPath
	Messaging    []Cred        // Basic credentials of the scenario's messaging clients
	Notify       []Cred        // client credentials of the scenario's notify clients
	SinkURL      string        // where callbacks and webhooks are rewritten to; "" keeps them
	ExternalIDs  string        // ExternalIDsKeep (default) or ExternalIDsNew
	RunID        string        // tags and the report; must be a valid rundir run id
	Dir          string        // run directory (created by the caller): attempts.jsonl, results.bin, replay.json
	Workers      uint64        // initial vegeta workers; 0: 10
	Timeout      time.Duration // per request; 0: 30s
	Transport    http.RoundTripper
}

// Report is what a replay did: replay.json.
type Report struct {
	RunID         string                 `json:"run_id"`
	Speed         float64                `json:"speed"`
	ExternalIDs   string                 `json:"external_ids"`
	Planned       int                    `json:"planned"`                       // sends the pacer was given
	Other         int                    `json:"other_requests,omitempty"`      // other recorded requests replayed besides the sends (status checks, webhook registrations, other calls)
	Sent          int                    `json:"sent"`                          // results received
	Skipped       map[string]int         `json:"skipped,omitempty"`             // reason → requests not replayed
	TokenErrors   int64                  `json:"token_errors"`                  // fresh tokens that could not be had (the request went without)
	Webhooks      int                    `json:"webhooks_registered,omitempty"` // notify clients whose webhook was pointed at the sink
	WebhookErrors []string               `json:"webhook_errors,omitempty"`
	Start         time.Time              `json:"start"` //
	End           time.Time              `json:"end"`   //
	Interrupted   bool                   `json:"interrupted,omitempty"`
	Lateness      Lateness               `json:"lateness"`          // how late the hits left against plan
	Codes         []CodeRow              `json:"codes"`             // recorded against replayed response codes
	Matching      int                    `json:"matching"`          // requests answered with the recorded code
	Clients       map[string][][2]string `json:"clients,omitempty"` // api → [recorded, scenario] pairs
}

// CodeRow counts requests of one API by recorded and replayed response code.
type CodeRow struct {
	API      string `json:"api"`
	Recorded int    `json:"recorded"` // 0: none recorded (vegeta targets) or no answer
	Replayed int    `json:"replayed"` // 0: no answer
	Count    int    `json:"count"`
}

// plan is one request ready to go.
type plan struct {
	req     *Request
	client  string
	seq     int64 // message sequence (from 1), 0 for auxiliary calls
	attempt int
}

// Run replays o.Requests through vegeta's attacker with a replay Pacer and writes
// attempts.jsonl, results.bin and replay.json into o.Dir. Recorded token calls
// are not replayed: every client authenticates afresh. It returns when every
// request has been answered or ctx ends.
func Run(ctx context.Context, o RunOptions) (*Report, error) {
	if o.ExternalIDs == "" {
		o.ExternalIDs = ExternalIDsKeep
	}
	if o.ExternalIDs != ExternalIDsKeep && o.ExternalIDs != ExternalIDsNew {
		return nil, fmt.Errorf("external ids %q: want keep or new", o.ExternalIDs)
	}
	if !rundir.ValidRunID(o.RunID) {
		return nil, fmt.Errorf("run id %q: invalid", o.RunID)
	}
	if o.Workers == 0 {
		o.Workers = 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	rep := &Report{RunID: o.RunID, Speed: o.Speed, ExternalIDs: o.ExternalIDs, Skipped: map[string]int{}}

	// What is replayed, and as whom.
	var reqs []*Request
	for i := range o.Requests {
		r := &o.Requests[i]
		switch {
		case r.API == APIToken:
			rep.Skipped["token endpoint (fresh tokens are used)"]++
			continue
		case r.API == APINotify && o.NotifyURL == "", r.API != APINotify && o.MessagingURL == "":
			rep.Skipped["no target for the API"]++
			continue
		}
		reqs = append(reqs, r)
	}
	if len(reqs) == 0 {
		return nil, ErrNoRequests
	}
	flat := make([]Request, len(reqs))
	for i, r := range reqs {
		flat[i] = *r
	}
	cm := NewClientMap(flat, map[string][]string{APIMessaging: credIDs(o.Messaging), APINotify: credIDs(o.Notify)})
	rep.Clients = cm.Pairs()
	plans := make([]plan, len(reqs))
	seqOf := map[string]int64{}
	tries := map[string]int{}
	var nextSeq int64
	for i, r := range reqs {
		p := plan{req: r, client: cm.Client(i, r)}
		if r.Op == OpSend {
			key := strconv.Itoa(i)
			if r.ExternalID != "" {
				key = r.API + "\x00" + p.client + "\x00" + r.ExternalID
			}
			if s, ok := seqOf[key]; ok {
				p.seq = s
			} else {
				nextSeq++
				p.seq = nextSeq
				seqOf[key] = p.seq
			}
			tries[key]++
			p.attempt = tries[key]
		}
		plans[i] = p
	}
	pacer, err := NewPacer(flat, o.Speed)
	if err != nil {
		return nil, err
	}
	rep.Planned = len(plans)

	// Files.
	attF, err := os.Create(filepath.Join(o.Dir, rundir.AttemptsFile))
	if err != nil {
		return nil, fmt.Errorf("create attempts: %w", err)
	}
	defer attF.Close()
	resF, err := os.Create(filepath.Join(o.Dir, rundir.ResultsFile))
	if err != nil {
		return nil, fmt.Errorf("create results: %w", err)
	}
	defer resF.Close()

	// Fresh credentials.
	tokenURL := o.TokenURL
	if tokenURL == "" && o.NotifyURL != "" {
		tokenURL = strings.TrimRight(o.NotifyURL, "/") + DefaultTokenPath
	}
	base := o.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = 1000 // the default 100 would close connections a burst opened, and dial again
		t.MaxIdleConnsPerHost = 1000
		base = t
	}
	tokCtx := context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Transport: base, Timeout: o.Timeout})
	tokens := map[string]oauth2.TokenSource{}
	for _, c := range o.Notify {
		cc := clientcredentials.Config{ClientID: c.ID, ClientSecret: c.Secret, TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams}
		tokens[c.ID] = cc.TokenSource(tokCtx)
	}
	if o.SinkURL != "" {
		rep.Webhooks, rep.WebhookErrors = registerWebhooks(ctx, o, plans, tokens, &http.Client{Transport: base, Timeout: o.Timeout})
	}
	secrets := map[string]string{}
	for _, c := range o.Messaging {
		secrets[c.ID] = c.Secret
	}

	// Send times and the vegeta seq → request index join, seen by the transport.
	tr := &indexTransport{base: base, sent: make([]time.Time, len(plans)), bySeq: map[uint64]int{}}
	sentExt := make([]string, len(plans)) // written by the targeter for request i only
	firstSent := make([]time.Time, nextSeq+1)
	var firstMu sync.Mutex
	var next atomic.Int64
	began := time.Now()
	targeter := func(t *vegeta.Target) error {
		i := int(next.Add(1) - 1)
		if i >= len(plans) {
			return vegeta.ErrNoTargets
		}
		p := plans[i]
		r := p.req
		baseURL := o.MessagingURL
		if r.API == APINotify {
			baseURL = o.NotifyURL
		}
		u := strings.TrimRight(baseURL, "/") + r.Path
		if r.Query != "" {
			u += "?" + r.Query
		}
		h := r.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		switch r.API {
		case APINotify:
			if ts, ok := tokens[p.client]; ok {
				if tok, err := ts.Token(); err == nil {
					h.Set("Authorization", "Bearer "+tok.AccessToken)
				} else {
					tr.tokenErrors.Add(1)
				}
			}
		default:
			if pw, ok := secrets[p.client]; ok {
				req := http.Request{Header: http.Header{}}
				req.SetBasicAuth(p.client, pw)
				h.Set("Authorization", req.Header.Get("Authorization"))
			}
		}
		rw := BodyRewrite{SinkURL: o.SinkURL}
		if p.seq > 0 {
			firstMu.Lock()
			if firstSent[p.seq].IsZero() {
				firstSent[p.seq] = time.Now()
			}
			tag := rundir.Tag{Run: o.RunID, Seq: p.seq, First: firstSent[p.seq]}
			firstMu.Unlock()
			if r.API == APIMessaging {
				tag.Chain = channelsOf(r.Body)
				rw.TrackData = tag.TrackData()
			} else if o.ExternalIDs == ExternalIDsNew || r.ExternalID == "" {
				rw.ExternalID = tag.ExternalID()
			}
		}
		body, err := RewriteBody(r, rw)
		if err != nil {
			body = r.Body
		}
		if r.API == APINotify && r.Op == OpSend {
			sentExt[i] = r.ExternalID
			if rw.ExternalID != "" {
				sentExt[i] = rw.ExternalID
			}
		}
		h.Set(indexHeader, strconv.Itoa(i))
		*t = vegeta.Target{Method: r.Method, URL: u, Body: body, Header: h}
		return nil
	}

	atk := vegeta.NewAttacker(
		vegeta.Client(&http.Client{Transport: tr, Timeout: o.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}),
		vegeta.Workers(o.Workers),
		vegeta.MaxBody(1<<20),
	)
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-ctx.Done():
			atk.Stop()
		case <-stopWatch:
		}
	}()
	rep.Start = began
	enc := vegeta.NewEncoder(resF)
	jw := json.NewEncoder(attF)
	codes := map[CodeRow]int{}
	for res := range atk.Attack(vegeta.Targeter(targeter), pacer, 0, "replay") {
		rep.Sent++
		if err := enc.Encode(res); err != nil {
			return nil, fmt.Errorf("write results: %w", err)
		}
		i, ok := tr.index(res.Seq)
		if !ok {
			continue // the request was never built (no target left)
		}
		p := plans[i]
		a := attemptOf(p, res, began.Add(pacer.Intended(i)), tr.sentAt(i))
		a.ExternalID = sentExt[i] // written before the request left, read after its result: ordered by the attack's channels
		if p.seq > 0 {
			firstMu.Lock()
			a.FirstSent = firstSent[p.seq]
			firstMu.Unlock()
		}
		if err := jw.Encode(a); err != nil {
			return nil, fmt.Errorf("write attempts: %w", err)
		}
		codes[CodeRow{API: p.req.API, Recorded: p.req.RecordedCode, Replayed: int(res.Code)}]++
		if int(res.Code) == p.req.RecordedCode {
			rep.Matching++
		}
	}
	rep.End = time.Now()
	rep.Interrupted = ctx.Err() != nil
	rep.TokenErrors = tr.tokenErrors.Load()
	rep.Lateness = pacer.Lateness()
	rep.Codes = sortedRows(codes)
	if err := attF.Sync(); err != nil {
		return nil, fmt.Errorf("sync attempts: %w", err)
	}
	if err := WriteReport(filepath.Join(o.Dir, ReplayFile), rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// WriteReport writes rep as JSON to path, atomically.
func WriteReport(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode replay report: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write replay report: %w", err)
	}
	return os.Rename(tmp, path)
}

func credIDs(cs []Cred) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// channelsOf returns the channels of a messaging send body, in order.
func channelsOf(body []byte) []string {
	var m struct {
		Scenario []struct {
			Channel  string `json:"channel"`
			Failover *struct {
				ConditionStatus string `json:"condition_status"`
			} `json:"failover"`
		} `json:"scenario"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	var c rundir.Chain
	for _, it := range m.Scenario {
		l := rundir.Link{Channel: it.Channel}
		if it.Failover != nil {
			l.Until = cmp.Or(it.Failover.ConditionStatus, rundir.StateDelivered)
		}
		c = append(c, l)
	}
	return c.Strings()
}

// attemptOf builds the attempts.jsonl record of one result.
func attemptOf(p plan, res *vegeta.Result, intended, sent time.Time) rundir.Attempt {
	api := p.req.API
	if api != APINotify {
		api = rundir.APIMessaging
	}
	op := p.req.Op
	if op == OpOther {
		op = "replay_other"
	}
	if sent.IsZero() {
		sent = res.Timestamp
	}
	a := rundir.Attempt{Seq: p.seq, API: api, Op: op, Client: p.client, Attempt: max(p.attempt, 1),
		Intended: intended, Sent: sent, Code: int(res.Code), Latency: res.Latency.Seconds(),
		BytesOut: int64(res.BytesOut), BytesIn: int64(res.BytesIn), Error: res.Error}
	a.Outcome, a.Class = classify(int(res.Code), res.Error)
	if a.Outcome == rundir.OutcomeOK {
		a.Error = ""
	}
	var body struct {
		TxID           string `json:"txId"`
		State          string `json:"state"`
		NotificationID string `json:"notificationId"`
	}
	if len(res.Body) > 0 && json.Unmarshal(res.Body, &body) == nil {
		a.TxID, a.State, a.NotificationID = body.TxID, body.State, body.NotificationID
	}
	if res.Headers != nil {
		a.RetryAfter = res.Headers.Get("Retry-After")
		a.RateLimit = res.Headers.Get("RateLimit")
		a.RateLimitPolicy = res.Headers.Get("RateLimit-Policy")
	}
	return a
}

func classify(code int, errText string) (outcome, class string) {
	switch {
	case code >= 200 && code < 300:
		return rundir.OutcomeOK, "ok"
	case code == http.StatusTooManyRequests:
		return rundir.OutcomeFail, "http_429"
	case code >= 500:
		return rundir.OutcomeFail, "http_5xx"
	case code >= 300:
		return rundir.OutcomeFail, "http_4xx"
	}
	e := strings.ToLower(errText)
	switch {
	case strings.Contains(e, "timeout") || strings.Contains(e, "deadline"):
		return rundir.OutcomeUnknown, "timeout"
	case strings.Contains(e, "reset"):
		return rundir.OutcomeUnknown, "reset"
	case strings.Contains(e, "refused") || strings.Contains(e, "dial"):
		return rundir.OutcomeFail, "conn" // never arrived
	}
	return rundir.OutcomeUnknown, "other"
}

// indexHeader is set by the targeter and removed by the transport before sending.
const indexHeader = "X-Msgload-Replay-Index"

// indexTransport removes the replay's private headers, notes when each request
// really left, and joins vegeta's result seq to the request index.
type indexTransport struct {
	base        http.RoundTripper
	mu          sync.Mutex
	sent        []time.Time
	bySeq       map[uint64]int
	tokenErrors atomic.Int64
}

func (t *indexTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	idx, err := strconv.Atoi(req.Header.Get(indexHeader))
	seq, serr := strconv.ParseUint(req.Header.Get("X-Vegeta-Seq"), 10, 64)
	if err == nil {
		req = req.Clone(req.Context())
		req.Header.Del(indexHeader)
		req.Header.Del("X-Vegeta-Seq")
		t.mu.Lock()
		if idx >= 0 && idx < len(t.sent) {
			t.sent[idx] = time.Now()
			if serr == nil {
				t.bySeq[seq] = idx
			}
		}
		t.mu.Unlock()
	}
	return t.base.RoundTrip(req)
}

func (t *indexTransport) index(seq uint64) (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.bySeq[seq]
	return i, ok
}

func (t *indexTransport) sentAt(i int) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sent[i]
}

// registerWebhooks points the webhook of every notify client the replay uses at
// the sink, as the attacker does before a notify run.
func registerWebhooks(ctx context.Context, o RunOptions, plans []plan, tokens map[string]oauth2.TokenSource, hc *http.Client) (int, []string) {
	used := map[string]bool{}
	var order []string
	for _, p := range plans {
		if p.req.API == APINotify && !used[p.client] {
			used[p.client] = true
			order = append(order, p.client)
		}
	}
	n := 0
	var errs []string
	body := `{"url":"` + strings.TrimRight(o.SinkURL, "/") + `/webhook"}`
	for _, c := range order {
		ts, ok := tokens[c]
		if !ok {
			continue
		}
		tok, err := ts.Token()
		if err != nil {
			errs = append(errs, c+": token: "+errSummary(err))
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(o.NotifyURL, "/")+"/api/v1/webhooks", strings.NewReader(body))
		if err != nil {
			errs = append(errs, c+": "+err.Error())
			continue
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		resp, err := hc.Do(req)
		if err != nil {
			errs = append(errs, c+": "+errSummary(err))
			continue
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			errs = append(errs, fmt.Sprintf("%s: HTTP %d", c, resp.StatusCode))
			continue
		}
		n++
	}
	return n, errs
}

// errSummary is an error's text without anything a token endpoint may echo.
func errSummary(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return fmt.Sprintf("token endpoint answered HTTP %d", re.Response.StatusCode)
	}
	return err.Error()
}

// sortedRows turns counts into rows ordered by api, recorded, replayed code.
func sortedRows(codes map[CodeRow]int) []CodeRow {
	rows := make([]CodeRow, 0, len(codes))
	for row, n := range codes {
		row.Count = n
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b CodeRow) int {
		if c := strings.Compare(a.API, b.API); c != 0 {
			return c
		}
		if a.Recorded != b.Recorded {
			return a.Recorded - b.Recorded
		}
		return a.Replayed - b.Replayed
	})
	return rows
}
