package attack

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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

// scheduleSlots is the size of the ring of intended send times shared by the
// pacer and the targeter; it must exceed the hits the pacer can run ahead of
// the targeter (at most one per vegeta worker blocked between the two).
const scheduleSlots = 1 << 16

var errStopped = errors.New("attack stopped")

// message is one message in flight between the targeter and the RoundTripper.
type message struct {
	seq      int64
	client   *clientState
	body     []byte
	intended time.Time
	first    time.Time
	extID    string
	attempts int // attempts made so far (retries, then probes, number on)
	slot     int // the first attempt's limiter slot (respect mode), else noSlot
	// gaveUp is set by the targeter when the limiter could not let the first
	// attempt go before the run's end (a GaveUp reason): it is recorded, not sent.
	gaveUp string
	capped bool // due while the cap on messages in flight was full
	// hit is the pacer's hit that carries this message (== seq but for a
	// repeat): the key between the targeter and the RoundTripper.
	hit int64
	// nums numbers the attempts of a message that has repeats (shared by the
	// message and its repeats); nil: attempt n of the send loop is n.
	nums   *atomic.Int64
	repeat bool // a resend of message seq (Options.RepeatOf)
}

// noSlot asks exchangeReq to wait for the client's limiter itself.
const noSlot = -1

type clientState struct {
	Client
	basic string         // messaging: the Basic Authorization value
	lim   *windowLimiter // nil unless the limit is respected
	tok   *tokenCache    // notify only
	met   *clientMetrics // nil without metrics
}

type engine struct {
	o         *Options
	rt        http.RoundTripper // every real request goes through it (no redirects, no cookies: no http.Client)
	clients   []*clientState
	byID      map[string]*clientState
	prog      *Progress
	stop      context.Context // cancelled: no new sends
	abort     context.Context // cancelled: abandon in-flight work
	halt      context.Context // cancelled with stop or abort: ends every wait before a send
	end       *runEnd         // no send leaves after it
	lateAfter time.Duration
	timeout   time.Duration
	sendURL   string
	statusURL string // check-status prefix
	retryOn   map[int]bool
	retryCap  time.Duration

	haltCancel context.CancelFunc
	// sem holds a slot per message in flight (nil: no cap): taken by the
	// pacer before a hit, given back when vegeta's result of the hit arrives.
	sem chan struct{}

	began atomic.Int64 // Unix ns of the attack's start, set by the pacer
	ring  []atomic.Int64
	seq   atomic.Int64
	vseq  atomic.Uint64
	slots []atomic.Pointer[message] // seq % len → message between targeter and RoundTrip
	spill sync.Map                  // seq → *message when its slot was taken (rare)
	wg    sync.WaitGroup
	maxed atomic.Bool

	// repeated holds seq → *message: the messages repeats may follow (Options.RepeatOf).
	repeated sync.Map

	errOnce sync.Once
	err     error

	inFlight interface{ Add(float64) }
	planned  interface{ Set(float64) }
	// Series of the hot path, looked up once (nil without metrics).
	lag, retryAfter prometheus.Observer
	late, capped    prometheus.Counter
	durations       map[string]prometheus.Observer // by operation
}

// Run attacks with o until the pacer, Duration, Requests or MaxMessages end
// it, or ctx is cancelled (no new sends; retries, probes and polls of messages
// already sent go on until Options.Abort). It returns when all in-flight work
// is done.
func Run(ctx context.Context, o Options) (Result, error) {
	return RunWithAbort(ctx, context.Background(), o)
}

// RunWithAbort is Run with a second context: when abort ends, requests in
// flight are cancelled and retries, probes and polls are abandoned.
func RunWithAbort(ctx, abort context.Context, o Options) (Result, error) {
	if err := o.check(); err != nil {
		return Result{}, err
	}
	e := newEngine(ctx, abort, &o)
	defer e.haltCancel()
	if o.API == rundir.APINotify && o.WebhookURL != "" {
		if err := e.registerWebhooks(); err != nil {
			return Result{Snapshot: e.prog.Snapshot()}, err
		}
	}
	maxWorkers := uint64(vegeta.DefaultMaxWorkers)
	if e.sem != nil {
		// The slots bound the hits; a few more workers cover those between
		// the end of a hit and their next tick.
		maxWorkers = uint64(cap(e.sem)) + 64
	}
	atk := vegeta.NewAttacker(
		vegeta.Client(&http.Client{Transport: e}),
		vegeta.Workers(orDefault(o.Workers, vegeta.DefaultWorkers)),
		vegeta.MaxWorkers(orDefault(o.MaxWorkers, maxWorkers)),
		vegeta.Redirects(vegeta.NoFollow),
	)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			atk.Stop()
		case <-done:
		}
	}()
	start := time.Now()
	if o.Metrics != nil {
		o.Metrics.start(&o, start)
	}
	p := &schedPacer{p: o.Pacer, e: e, max: o.Requests}
	for range atk.Attack(e.target, p, o.Duration, o.RunID) {
		// Every attempt is recorded by the engine; vegeta's own result of a
		// hit (a whole message with its retries) is not needed, only that the
		// hit is over: its slot is free.
		if e.sem != nil {
			<-e.sem
		}
	}
	close(done)
	e.wg.Wait()
	end := time.Now()
	if t, ok := e.rt.(*http.Transport); ok && o.Transport == nil {
		// Nothing more is sent: free the connections (their buffers and
		// goroutines, one set per message in flight at the peak) before the
		// run directory is read for the report, which can reuse the memory.
		t.CloseIdleConnections()
	}
	if o.Metrics != nil {
		o.Metrics.end(end)
		e.planned.Set(0)
	}
	if b := e.began.Load(); b != 0 {
		start = time.Unix(0, b)
	}
	res := Result{Start: start, End: end, Stopped: ctx.Err() != nil || e.maxed.Load(), Snapshot: e.prog.Snapshot()}
	return res, e.err
}

