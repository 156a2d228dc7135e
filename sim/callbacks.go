package sim

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgload/msgload/rundir"
)

// callbackJob is one call to a callback, incoming or webhook URL.
type callbackJob struct {
	kind    string
	url     string
	body    []byte
	id      string // txId or notificationId
	state   string
	channel string // messaging: the channel of the status change (for the truth)
	msgID   string // Standard Webhooks webhook-id: the same on every retry
	attempt int
	faulted bool      // callback faults already drawn
	owe     *owing    // a final callback: what Server.Owed counts until its last attempt
	truth   *truthMsg // the message's truth record, held until every copy is settled
	// due is when the call was meant to start by the delays the simulator
	// drew (its own lag taken out), unix ns; 0 when not known (incoming).
	due int64
}

// holdTruth ties j to its message's truth record: the record goes out after
// the last copy of j is settled.
func (j *callbackJob) holdTruth(s *Server, tm *truthMsg) {
	j.truth = tm
	s.truth.hold(tm)
}

// owing ties the copies of one final callback (a duplicate, the retries of
// each) to the one unit of Server.owed they pay off: the unit is paid when
// the last copy has had its last attempt (answered, given up, or dropped).
type owing struct{ n atomic.Int32 }

// oweFinal makes j a final callback: the message's unit of Server.owed passes from
// its status to its call. Call before the status stops being pending.
func (j *callbackJob) oweFinal() {
	j.owe = &owing{}
	j.owe.n.Store(1)
}

// settle marks one copy of j as done for good.
func (s *Server) settle(j *callbackJob) {
	s.truth.release(j.truth)
	if j.owe != nil && j.owe.n.Add(-1) == 0 {
		s.owed.Add(-1)
	}
}

// signer signs calls with the Standard Webhooks headers.
type signer struct{ wh *standardwebhooks.Webhook }

func newSigner(secret string) (*signer, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, err
	}
	return &signer{wh: wh}, nil
}

// callback hands a call to the senders, after drawing its faults: dropped,
// duplicated, reordered (held back a little so a later one overtakes it) or
// delayed.
func (s *Server) callback(j *callbackJob, now time.Time) {
	cb := s.cfg.Callbacks
	if j.msgID == "" && s.signer != nil {
		j.msgID = "msg_" + uuid.NewString()
	}
	j.faulted = true
	if s.chance(cb.Drop) {
		s.met.callbacks.WithLabelValues(j.kind, "dropped").Inc()
		s.truth.callback(rundir.TruthCallback{ID: j.id, Kind: j.kind, State: j.state, Channel: j.channel, Action: rundir.CallbackDropped, Attempt: 1, At: now.UTC()})
		s.settle(j)
		return
	}
	at := now
	if s.chance(cb.Delay) {
		at = at.Add(cb.DelayBy)
	}
	if s.chance(cb.Reorder) {
		at = at.Add(cb.ReorderBy)
	}
	if j.due != 0 {
		j.due += int64(at.Sub(now)) // held back on purpose: the service's lateness, drawn, not the machine's
	}
	if s.chance(cb.Duplicate) {
		s.met.callbacks.WithLabelValues(j.kind, "duplicated").Inc()
		s.truth.callback(rundir.TruthCallback{ID: j.id, Kind: j.kind, State: j.state, Channel: j.channel, Action: rundir.CallbackDuplicated, Attempt: 1, At: now.UTC()})
		dup := *j
		s.truth.hold(j.truth)
		if j.owe != nil {
			j.owe.n.Add(1)
		}
		s.dispatch(&dup, at)
	}
	s.dispatch(j, at)
}

// dispatch sends j at t: now through the senders, later through the engine.
func (s *Server) dispatch(j *callbackJob, t time.Time) {
	if j.attempt == 0 {
		j.attempt = 1
	}
	if t.After(time.Now()) {
		s.eng.at(t, j)
		return
	}
	s.cbs.enqueue(j)
}

// runEvent runs one due engine event, noting how late it runs (Server.late).
func (s *Server) runEvent(ev event) {
	now := time.Now()
	s.late = max(time.Duration(now.UnixNano()-ev.at), 0)
	ev.job.run(s, now)
	s.late = 0
}

func (m *message) run(s *Server, now time.Time)      { s.runMessage(m, now) }
func (n *notification) run(s *Server, now time.Time) { s.runNotification(n, now) }

func (j *callbackJob) run(s *Server, now time.Time) {
	if !j.faulted {
		s.callback(j, now) // incoming messages draw their faults when due
		return
	}
	s.cbs.enqueue(j)
}

func (f *forget) run(s *Server, now time.Time) {
	s.ntMu.Lock()
	if e := s.idem[f.key]; e != nil && now.Sub(e.created) >= s.cfg.Notify.IdempotencyRetention {
		delete(s.idem, f.key)
	}
	s.ntMu.Unlock()
}

// senders is a bounded pool of goroutines making the calls.
type senders struct {
	s      *Server
	client *http.Client
	jobs   chan *callbackJob
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	quit   chan struct{}
	urls   sync.Map // string → *url.URL
	nurls  atomic.Int64
}

