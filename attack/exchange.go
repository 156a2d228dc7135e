package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// maxAnswer caps how much of a response body is read.
const maxAnswer = 1 << 20

// answerPool holds buffers for response bodies, read once per request.
var answerPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putAnswer(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 { // a rare huge answer is not kept
		answerPool.Put(b)
	}
}

func (e *engine) attempt(m *message, op string, n int) *rundir.Attempt {
	a := new(rundir.Attempt)
	e.fillAttempt(a, m, op, n)
	return a
}

// fillAttempt sets a to attempt n of op for message m, every other field zero.
func (e *engine) fillAttempt(a *rundir.Attempt, m *message, op string, n int) {
	*a = rundir.Attempt{Seq: m.seq, API: e.o.API, Op: op, Client: m.client.ID, Attempt: n,
		FirstSent: m.first, ExternalID: m.extID}
	if e.o.API == rundir.APIMessaging && op == OpSend && len(e.o.Chain) > 0 {
		a.Channel, _, _ = strings.Cut(e.o.Chain[0], ":") // the first item's channel
	}
}

// sendAttempts holds the attempts of the sends (send's, not the probes',
// polls' or webhooks', which outlive their recording): a send's attempt is
// done with once recorded (the Recorder keeps no pointer to it) and its
// outcome read, and a new one a request was ~440 bytes for the collector.
var sendAttempts = sync.Pool{New: func() any { return new(rundir.Attempt) }}

// sendAttempt is attempt n of message m's send, from sendAttempts; the caller
// hands it back with doneAttempt when nothing reads it any more.
func (e *engine) sendAttempt(m *message, n int) *rundir.Attempt {
	a := sendAttempts.Get().(*rundir.Attempt)
	e.fillAttempt(a, m, OpSend, n)
	return a
}

// doneAttempt hands a back to sendAttempts, its strings let go.
func doneAttempt(a *rundir.Attempt) {
	*a = rundir.Attempt{}
	sendAttempts.Put(a)
}

// exchange makes one HTTP request for a, after the client's limiter (respect
// mode; its wait ends with ctx), fills a with what happened and returns the
// answer read from the body and the response headers.
func (e *engine) exchange(ctx context.Context, c *clientState, a *rundir.Attempt, method, u string, body []byte) (answer, http.Header) {
	return e.exchangeReq(ctx, c, a, method, u, body, noSlot, nil)
}

// exchangeReq is exchange that may send reuse, the request vegeta built for
// the first attempt (with body), instead of building another, and that may
// hold slot, a limiter slot already granted (the first attempt, in the
// targeter). The slot is released when the exchange is over.
func (e *engine) exchangeReq(wait context.Context, c *clientState, a *rundir.Attempt, method, u string, body []byte, slot int, reuse *http.Request) (answer, http.Header) {
	if c.lim != nil {
		if slot == noSlot {
			var err error
			if slot, err = c.lim.wait(wait, e.end); err != nil {
				if reuse != nil && reuse.Body != nil {
					reuse.Body.Close()
				}
				e.notSent(a, gaveUpReason(err))
				e.prog.GaveUp.Add(1)
				return answer{}, nil
			}
		}
		defer c.lim.answered(slot)
	}
	// The attempt's time: at least the timeout (a context shared with the
	// attempts that begin within the same tick).
	tc := e.deadlines.get(time.Now())
	defer e.deadlines.put(tc)
	req, bearer, ok := e.buildRequest(tc, c, a, method, u, body, reuse)
	if !ok {
		return answer{}, nil
	}
	a.BytesOut = int64(len(body))
	resp, buf, err := e.roundTrip(req, a)
	if buf != nil {
		defer putAnswer(buf) // its bytes are used below only: parseAnswer copies what it keeps
	}
	if resp == nil {
		a.Outcome, a.Class = rundir.Classify(0, err) // conn (refused): nothing reached the service, a failure
		a.Error = err.Error()
		return answer{}, nil
	}
	var data []byte
	if buf != nil {
		data = buf.Bytes()
	}
	ans := e.answered(a, resp, data, err)
	authShape(a, resp.Header, data)
	if resp.StatusCode == http.StatusUnauthorized && c.tok != nil {
		c.tok.invalidate(bearer)
	}
	if resp.StatusCode == http.StatusTooManyRequests && c.lim != nil {
		if d, ok := rundir.ParseRetryAfter(a.RetryAfter, time.Now()); ok {
			c.lim.block(time.Now().Add(d))
		}
	}
	return ans, resp.Header
}