func orDefault(v, d uint64) uint64 {
	if v == 0 {
		return d
	}
	return v
}

func newEngine(stop, abort context.Context, o *Options) *engine {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	conns := o.Connections
	if conns <= 0 {
		conns = vegeta.DefaultConnections
	}
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	var rt http.RoundTripper = tr
	if o.Transport != nil {
		rt = o.Transport
	}
	e := &engine{
		o:         o,
		rt:        rt,
		prog:      o.Progress,
		stop:      stop,
		abort:     abort,
		lateAfter: o.LateAfter,
		timeout:   o.Timeout,
		ring:      make([]atomic.Int64, scheduleSlots),
		slots:     make([]atomic.Pointer[message], scheduleSlots),
		retryOn:   map[int]bool{},
		byID:      map[string]*clientState{},
		retryCap:  o.Retry.MaxWait,
		end:       newRunEnd(),
	}
	if n := o.MaxInFlight; n >= 0 {
		if n == 0 {
			n = DefaultMaxInFlight
		}
		e.sem = make(chan struct{}, n)
	}
	e.halt, e.haltCancel = context.WithCancel(stop)
	context.AfterFunc(abort, e.haltCancel)
	if e.prog == nil {
		e.prog = new(Progress)
	}
	if e.lateAfter <= 0 {
		e.lateAfter = 10 * time.Millisecond
	}
	if e.timeout <= 0 {
		e.timeout = vegeta.DefaultTimeout
	}
	if e.retryCap <= 0 {
		e.retryCap = 30 * time.Second
	}
	for _, c := range o.Retry.On {
		e.retryOn[c] = true
	}
	base := strings.TrimRight(o.BaseURL, "/")
	if o.API == rundir.APINotify {
		e.sendURL = base + "/api/v1/notifications"
	} else {
		e.sendURL = base + "/messaging/v1/send"
		e.statusURL = base + "/messaging/v1/check-status/"
	}
	if m := o.Metrics; m != nil {
		e.inFlight = m.inFlight.WithLabelValues(o.API)
		e.planned = m.planned.WithLabelValues(o.API)
		e.lag = m.lag.WithLabelValues(o.API)
		e.retryAfter = m.retryAfter.WithLabelValues(o.API)
		e.late = m.late.WithLabelValues(o.API)
		e.capped = m.capped.WithLabelValues(o.API)
		e.durations = map[string]prometheus.Observer{}
		for _, op := range []string{OpSend, OpCheckStatus, OpWebhook, OpToken, OpOther} {
			e.durations[op] = m.duration.WithLabelValues(o.API, op)
		}
	}
	for _, c := range o.Clients {
		cs := &clientState{Client: c, met: o.Metrics.forClient(o.API, c.ID),
			basic: "Basic " + base64.StdEncoding.EncodeToString([]byte(c.ID+":"+c.Secret))}
		if o.Limit.Mode == ModeRespect {
			cs.lim = newWindowLimiter(o.Limit.Requests, o.Limit.Window)
		}
		if o.API == rundir.APINotify {
			cs.tok = newTokenCache(c, o.TokenURL, &http.Client{Transport: &tokenRecorder{e: e, c: cs, next: rt}})
		}
		e.clients = append(e.clients, cs)
		e.byID[c.ID] = cs
	}
	return e
}

// fail keeps the first error that ends the run.
func (e *engine) fail(err error) {
	e.errOnce.Do(func() { e.err = err })
}

// schedPacer wraps the scenario's pacer: it stops after max hits, and writes
// each hit's intended time (the attack's start plus the pacer's schedule) where
// the targeter reads it, so lateness is measured against the plan.
type schedPacer struct {
	p     vegeta.Pacer
	e     *engine
	max   int64
	began time.Time
	// next is the due time of the last hit (from the start): when behind,
	// the pacer is asked for the next one from there, so a hit keeps its
	// planned time however late the pacer gets to it.
	next time.Duration
	// freed is when the pacer last got a slot after waiting for one: a hit
	// due before it waited for the cap too.
	freed time.Duration
}