func newSenders(s *Server, client *http.Client, n int) *senders {
	ctx, cancel := context.WithCancel(context.Background())
	p := &senders{s: s, client: client, jobs: make(chan *callbackJob, 4*n), ctx: ctx, cancel: cancel, quit: make(chan struct{})}
	for range n {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

// enqueue blocks while every sender is busy and the queue is full: the
// engine slows down rather than dropping calls silently.
func (p *senders) enqueue(j *callbackJob) {
	select {
	case p.jobs <- j:
	case <-p.quit:
	}
}

func (p *senders) work() {
	defer p.wg.Done()
	for {
		select {
		case j := <-p.jobs:
			select {
			case <-p.quit:
				p.s.truth.pendingAt(j.truth, j.due) // queued, not in flight: abandoned at Close, still due
				return
			default:
			}
			p.send(j)
		case <-p.quit:
			return
		}
	}
}

func (p *senders) send(j *callbackJob) {
	s := p.s
	req, err := p.request(j)
	status, retryAfter := 0, ""
	began := time.Now()
	if err == nil {
		if s.signer != nil {
			ts := time.Now()
			sig, serr := s.signer.wh.Sign(j.msgID, ts, j.body)
			if serr == nil {
				req.Header.Set(standardwebhooks.HeaderWebhookID, j.msgID)
				req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, itoa(ts.Unix()))
				req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
			}
		}
		var resp *http.Response
		resp, err = p.client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
			status = resp.StatusCode
			retryAfter = resp.Header.Get("Retry-After")
		}
	}
	now := time.Now()
	s.met.cbDuration.WithLabelValues(j.kind).Observe(now.Sub(began).Seconds())
	ok := err == nil && status >= 200 && status < 300
	action := rundir.CallbackSent
	if j.attempt > 1 {
		action = rundir.CallbackRetried
	}
	s.truth.callback(rundir.TruthCallback{ID: j.id, Kind: j.kind, State: j.state, Channel: j.channel, Action: action, Attempt: j.attempt, At: began.UTC(), Done: now.UTC(), Status: status, Due: dueTime(j.due)})
	if ok {
		s.met.callbacks.WithLabelValues(j.kind, "ok").Inc()
		s.settle(j)
		return
	}
	s.met.callbacks.WithLabelValues(j.kind, "error").Inc()
	cb := s.cfg.Callbacks
	gone := status == http.StatusGone && cb.GoneStops // the receiver refuses it for good
	if j.attempt >= cb.Attempts || p.ctx.Err() != nil || gone {
		s.met.callbacks.WithLabelValues(j.kind, "failed").Inc()
		s.truth.callback(rundir.TruthCallback{ID: j.id, Kind: j.kind, State: j.state, Channel: j.channel, Action: rundir.CallbackFailed, Attempt: j.attempt, At: now.UTC(), Status: status})
		s.settle(j)
		return
	}
	s.met.callbacks.WithLabelValues(j.kind, "retried").Inc()
	next := *j
	next.attempt++
	wait := cb.wait(j.attempt, retryAfter)
	if j.due != 0 {
		next.due = j.due + int64(now.Sub(began)+wait) // the receiver's answer time and the wait are no lag
	}
	s.eng.at(now.Add(wait), &next)
}

// wait is the pause after the attempt-th try: Backoff × BackoffFactor^(attempt-1),
// at most BackoffMax when set, or the answer's Retry-After (whole seconds)
// when it is honoured and given.
func (cb *Callbacks) wait(attempt int, retryAfter string) time.Duration {
	if cb.HonourRetryAfter {
		if n, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && n >= 0 {
			return time.Duration(n) * time.Second
		}
	}
	d := time.Duration(float64(cb.Backoff) * math.Pow(max(cb.BackoffFactor, 1), float64(attempt-1)))
	if cb.BackoffMax > 0 && (d > cb.BackoffMax || d < 0) {
		d = cb.BackoffMax
	}
	return d
}

// request builds the POST of j; target URLs are parsed once (most calls go
// to the same few).
func (p *senders) request(j *callbackJob) (*http.Request, error) {
	var u *url.URL
	if v, ok := p.urls.Load(j.url); ok {
		u = v.(*url.URL)
	} else {
		var err error
		if u, err = url.Parse(j.url); err != nil {
			return nil, err
		}
		if p.nurls.Add(1) <= 1024 {
			p.urls.Store(j.url, u)
		}
	}
	req := (&http.Request{
		Method:        http.MethodPost,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}, "User-Agent": {"msgload-sim"}},
		Body:          io.NopCloser(bytes.NewReader(j.body)),
		ContentLength: int64(len(j.body)),
		Host:          u.Host,
	}).WithContext(p.ctx)
	body := j.body
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return req, nil
}

// halt refuses new calls (a scheduler blocked on a full queue goes on).
func (p *senders) halt() { close(p.quit) }

// wait waits for the calls in flight, at most timeout (and ctx); then it
// cancels them.
func (p *senders) wait(ctx context.Context, timeout time.Duration) {
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
	p.cancel()
	<-done
}

// dueTime is a call's due time for the truth; zero (omitted) when not known.
func dueTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}