// buildRequest is the attempt's request within ctx: reuse (vegeta's, for the
// first attempt) or a new one, with its headers and the client's
// credentials. false: nothing can be sent, and a says why.
func (e *engine) buildRequest(ctx context.Context, c *clientState, a *rundir.Attempt, method, u string, body []byte, reuse *http.Request) (req *http.Request, bearer string, ok bool) {
	var err error
	if reuse != nil {
		req = reuse.WithContext(ctx)
		req.URL.Fragment = ""
		delete(req.Header, "X-Vegeta-Seq")
	} else {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err = http.NewRequestWithContext(ctx, method, u, rd)
		if err != nil {
			a.Sent = time.Now()
			a.Outcome, a.Class, a.Error = rundir.OutcomeFail, rundir.ClassOther, "build request: "+err.Error()
			return nil, "", false
		}
	}
	hv := new(headerValues)
	if body != nil && headerValue(req.Header, "Content-Type") == "" {
		hv.set(req.Header, "Content-Type", "application/json")
	}
	if headerValue(req.Header, "Accept") == "" {
		hv.set(req.Header, "Accept", "application/json")
	}
	if c.tok == nil {
		hv.set(req.Header, "Authorization", c.basic)
		return req, "", true
	}
	bearer, err = c.tok.token(ctx)
	if err != nil {
		// Nothing was sent (fail), but a token request that timed out or was
		// reset is classed so, and retried like a send that was (retryable).
		a.Sent = time.Now()
		_, a.Class = rundir.Classify(0, err)
		a.Outcome, a.Error = rundir.OutcomeFail, err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			a.Class = rundir.ClassTimeout // the attempt's time ran out (the token request reports it as canceled)
		}
		return nil, "", false
	}
	hv.set(req.Header, "Authorization", "Bearer "+bearer)
	return req, bearer, true
}

// headerValues holds the values of the (at most three) headers buildRequest
// sets on a request, in one allocation: Header.Set makes a slice for each.
// Each request has its own; each value's slice has capacity 1, so that an
// append to one header's values moves them rather than write over the next.
type headerValues struct {
	v [3]string
	n int
}

// set is h.Set(key, v) for a canonical key.
func (hv *headerValues) set(h http.Header, key, v string) {
	i := hv.n
	hv.v[i] = v
	h[key] = hv.v[i : i+1 : i+1]
	hv.n++
}

// roundTrip sends req, counting it in flight, and reads the answer's body (at
// most maxAnswer bytes) into buf, a pooled buffer the caller returns with
// putAnswer (nil when there was no answer). a gets the send time and latency.
func (e *engine) roundTrip(req *http.Request, a *rundir.Attempt) (resp *http.Response, buf *bytes.Buffer, err error) {
	e.prog.InFlight.Add(1)
	if e.inFlight != nil {
		e.inFlight.Add(1)
	}
	a.Sent = time.Now()
	resp, err = e.rt.RoundTrip(req)
	if err == nil {
		buf = answerPool.Get().(*bytes.Buffer)
		buf.Reset()
		_, err = buf.ReadFrom(io.LimitReader(resp.Body, maxAnswer))
		resp.Body.Close()
	}
	a.Latency = time.Since(a.Sent).Seconds()
	e.prog.InFlight.Add(-1)
	if e.inFlight != nil {
		e.inFlight.Add(-1)
	}
	return resp, buf, err
}

// answered records in a what the service answered (resp, its body data; err:
// the body broke off) and returns the answer parsed.
func (e *engine) answered(a *rundir.Attempt, resp *http.Response, data []byte, err error) answer {
	a.Code = resp.StatusCode
	a.BytesIn = int64(len(data))
	a.RetryAfter = headerValue(resp.Header, hdrRetryAfter)
	a.RateLimit = headerValue(resp.Header, hdrRateLimit)
	a.RateLimitPolicy = headerValue(resp.Header, hdrRateLimitPolicy)
	a.Outcome, a.Class = rundir.Classify(resp.StatusCode, nil)
	ans := parseAnswer(data)
	if err != nil { // the body broke off: the service answered, the answer is partial
		a.Error = "read answer: " + err.Error()
	} else if a.Outcome != rundir.OutcomeOK {
		a.Error = resp.Status
	}
	if a.Outcome == rundir.OutcomeOK && a.Op == OpSend {
		if why := badSendAnswer(e.o.API, ans); why != "" {
			// The service may have acted, but this is not its answer: no acceptance.
			a.Outcome, a.Class = rundir.OutcomeUnknown, rundir.ClassBadAnswer
			if a.Error == "" {
				a.Error = resp.Status + " whose body is not the send answer: " + why
			}
		}
	}
	a.TxID, a.NotificationID = ans.TxID, ans.NotificationID
	if ans.State != "" {
		a.State = ans.State
	}
	if ans.Channel != "" {
		a.Channel = ans.Channel
	}
	return ans
}

// The answer's headers answered records, in the canonical form the transport
// stores them in (http.CanonicalHeaderKey: "RateLimit" is "Ratelimit").
const (
	hdrRetryAfter      = "Retry-After"
	hdrRateLimit       = "Ratelimit"
	hdrRateLimitPolicy = "Ratelimit-Policy"
)