func (s *schedPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if s.began.IsZero() {
		s.began = time.Now().Add(-elapsed)
		s.e.began.Store(s.began.UnixNano())
		if g := s.e.o.Grace; g > 0 && s.e.o.Duration > 0 {
			s.e.end.set(s.began.Add(s.e.o.Duration + g))
		}
		if len(s.e.o.Extra) > 0 {
			// On the pacer's clock: an extra keeps its place among the sends.
			s.e.wg.Add(1)
			go func() { defer s.e.wg.Done(); s.e.extras(s.began) }()
		}
	}
	if s.max > 0 && hits >= uint64(s.max) {
		s.e.loadEnded()
		return 0, true
	}
	wait, stop := s.p.Pace(elapsed, hits)
	if stop {
		s.e.loadEnded()
		return wait, stop
	}
	due := elapsed + max(wait, 0)
	if wait <= 0 && s.next < elapsed {
		// Behind (the cap, a busy machine): the pacer answers "now"; asked
		// from the previous hit's due time it gives this hit's planned time.
		// (Asked at the real time first: the replay pacer notes from it when
		// the previous hit left.)
		if w, stop := s.p.Pace(s.next, hits); !stop {
			due = min(s.next+max(w, 0), elapsed)
		}
	}
	s.next = due
	if s.e.planned != nil {
		s.e.planned.Set(s.p.Rate(elapsed))
	}
	if s.e.sem == nil {
		s.e.ring[hits%scheduleSlots].Store(int64(due))
		return wait, false
	}
	// A slot before the hit leaves: the pacer waits for it here (vegeta's
	// loop then ticks at once), so the number of hits in flight never passes
	// the cap. A hit due while a slot was awaited is capped.
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.e.stop.Done():
			t.Stop()
			return 0, true
		}
	}
	capped := due < s.freed
	select {
	case s.e.sem <- struct{}{}:
	default:
		capped = true
		var end <-chan time.Time
		if d := s.e.o.Duration; d > 0 {
			t := time.NewTimer(time.Until(s.began.Add(d)))
			defer t.Stop()
			end = t.C
		}
		select {
		case s.e.sem <- struct{}{}:
		case <-end:
			s.e.loadEnded()
			return 0, true
		case <-s.e.stop.Done():
			return 0, true
		}
		s.freed = time.Since(s.began)
	}
	v := int64(due)
	if capped {
		v = -v - 1 // the sign carries the flag to the targeter
	}
	s.e.ring[hits%scheduleSlots].Store(v)
	return 0, false
}

// loadEnded is called when the pacer stops: the run ends Grace later.
func (e *engine) loadEnded() {
	if g := e.o.Grace; g > 0 {
		e.end.loadEnded(time.Now().Add(g))
	}
}

func (s *schedPacer) Rate(elapsed time.Duration) float64 { return s.p.Rate(elapsed) }

// target is the vegeta.Targeter: it builds message seq's request with a fresh
// tag, after the client's limiter (respect mode) lets it go.
func (e *engine) target(t *vegeta.Target) error {
	if e.stop.Err() != nil {
		return errStopped
	}
	k := e.seq.Add(1)
	seq := k
	if e.o.Seq != nil {
		seq = e.o.Seq(k)
	}
	if e.o.MaxMessages > 0 && seq > e.o.MaxMessages {
		e.maxed.Store(true)
		return ErrMaxMessages
	}
	due := e.ring[(k-1)%scheduleSlots].Load()
	capped := due < 0
	if capped {
		due = -due - 1
	}
	intended := time.Unix(0, e.began.Load()+due)
	if e.o.RepeatOf != nil {
		if orig := e.o.RepeatOf(seq); orig > 0 && orig < seq {
			if v, ok := e.repeated.Load(orig); ok {
				return e.targetRepeat(t, seq, v.(*message), intended, capped)
			}
			// The message is not built yet (a race of workers): the resend goes
			// as a message of its own.
		}
	}
	c := e.clients[(seq-1)%int64(len(e.clients))]
	if e.o.ClientFor != nil {
		id := e.o.ClientFor(seq)
		if c = e.byID[id]; c == nil {
			err := fmt.Errorf("%w: message %d: client %q is not among the clients", ErrOptions, seq, id)
			e.fail(err)
			return err
		}
	}
	slot, gaveUp, err := e.firstSlot(c)
	if err != nil {
		return err
	}
	first := time.Now()
	tag := rundir.Tag{Run: e.o.RunID, Seq: seq, First: first, Chain: e.o.Chain}
	body, err := e.o.Body(seq, c.ID, tag)
	if err != nil {
		if c.lim != nil {
			c.lim.answered(slot) // a negative slot is ignored
		}
		err = fmt.Errorf("build body of message %d: %w", seq, err)
		e.fail(err)
		return err
	}
	m := &message{seq: seq, hit: seq, client: c, body: body, intended: intended, first: first, slot: slot, gaveUp: gaveUp, capped: capped}
	if e.o.API == rundir.APINotify {
		// The body's own externalId (a replay may keep the recorded one), else the tag's.
		if m.extID = externalID(body); m.extID == "" {
			m.extID = tag.ExternalID()
		}
	}
	if e.o.RepeatOf != nil {
		m.nums = new(atomic.Int64)
		e.repeated.Store(seq, m)
	}
	e.park(m)
	t.Method = http.MethodPost
	// The sequence rides in the URL fragment, which is never sent: the
	// RoundTripper finds the message by it (a header would cost two maps).
	t.URL = e.sendURL + "#" + strconv.FormatInt(seq, 10)
	t.Body = body
	return nil
}

