package attack

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/internal/netguard"
	"github.com/msgload/msgload/rundir"
)

// scheduleSlots is the largest ring of intended send times shared by the
// pacer and the targeter; the ring must exceed the hits the pacer can run
// ahead of the targeter (at most one per vegeta worker blocked between the
// two), so it is sized by the workers (ringSize).
const scheduleSlots = 1 << 16

// ringSize is the ring for at most workers vegeta workers: a power of two
// at least twice as many, from 4096 up to scheduleSlots (unbounded workers).
// The ring of pointers is scanned by every GC: at the default 1024 messages
// in flight it is 4096 slots, not 65,536.
func ringSize(workers uint64) int64 {
	n := int64(4096)
	for n < scheduleSlots && uint64(n)/2 < workers {
		n <<= 1
	}
	return n
}

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
	deadlines *deadlines // the attempts' contexts, bound to timeout
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

	errOnce   sync.Once
	err       error
	stopSends context.CancelFunc // fail's stop of the sends

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
func Run(ctx context.Context, o Options) (RunResult, error) {
	return RunWithAbort(ctx, context.Background(), o)
}

// RunWithAbort is Run with a second context: when abort ends, requests in
// flight are cancelled and retries, probes and polls are abandoned.
func RunWithAbort(ctx, abort context.Context, o Options) (RunResult, error) {
	if err := o.check(); err != nil {
		return RunResult{}, err
	}
	// A failure of the run's own (fail) stops the sends as ctx does.
	ctx, stopSends := context.WithCancel(ctx)
	defer stopSends()
	e := newEngine(ctx, abort, &o)
	e.stopSends = stopSends
	defer e.haltCancel()
	defer e.deadlines.release()
	if o.API == rundir.APINotify && o.WebhookURL != "" {
		if err := e.registerWebhooks(); err != nil {
			return RunResult{Snapshot: e.prog.Snapshot()}, err
		}
	}
	maxWorkers := uint64(vegeta.DefaultMaxWorkers)
	if e.sem != nil {
		// The slots bound the hits; a few more workers cover those between
		// the end of a hit and their next tick.
		maxWorkers = uint64(cap(e.sem)) + 64
	}
	maxWorkers = orDefault(o.MaxWorkers, maxWorkers)
	n := ringSize(max(maxWorkers, o.Workers))
	e.ring, e.slots = make([]atomic.Int64, n), make([]atomic.Pointer[message], n)
	atk := vegeta.NewAttacker(
		vegeta.Client(&http.Client{Transport: e}),
		vegeta.Workers(orDefault(o.Workers, vegeta.DefaultWorkers)),
		vegeta.MaxWorkers(maxWorkers),
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
	// A count plan sends its Requests, late if it must: it ends by the
	// schedule (schedPacer), never by the clock, which would drop the hits
	// not yet sent when the target or the machine held the pacer back.
	du := o.Duration
	if p.counted() {
		du = 0
	}
	// No attack name: vegeta would put it in a header of every request (for
	// the engine to take out again) and in its results, which are dropped.
	for range atk.Attack(e.target, p, du, "") {
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
	res := RunResult{Start: start, End: end, Stopped: ctx.Err() != nil || e.maxed.Load(), Snapshot: e.prog.Snapshot()}
	return res, e.err
}

func orDefault(v, d uint64) uint64 {
	if v == 0 {
		return d
	}
	return v
}

func newEngine(stop, abort context.Context, o *Options) *engine {
	tr := netguard.Transport() // no environment proxy: it would get every secret
	conns := o.Connections
	if conns <= 0 {
		conns = vegeta.DefaultConnections
	}
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	sizeConnBuffers(tr)
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
	e.deadlines = newDeadlines(abort, e.timeout)
	if e.retryCap <= 0 {
		e.retryCap = 30 * time.Second
	}
	for _, c := range o.Retry.On {
		e.retryOn[c] = true
	}
	base := strings.TrimRight(o.BaseURL, "/")
	if o.API == rundir.APINotify {
		e.sendURL = base + rundir.RouteNotifications
	} else {
		e.sendURL = base + rundir.RouteSend
		e.statusURL = base + rundir.RouteCheckStatus
	}
	if m := o.Metrics; m != nil {
		e.inFlight = m.inFlight.WithLabelValues(o.API)
		e.planned = m.planned.WithLabelValues(o.API)
		e.lag = m.lag.WithLabelValues(o.API)
		e.retryAfter = m.retryAfter.WithLabelValues(o.API)
		e.late = m.late.WithLabelValues(o.API)
		e.capped = m.capped.WithLabelValues(o.API)
		e.durations = map[string]prometheus.Observer{}
		for _, op := range []string{OpSend, opCheckStatus, opWebhook, opToken, OpOther} {
			e.durations[op] = m.duration.WithLabelValues(o.API, op)
		}
	}
	for _, c := range o.Clients {
		cs := &clientState{Client: c, met: o.Metrics.forClient(o.API, c.ID),
			basic: "Basic " + base64.StdEncoding.EncodeToString([]byte(c.ID+":"+c.Secret))}
		if o.Limit.Mode == modeRespect {
			cs.lim = newWindowLimiter(o.Limit.Requests, o.Limit.Window)
		}
		if o.API == rundir.APINotify {
			cs.tok = newTokenCache(c, o.TokenURL, netguard.Client(&http.Client{Transport: &tokenRecorder{e: e, c: cs, next: rt}}))
			cs.tok.hold = o.HoldToken
		}
		e.clients = append(e.clients, cs)
		e.byID[c.ID] = cs
	}
	return e
}

// over reports whether ctx is done: a select on Done, which takes no lock
// once the channel exists (a cancel context's Err locks it), as every hit and
// attempt asks.
func over(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// fail keeps err, the first failure of the run's own (Run returns it), and
// stops the sends: a message whose body cannot be built or whose attempt
// cannot be recorded — a full disk — is not sent blind for the rest of the
// plan (retries and polls of what was sent go on until abort, unrecorded
// as well).
func (e *engine) fail(err error) {
	e.errOnce.Do(func() { e.err = err })
	if e.stopSends != nil {
		e.stopSends()
	}
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
		if g := s.e.o.Grace; g > 0 && s.e.o.Duration > 0 && !s.counted() {
			// A count plan's end is known only when its last hit left (loadEnded).
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
	if d := s.e.o.Duration; d > 0 && due > d+time.Microsecond {
		// The plan is the hits due by the profile's end (the last one at it;
		// a microsecond for the rounding of N / rate), as scenarios.Plan
		// counts them. vegeta's loop checks the clock before it asks, so
		// without this the hit due an interval after the end left too: one
		// more than planned whenever the check ran on time.
		if s.counted() {
			// The profile ends before the count (a duration or steps
			// shorter than Requests at their rates).
			s.e.loadEnded()
		}
		// A duration's plan ends at the start plus the duration whatever
		// the last hit's time (its end was set at the first hit).
		return 0, true
	}
	s.next = due
	if s.e.planned != nil {
		s.e.planned.Set(s.p.Rate(elapsed))
	}
	if s.e.sem == nil {
		s.e.ring[hits%uint64(len(s.e.ring))].Store(int64(due))
		return wait, false
	}
	// A slot before the hit leaves: the pacer waits for it here (vegeta's
	// loop then ticks at once), so the number of hits in flight never passes
	// the cap. A hit due while a slot was awaited is capped.
	if wait > 0 && !s.sleep(wait) {
		return 0, true
	}
	capped := due < s.freed
	select {
	case s.e.sem <- struct{}{}:
	default:
		capped = true
		var end <-chan time.Time
		if d := s.e.o.Duration; d > 0 && !s.counted() {
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
	s.e.ring[hits%uint64(len(s.e.ring))].Store(v)
	return 0, false
}

// counted reports whether the plan is a count (Requests): it sends every
// hit its schedule has before Duration, however late, and ends after the
// last; a plan of a duration alone ends at the duration by the clock.
func (s *schedPacer) counted() bool { return s.max > 0 }

// shortWait is the longest pacer wait slept through without watching for
// the stop (checked after): vegeta's own loop sleeps so between hits.
const shortWait = 10 * time.Millisecond

// sleep waits d, or less if the attack stops first; false if it stopped. A
// short wait is a plain sleep: a timer and a select per hit cost an
// allocation and a channel wake-up each at thousands of hits a second.
func (s *schedPacer) sleep(d time.Duration) bool {
	if d <= shortWait {
		time.Sleep(d)
		return !over(s.e.stop)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.e.stop.Done():
		return false
	}
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
	if over(e.stop) {
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
	due := e.ring[(k-1)%int64(len(e.ring))].Load()
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
			err := fmt.Errorf("%w: message %d: client %q is not among the clients", errOptions, seq, id)
			e.fail(err)
			return err
		}
	}
	slot, gaveUp, err := e.firstSlot(c)
	if err != nil {
		return err
	}
	first := time.Now()
	tag := rundir.Tag{Run: e.o.RunID, Part: e.o.Part, Seq: seq, First: first, Chain: e.o.Chain}
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
// map when the slot is still taken by a message sent a ring's length earlier.
func (e *engine) park(m *message) {
	if !e.slots[m.hit%int64(len(e.slots))].CompareAndSwap(nil, m) {
		e.spill.Store(m.hit, m)
	}
}

func (e *engine) unpark(seq int64) *message {
	slot := &e.slots[seq%int64(len(e.slots))]
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
	var fl *inFlight
	if e.wantsInFlight(m) {
		fl = e.startInFlight(m)
	}
	last, ans := e.send(m, req)
	probeID := "" // the id the key holds: the resends after the answer are compared with it
	if last.Outcome == rundir.OutcomeOK {
		probeID = e.answerID(ans)
	}
	if fl != nil {
		if id := fl.finish(e, m, ans.NotificationID); probeID == "" {
			probeID = id // a copy in flight got there first: the key's answer is its
		}
	}
	if last.Outcome == rundir.OutcomeOK && !m.repeat {
		e.prog.Accepted.Add(1)
		if e.o.Poll != nil && ans.TxID != "" {
			e.wg.Add(1)
			go func() { defer e.wg.Done(); e.poll(m, ans.TxID) }()
		}
	}
	if !m.repeat && e.o.Probes > 0 && probeID != "" && rundir.Probed(m.seq, e.o.Probes) {
		e.wg.Add(1)
		go func() { defer e.wg.Done(); e.probe(m, probeID) }()
	}
	code, failed := last.Code, last.Error
	doneAttempt(last)
	if code == 0 {
		return nil, errors.New(failed)
	}
	// vegeta's result of the hit is dropped (Run): no headers to hand over.
	return &http.Response{StatusCode: code, Status: strconv.Itoa(code), Body: http.NoBody,
		Request: req, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
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
		a := e.sendAttempt(m, num) // RoundTrip hands the last back; send the others
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
		if a.GaveUp != "" || a.Outcome == rundir.OutcomeOK || over(e.abort) {
			e.write(c, a)
			return a, ans
		}
		var wait time.Duration
		pastEnd := gaveUpBackoff
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
			if d, ok := rundir.ParseRetryAfter(hdr.Get("Retry-After"), time.Now()); ok && d >= wait {
				// Honoured in full (not cut at MaxWait), jittered upwards only.
				wait, pastEnd = e.retryAfterWait(d), gaveUpRetryAfter
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
		doneAttempt(a)
	}
}