// headerValue is h.Get(key) for a key already canonical: Get canonicalises
// its key on every call, and "RateLimit" and "RateLimit-Policy", not
// canonical as spelt, cost a new string each (two allocations a request).
func headerValue(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// write counts a in the metrics and progress and hands it to the recorder.
func (e *engine) write(c *clientState, a *rundir.Attempt) { e.writeAs(c, a, "", "") }

// writeAs is write with the method and URL of the request for results.bin
// ("": the op's own).
func (e *engine) writeAs(c *clientState, a *rundir.Attempt, method, u string) {
	e.prog.Requests.Add(1)
	if a.Outcome != rundir.OutcomeOK {
		e.prog.Errors.Add(1)
	}
	if a.Code == http.StatusTooManyRequests {
		e.prog.RateLimited.Add(1)
	}
	if c.met != nil {
		c.met.request(a.Op, a.Code).Inc()
		e.durations[a.Op].Observe(a.Latency)
		if a.Code == http.StatusTooManyRequests {
			c.met.rateLimited.Inc()
		}
		if a.RetryAfter != "" {
			if d, ok := rundir.ParseRetryAfter(a.RetryAfter, a.Sent); ok {
				e.retryAfter.Observe(d.Seconds())
			}
		}
	}
	if e.o.Out == nil {
		return
	}
	r := &vegeta.Result{
		Attack:    e.o.RunID,
		Seq:       e.vseq.Add(1) - 1,
		Code:      uint16(a.Code),
		Timestamp: a.Sent,
		Latency:   time.Duration(a.Latency * 1e9),
		BytesOut:  uint64(a.BytesOut),
		BytesIn:   uint64(a.BytesIn),
		Error:     a.Error,
		Method:    http.MethodPost,
		URL:       e.sendURL,
	}
	switch a.Op {
	case opCheckStatus:
		r.Method, r.URL = http.MethodGet, e.statusURL+a.TxID
	case opToken:
		r.URL = e.o.TokenURL
	case opWebhook:
		r.URL = strings.TrimRight(e.o.BaseURL, "/") + rundir.RouteWebhooks
	}
	if method != "" {
		r.Method, r.URL = method, u
	}
	if err := e.o.Out.Record(a, r); err != nil {
		e.fail(err)
	}
}

// tokenRecorder records the token requests of one client as attempts (op
// token). Nothing of the request or answer body is kept.
type tokenRecorder struct {
	e    *engine
	c    *clientState
	next http.RoundTripper
}

func (t *tokenRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	a := &rundir.Attempt{API: t.e.o.API, Op: opToken, Client: t.c.ID, Attempt: 1, Intended: time.Now()}
	if req.ContentLength > 0 {
		a.BytesOut = req.ContentLength
	}
	a.Sent = time.Now()
	resp, err := t.next.RoundTrip(req)
	a.Latency = time.Since(a.Sent).Seconds()
	if err != nil {
		_, class := rundir.Classify(0, err)
		a.Outcome, a.Class, a.Error = rundir.OutcomeUnknown, class, "token request failed: "+class
		t.e.write(t.c, a)
		return nil, err
	}
	a.Code = resp.StatusCode
	a.Outcome, a.Class = rundir.Classify(resp.StatusCode, nil)
	if a.Outcome != rundir.OutcomeOK {
		a.Error = resp.Status
	}
	a.BytesIn = max(resp.ContentLength, 0)
	if a.Outcome == rundir.OutcomeOK {
		a.ExpiresIn = peekExpiresIn(resp)
	}
	t.e.write(t.c, a)
	return resp, nil
}

// peekExpiresIn reads the expires_in a token answer announced (0 when none)
// and puts the body back for oauth2 to read: only that number is kept,
// never the token. The body is read as oauth2 reads it, up to 1 MiB.
func peekExpiresIn(resp *http.Response) float64 {
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	var v struct {
		ExpiresIn json.Number `json:"expires_in"`
	}
	if err != nil || json.Unmarshal(b, &v) != nil {
		return 0
	}
	f, err := v.ExpiresIn.Float64()
	if err != nil || f < 0 {
		return 0
	}
	return f
}

// authShape fills a's Challenge and Shape from an answer refused 401 or 403:
// the WWW-Authenticate's scheme and error parameter and the body's keys —
// how the service says a token is bad or lacks the right, never a value.
func authShape(a *rundir.Attempt, h http.Header, body []byte) {
	if a.Code != http.StatusUnauthorized && a.Code != http.StatusForbidden {
		return
	}
	a.Challenge, a.Shape = challengeOf(h.Get("WWW-Authenticate")), shapeOf(body)
}

// challengeOf is a WWW-Authenticate's first scheme and its error parameter
// (Bearer error="invalid_token"); realm, descriptions and the rest are left.
func challengeOf(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return rundir.AuthNone
	}
	scheme, params, _ := strings.Cut(v, " ")
	for p := range strings.SplitSeq(params, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "error") {
			return scheme + ` error="` + strings.Trim(strings.TrimSpace(val), `"`) + `"`
		}
	}
	return scheme
}

// shapeOf is a body's shape: {k1,k2} for a JSON object (its top-level keys
// sorted), json for other JSON, text, or empty.
func shapeOf(body []byte) string {
	b := bytes.TrimSpace(body)
	var m map[string]json.RawMessage
	switch {
	case len(b) == 0:
		return "empty"
	case json.Unmarshal(b, &m) == nil && m != nil:
		return "{" + strings.Join(slices.Sorted(maps.Keys(m)), ",") + "}"
	case json.Valid(b):
		return "json"
	}
	return "text"
}