// firstSlot waits for the client's limiter (respect mode) before a hit's
// first attempt: the slot, or why the hit cannot leave before the run's end
// (it is then recorded as given up, not sent); errStopped when the run stops.
func (e *engine) firstSlot(c *clientState) (slot int, gaveUp string, err error) {
	if c.lim == nil {
		return noSlot, "", nil
	}
	if slot, err = c.lim.wait(e.stop, e.end); err != nil {
		if e.stop.Err() != nil {
			return noSlot, "", errStopped
		}
		return noSlot, gaveUpReason(err), nil
	}
	return slot, "", nil
}

// targetRepeat builds hit seq, a resend of message orig: its body, client,
// externalId and first send, numbered on from its attempts.
func (e *engine) targetRepeat(t *vegeta.Target, seq int64, orig *message, intended time.Time, capped bool) error {
	c := orig.client
	slot, gaveUp, err := e.firstSlot(c)
	if err != nil {
		return err
	}
	m := &message{seq: orig.seq, hit: seq, client: c, body: orig.body, intended: intended, first: orig.first, extID: orig.extID,
		slot: slot, gaveUp: gaveUp, capped: capped, nums: orig.nums, repeat: true}
	e.park(m)
	t.Method = http.MethodPost
	t.URL = e.sendURL + "#" + strconv.FormatInt(seq, 10)
	t.Body = m.body
	return nil
}

// park hands m from the targeter to the RoundTripper: a slot per sequence in
// a ring (no lock; a map showed heavy contention at high rates), or the spill
// map when the slot is still taken by a message sent scheduleSlots earlier.
func (e *engine) park(m *message) {
	if !e.slots[m.hit%scheduleSlots].CompareAndSwap(nil, m) {
		e.spill.Store(m.hit, m)
	}
}

func (e *engine) unpark(seq int64) *message {
	slot := &e.slots[seq%scheduleSlots]
	if m := slot.Load(); m != nil && m.hit == seq && slot.CompareAndSwap(m, nil) {
		return m
	}
	if v, ok := e.spill.LoadAndDelete(seq); ok {
		return v.(*message)
	}
	return nil
}

// RoundTrip implements http.RoundTripper for vegeta's client: it takes the
// message the targeter prepared and sends it with retries, then starts its
// probes or polls. The answer given back to vegeta is the last attempt's.
func (e *engine) RoundTrip(req *http.Request) (*http.Response, error) {
	seq, _ := strconv.ParseInt(req.URL.Fragment, 10, 64)
	m := e.unpark(seq)
	if m == nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("attack: no message %d", seq)
	}
	last, ans := e.send(m, req)
	if last.Outcome == rundir.OutcomeOK && !m.repeat {
		e.prog.Accepted.Add(1)
		if e.o.Poll != nil && ans.TxID != "" {
			e.wg.Add(1)
			go func() { defer e.wg.Done(); e.poll(m, ans.TxID) }()
		}
		if e.o.Probes > 0 && ans.NotificationID != "" && probed(m.seq, e.o.Probes) {
			e.wg.Add(1)
			go func() { defer e.wg.Done(); e.probe(m, ans.NotificationID) }()
		}
	}
	if last.Code == 0 {
		return nil, errors.New(last.Error)
	}
	return &http.Response{StatusCode: last.Code, Status: strconv.Itoa(last.Code), Body: http.NoBody,
		Header: http.Header{}, Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// probed spreads a share p of the messages evenly over the sequence.
func probed(seq int64, p float64) bool {
	return math.Floor(float64(seq)*p) > math.Floor(float64(seq-1)*p)
}

// send makes the attempts of one message: the first, then retries. Each
// attempt is counted at once and recorded when it is known whether a retry
// follows it: an attempt after which the policy wanted a retry that was not
// made (past the run's end, or interrupted) carries the reason in GaveUp.
func (e *engine) send(m *message, first *http.Request) (*rundir.Attempt, answer) {
	c := m.client
	intended := m.intended
	authRetried := false
	retries := 0 // the policy's, not counting the one after a refused token
	for n := 1; ; n++ {
		num := n
		if m.nums != nil {
			num = int(m.nums.Add(1)) // shared with the message's repeats
		}
		m.attempts = num
		a := e.attempt(m, OpSend, num)
		a.Intended = intended
		var reuse *http.Request
		slot := noSlot
		if n == 1 {
			reuse = first // vegeta's request carries the body already
			slot = m.slot // the targeter passed the limiter
			if m.gaveUp != "" {
				// The limiter could not let it go before the run's end.
				if first.Body != nil {
					first.Body.Close()
				}
				e.notSent(a, m.gaveUp)
				e.prog.GaveUp.Add(1)
				e.write(c, a)
				return a, answer{}
			}
		}
		ans, hdr := e.exchangeReq(e.halt, c, a, http.MethodPost, e.sendURL, m.body, slot, reuse)
		if n == 1 && !m.repeat {
			e.prog.Sent.Add(1)
			if m.capped {
				a.Capped = true
				e.prog.Capped.Add(1)
				if e.capped != nil {
					e.capped.Inc()
				}
			}
			late := a.Sent.Sub(a.Intended)
			if late > e.lateAfter {
				e.prog.Late.Add(1)
			}
			if c.met != nil {
				c.met.sent.Inc()
				e.lag.Observe(max(late, 0).Seconds())
				if late > e.lateAfter {
					e.late.Inc()
				}
			}
		} else {
			e.prog.Retries.Add(1)
			if c.met != nil {
				c.met.retries.Inc()
			}
		}
		if a.GaveUp != "" || a.Outcome == rundir.OutcomeOK || e.abort.Err() != nil {
			e.write(c, a)
			return a, ans
		}
		var wait time.Duration
		pastEnd := GaveUpBackoff
		if a.Code == http.StatusUnauthorized && c.tok != nil && !authRetried {
			// The token was refused (the exchange dropped it): one retry at
			// once with a new one, besides the policy's retries.
			authRetried = true
		} else {
			if !e.retryable(a) || retries >= e.o.Retry.Max {
				e.write(c, a)
				return a, ans
			}
			retries++
			wait = e.backoff(retries)
			if d, ok := parseRetryAfter(hdr.Get("Retry-After"), time.Now()); ok && d >= wait {
				// Honoured in full (not cut at MaxWait), jittered upwards only.
				wait, pastEnd = e.retryAfterWait(d), GaveUpRetryAfter
			}
		}
		intended = time.Now().Add(wait)
		if why := e.pause(e.halt, wait, pastEnd); why != "" {
			a.GaveUp = why
			e.prog.GaveUp.Add(1)
			e.write(c, a)
			return a, ans
		}
		e.write(c, a)
	}
}

// notSent fills a for a request that was not made because of a GaveUp reason.
func (e *engine) notSent(a *rundir.Attempt, why string) {
	a.Sent = time.Now()
	a.Outcome, a.Class, a.GaveUp = rundir.OutcomeFail, "other", why
	a.Error = "not sent: " + gaveUpText[why]
}

var gaveUpText = map[string]string{
	GaveUpRetryAfter: "Retry-After past the run's end",
	GaveUpBackoff:    "backoff past the run's end",
	GaveUpLimit:      "rate limit window past the run's end",
	GaveUpStopped:    "run interrupted",
}

// retryable says whether the policy retries after a: its code, or no answer
// (timeout, reset) when OnTimeout. A 2xx whose body is not the API's answer
// (bad_answer, outcome unknown) is retried with OnTimeout for notify when the
// message has an externalId (the service answers a repeat with the same
// notificationId and sends nothing twice); never for messaging, where a
// resend is a new message.
func (e *engine) retryable(a *rundir.Attempt) bool {
	if a.Class == ClassBadAnswer {
		return e.o.Retry.OnTimeout && a.API == rundir.APINotify && a.ExternalID != ""
	}
	if e.retryOn[a.Code] {
		return true
	}
	if a.Code != 0 || !e.o.Retry.OnTimeout {
		return false
	}
	// No answer: an unknown outcome, or a token request that timed out or was
	// reset (the attempt itself was never sent).
	return a.Outcome == rundir.OutcomeUnknown || a.Class == "timeout" || a.Class == "reset"
}

// backoff is the wait before retry n: Backoff·2^(n-1) with jitter (a random
// share up to Jitter added or removed), at most MaxWait.
func (e *engine) backoff(n int) time.Duration {
	b := float64(e.o.Retry.Backoff) * math.Pow(2, float64(n-1))
	if j := e.o.Retry.Jitter; j > 0 {
		b *= 1 - j + 2*j*rand.Float64()
	}
	return min(time.Duration(b), e.retryCap)
}

// retryAfterWait is the wait for a Retry-After of d: d plus a random share up
// to Jitter of it (never less than d: the service asked for d), not past the
// run's end when d itself is not. MaxWait does not cut it.
func (e *engine) retryAfterWait(d time.Duration) time.Duration {
	j := e.o.Retry.Jitter
	if j <= 0 {
		return d
	}
	hi := d + time.Duration(j*float64(d))
	if end, _ := e.end.get(); !end.IsZero() {
		if left := time.Until(end); left >= d && left < hi {
			hi = left
		}
	}
	return d + time.Duration(rand.Float64()*float64(hi-d))
}

// sleep waits d unless the run is aborted; it reports whether it slept fully.
// Polls use it: they go on after the first signal, until the second.
func (e *engine) sleep(d time.Duration) bool {
	if d <= 0 {
		return e.abort.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-e.abort.Done():
		return false
	}
}

func (e *engine) attempt(m *message, op string, n int) *rundir.Attempt {
	a := &rundir.Attempt{Seq: m.seq, API: e.o.API, Op: op, Client: m.client.ID, Attempt: n,
		FirstSent: m.first, ExternalID: m.extID}
	if e.o.API == rundir.APIMessaging && op == OpSend && len(e.o.Chain) > 0 {
		a.Channel, _, _ = strings.Cut(e.o.Chain[0], ":") // the first item's channel
	}
	return a
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
	ctx, cancel := context.WithTimeout(e.abort, e.timeout)
	defer cancel()
	var req *http.Request
	var err error
	if reuse != nil {
		req = reuse.WithContext(ctx)
		req.URL.Fragment = ""
		delete(req.Header, "X-Vegeta-Seq")
		delete(req.Header, "X-Vegeta-Attack")
	} else {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err = http.NewRequestWithContext(ctx, method, u, rd)
		if err != nil {
			a.Sent = time.Now()
			a.Outcome, a.Class, a.Error = rundir.OutcomeFail, "other", "build request: "+err.Error()
			return answer{}, nil
		}
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	var bearer string
	if c.tok != nil {
		bearer, err = c.tok.token(ctx)
		if err != nil {
			// Nothing was sent (fail), but a token request that timed out or was
			// reset is classed so, and retried like a send that was (retryable).
			a.Sent = time.Now()
			a.Outcome, a.Class, a.Error = rundir.OutcomeFail, errClass(err), err.Error()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				a.Class = "timeout" // the attempt's time ran out (the token request reports it as canceled)
			}
			return answer{}, nil
		}
		req.Header.Set("Authorization", "Bearer "+bearer)
	} else {
		req.Header.Set("Authorization", c.basic)
	}
	a.BytesOut = int64(len(body))
	e.prog.InFlight.Add(1)
	if e.inFlight != nil {
		e.inFlight.Add(1)
	}
	a.Sent = time.Now()
	resp, err := e.rt.RoundTrip(req)
	var data []byte
	if err == nil {
		buf := answerPool.Get().(*bytes.Buffer)
		defer putAnswer(buf) // data is used below only: parseAnswer copies what it keeps
		buf.Reset()
		_, err = buf.ReadFrom(io.LimitReader(resp.Body, maxAnswer))
		resp.Body.Close()
		data = buf.Bytes()
	}
	a.Latency = time.Since(a.Sent).Seconds()
	e.prog.InFlight.Add(-1)
	if e.inFlight != nil {
		e.inFlight.Add(-1)
	}
	if resp == nil {
		a.Outcome, a.Class = rundir.OutcomeUnknown, errClass(err)
		if a.Class == "conn" {
			a.Outcome = rundir.OutcomeFail // refused: nothing reached the service
		}
		a.Error = err.Error()
		return answer{}, nil
	}
	a.Code = resp.StatusCode
	a.BytesIn = int64(len(data))
	a.RetryAfter = resp.Header.Get("Retry-After")
	a.RateLimit = resp.Header.Get("RateLimit")
	a.RateLimitPolicy = resp.Header.Get("RateLimit-Policy")
	a.Outcome, a.Class = codeClass(resp.StatusCode)
	ans := parseAnswer(data)
	if err != nil { // the body broke off: the service answered, the answer is partial
		a.Error = "read answer: " + err.Error()
	} else if a.Outcome != rundir.OutcomeOK {
		a.Error = resp.Status
	}
	if a.Outcome == rundir.OutcomeOK && a.Op == OpSend {
		if why := badSendAnswer(e.o.API, ans); why != "" {
			// The service may have acted, but this is not its answer: no acceptance.
			a.Outcome, a.Class = rundir.OutcomeUnknown, ClassBadAnswer
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
	if resp.StatusCode == http.StatusUnauthorized && c.tok != nil {
		c.tok.invalidate(bearer)
	}
	if resp.StatusCode == http.StatusTooManyRequests && c.lim != nil {
		if d, ok := parseRetryAfter(a.RetryAfter, time.Now()); ok {
			c.lim.block(time.Now().Add(d))
		}
	}
	return ans, resp.Header
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
			if d, ok := parseRetryAfter(a.RetryAfter, a.Sent); ok {
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
	case OpCheckStatus:
		r.Method, r.URL = http.MethodGet, e.statusURL+a.TxID
	case OpToken:
		r.URL = e.o.TokenURL
	case OpWebhook:
		r.URL = strings.TrimRight(e.o.BaseURL, "/") + "/api/v1/webhooks"
	}
	if method != "" {
		r.Method, r.URL = method, u
	}
	if err := e.o.Out.Record(a, r); err != nil {
		e.fail(err)
	}
}

// ClassBadAnswer is the class of a 2xx send answer whose body is not the
// API's answer (HTML from a proxy, invalid JSON, random bytes, no txId/state
// or notificationId): its outcome is unknown (the service may have acted) and
// it is not an acceptance.
const ClassBadAnswer = "bad_answer"

func codeClass(code int) (outcome, class string) {
	switch {
	case code >= 200 && code < 300:
		return rundir.OutcomeOK, "ok"
	case code == http.StatusTooManyRequests:
		return rundir.OutcomeFail, "http_429"
	case code >= 500:
		return rundir.OutcomeFail, "http_5xx"
	default:
		return rundir.OutcomeFail, "http_4xx"
	}
}

// errClass names a transport error: timeout, reset, conn (could not connect) or other.
func errClass(err error) string {
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial"):
		return "conn"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE):
		return "reset"
	default:
		return "other"
	}
}

// probe resends message m with the same body and externalId: once, then
// ProbeConcurrency times at once, and compares the notificationIds.
func (e *engine) probe(m *message, want string) {
	n := m.attempts
	one := func(kind string, k int) {
		a := e.attempt(m, OpSend, k)
		a.Probe = kind
		a.Intended = time.Now()
		ans, _ := e.exchange(e.halt, m.client, a, http.MethodPost, e.sendURL, m.body)
		e.prog.Probes.Add(1)
		if m.client.met != nil {
			m.client.met.m.probes.WithLabelValues(e.o.API).Inc()
		}
		if a.Outcome == rundir.OutcomeOK && ans.NotificationID != want {
			a.Mismatch = true
			e.prog.Mismatches.Add(1)
			if m.client.met != nil {
				m.client.met.m.mismatches.WithLabelValues(e.o.API).Inc()
			}
		}
		e.write(m.client, a)
	}
	if e.abort.Err() != nil {
		return
	}
	one(ProbeSequential, n+1)
	conc := e.o.ProbeConcurrency
	if conc <= 0 {
		conc = 2
	}
	var wg sync.WaitGroup
	for i := range conc {
		wg.Go(func() { one(ProbeConcurrent, n+2+i) })
	}
	wg.Wait()
}

// terminal reports whether a polled state ends the message, by the one
// end-of-message rule (rundir.Chain); *cur is the item the message is on, for
// a record without a channel.
func (e *engine) terminal(state, channel string, cur *int) bool {
	chain := rundir.ParseChain(e.o.Chain)
	i := chain.Item(channel, *cur)
	if chain.FailsOver(state, i) {
		*cur = max(*cur, i+1)
	}
	return chain.Ends(state, i)
}

// poll asks check-status for m every Interval until a terminal state or Until.
func (e *engine) poll(m *message, txID string) {
	p := e.o.Poll
	deadline := m.first.Add(p.Until)
	u := e.statusURL + url.PathEscape(txID)
	next := time.Now().Add(p.Interval)
	cur := 0
	for k := 1; ; k++ {
		if next.After(deadline) || !e.sleep(time.Until(next)) {
			return
		}
		a := e.attempt(m, OpCheckStatus, k)
		a.ExternalID = ""
		a.Intended = next
		a.TxID = txID
		ans, _ := e.exchange(e.abort, m.client, a, http.MethodGet, u, nil)
		if a.TxID == "" {
			a.TxID = txID
		}
		e.write(m.client, a)
		if a.Outcome == rundir.OutcomeOK && e.terminal(ans.State, ans.Channel, &cur) {
			return
		}
		next = next.Add(p.Interval)
		if now := time.Now(); next.Before(now) {
			next = now
		}
	}
}

// registerWebhooks registers WebhookURL for every client before the load.
func (e *engine) registerWebhooks() error {
	body := []byte(`{"url":` + strconv.Quote(e.o.WebhookURL) + `}`)
	u := strings.TrimRight(e.o.BaseURL, "/") + "/api/v1/webhooks"
	for _, c := range e.clients {
		m := &message{client: c}
		authRetried, retries := false, 0
		for n := 1; ; n++ {
			a := e.attempt(m, OpWebhook, n)
			a.Intended = time.Now()
			e.exchange(e.halt, c, a, http.MethodPost, u, body)
			e.write(c, a)
			if a.Outcome == rundir.OutcomeOK {
				break
			}
			// Retried like a send: a refused token once, the policy's codes and
			// timeouts. The registration is set-up, not load, and one webhook
			// per client makes it idempotent: 500, 503 and no answer (the codes
			// the seed says are safe to retry) are tried setupRetries times
			// even when the scenario retries nothing, so a fault meant for the
			// sends does not stop the run before its first one.
			var wait time.Duration
			if a.Code == http.StatusUnauthorized && !authRetried {
				authRetried = true
			} else if e.retryable(a) && retries < e.o.Retry.Max {
				retries++
				wait = e.backoff(retries)
			} else if setupRetryable(a) && retries < setupRetries {
				retries++
				wait = time.Duration(retries) * setupBackoff
			} else {
				return fmt.Errorf("%w: client %q: %s", ErrWebhook, c.ID, a.Error)
			}
			if e.pause(e.halt, wait, GaveUpBackoff) != "" {
				return fmt.Errorf("%w: client %q: %s", ErrWebhook, c.ID, a.Error)
			}
		}
	}
	return nil
}

// setupRetries and setupBackoff bound the tries of a webhook registration
// beyond the scenario's retry policy.
const (
	setupRetries = 3
	setupBackoff = 200 * time.Millisecond
)

// setupRetryable reports whether a set-up call's failure is one the seed says
// may be retried: 500, 503, or no answer.
func setupRetryable(a *rundir.Attempt) bool {
	return a.Code == http.StatusInternalServerError || a.Code == http.StatusServiceUnavailable ||
		a.Code == 0 && (a.Outcome == rundir.OutcomeUnknown || a.Class == "timeout" || a.Class == "reset")
}

// extras sends Options.Extra, each at began + At, until the run stops.
func (e *engine) extras(began time.Time) {
	xs := slices.Clone(e.o.Extra)
	slices.SortStableFunc(xs, func(a, b Extra) int { return cmp.Compare(a.At, b.At) })
	for i := range xs {
		x := &xs[i]
		at := began.Add(x.At)
		if d := time.Until(at); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-e.halt.Done():
				t.Stop()
				return
			}
		} else if e.halt.Err() != nil {
			return
		}
		e.wg.Add(1)
		go func() { defer e.wg.Done(); e.extra(x, at) }()
	}
}

// extra sends one extra request and records it (seq 0, its own op).
func (e *engine) extra(x *Extra, intended time.Time) {
	c := e.clients[0]
	if x.Client != "" {
		c = e.byID[x.Client]
	}
	a := &rundir.Attempt{API: e.o.API, Op: x.Op, Client: c.ID, Attempt: 1, Intended: intended}
	u := strings.TrimRight(e.o.BaseURL, "/") + x.Path
	var body io.Reader
	if len(x.Body) > 0 {
		body = bytes.NewReader(x.Body)
	}
	req, err := http.NewRequest(x.Method, u, body)
	if err != nil {
		a.Sent = time.Now()
		a.Outcome, a.Class, a.Error = rundir.OutcomeFail, "other", "build request: "+err.Error()
		e.writeAs(c, a, x.Method, u)
		return
	}
	for k, vs := range x.Header {
		req.Header[k] = slices.Clone(vs)
	}
	var b []byte
	if len(x.Body) > 0 {
		b = x.Body
	}
	e.exchangeReq(e.halt, c, a, x.Method, u, b, noSlot, req)
	e.writeAs(c, a, x.Method, u)
}

// tokenRecorder records the token requests of one client as attempts (op
// token). Nothing of the request or answer body is kept.
type tokenRecorder struct {
	e    *engine
	c    *clientState
	next http.RoundTripper
}

func (t *tokenRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	a := &rundir.Attempt{API: t.e.o.API, Op: OpToken, Client: t.c.ID, Attempt: 1, Intended: time.Now()}
	if req.ContentLength > 0 {
		a.BytesOut = req.ContentLength
	}
	a.Sent = time.Now()
	resp, err := t.next.RoundTrip(req)
	a.Latency = time.Since(a.Sent).Seconds()
	if err != nil {
		a.Outcome, a.Class, a.Error = rundir.OutcomeUnknown, errClass(err), "token request failed: "+errClass(err)
		t.e.write(t.c, a)
		return nil, err
	}
	a.Code = resp.StatusCode
	a.Outcome, a.Class = codeClass(resp.StatusCode)
	if a.Outcome != rundir.OutcomeOK {
		a.Error = resp.Status
	}
	a.BytesIn = max(resp.ContentLength, 0)
	t.e.write(t.c, a)
	return resp, nil
}
