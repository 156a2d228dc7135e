package sink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
)

// DefaultMaxBody is the default body size limit.
const DefaultMaxBody = 1 << 20

// Errors of New.
var ErrOptions = errors.New("bad sink options")

// Options configures a Sink. Packages receive it filled; the sink reads no
// environment or flags itself.
type Options struct {
	LogPath string    // events.jsonl to append to (created if missing; a restarted sink appends)
	Fsync   FsyncMode // batch (default, group commit), always, none
	RunID   string    // if set, a tag of another run counts as unmatched; empty: any msgload tag matches
	Part    string    // with RunID: the part of a run with parts (rundir.Tag.Part); a tag of another part counts as unmatched
	MaxBody int64     // body size limit in bytes; default DefaultMaxBody
	Auth    Auth      // optional authentication of calls
	// ReadToken, when set, is the bearer token GET /v1/events and /v1/stats
	// require ("Authorization: Bearer <token>"); empty leaves them open (as an
	// embedded sink on loopback has them). Serve sets one beyond loopback.
	ReadToken string
	// ListenAddr is the address the sink was told to listen on (Serve sets
	// it): with no ReadToken the read API answers only to a Host that is a
	// loopback name or this address, so a DNS-rebinding page cannot read it.
	ListenAddr string
	// MaxTracked bounds the messages the correlation table remembers (default
	// DefaultMaxTracked); past it the oldest are forgotten, a generation at a
	// time (a quarter of the cap, at most 16,384: table.go), and a later event
	// of a forgotten message is taken as a first arrival.
	MaxTracked int
	// Fault makes the sink answer a share of valid calls with another status or
	// after a delay, so the service retries on purpose; such events are logged
	// with Answered or Delayed set, and the service's next arrival of the same
	// (message, state) is redelivered on request (Stats.Redelivered), not a
	// duplicate of the service's.
	Fault Fault
	// Now is the clock (tests); default time.Now.
	Now func() time.Time

	// WrapLog, when set (tests only; nil in production), puts a file that
	// fails on purpose between the log and its *os.File: the sink's own tests
	// and, through harness.Options.SinkWrapLog, a whole run's embedded sink
	// on a failing disk. The log calls it once, with the opened file.
	WrapLog func(*os.File) LogFile
}

// Fault is a deliberate misbehaviour of the sink (DESIGN: make the service retry
// on purpose and observe its retry schedule).
type Fault struct {
	Share float64       // 0..1: the share of valid calls it applies to
	Code  int           // status to answer instead of 200 (0: 200, only delayed)
	Delay time.Duration // wait before answering (after the event is logged)
	// RetryAfter, with a Code, is sent as Retry-After (whole seconds, rounded
	// up): a 429 or 503 that tells the sender when to come back, to see
	// whether it honours it.
	RetryAfter time.Duration
	// PerMessage draws once per message (its correlation key) instead of per
	// call, and every arrival of a chosen message gets the fault: the
	// sender's whole retry schedule, up to its giving up, is in the log
	// (msgload characterise's callback probes). Incoming messages are still
	// drawn per call.
	PerMessage bool
	// Pick decides per call, or per message with PerMessage (tests, and a
	// characterisation choosing every other message); default a uniform
	// draw against Share.
	Pick func() bool
}

func (f Fault) active() bool { return f.Share > 0 && (f.Code != 0 || f.Delay > 0) }

// Stats are the sink's counts so far. Every field counts events written to the log.
type Stats struct {
	Events       int64 `json:"events"` // lines written to the log
	Callbacks    int64 `json:"callbacks"`
	Incoming     int64 `json:"incoming"`
	Webhooks     int64 `json:"webhooks"`
	Malformed    int64 `json:"malformed"`
	Unauthorized int64 `json:"unauthorized"`
	TooLarge     int64 `json:"too_large"` // bodies over MaxBody (logged as malformed too)
	Duplicates   int64 `json:"duplicates"`
	// Redelivered counts second arrivals of a (message, state) whose previous
	// arrival the sink refused or held on purpose (Options.Fault): the service
	// retried because the sink asked it to, so they are not Duplicates.
	Redelivered int64 `json:"redelivered"`
	Unmatched   int64 `json:"unmatched"`
	// TerminalMessages counts distinct messages (txId; tagged externalId, or notificationId)
	// that reached a final state.
	TerminalMessages int64 `json:"terminal_messages"`
	// TerminalMatched is the part of TerminalMessages whose terminal event carried
	// a tag of this run (of any run when Options.RunID is empty).
	TerminalMatched int64 `json:"terminal_matched"`
	FailoverSteps   int64 `json:"failover_steps"`
	WriteErrors     int64 `json:"write_errors"` // events that could not be written (answered 500)
	Evicted         int64 `json:"evicted"`      // messages forgotten by the bounded correlation table
	Faulted         int64 `json:"faulted"`      // calls answered by Options.Fault
}

type counters struct {
	events, callbacks, incoming, webhooks, malformed, unauthorized, tooLarge,
	duplicates, redelivered, unmatched, terminal, terminalMatched, failover, writeErrors, faulted atomic.Int64
}

// Sink receives callbacks, incoming messages and webhooks. It is safe for
// concurrent use; Close it to flush the log.
type Sink struct {
	opts  Options
	log   *eventLog
	met   *metrics
	auth  *authenticator
	tab   *table
	c     counters
	now   func() time.Time
	bufs  sync.Pool
	notif statusBits
}

// New opens the event log and registers the sink's metrics on reg.
func New(opts Options, reg prometheus.Registerer) (*Sink, error) {
	if opts.LogPath == "" {
		return nil, fmt.Errorf("%w: LogPath is empty", ErrOptions)
	}
	mode, err := ParseFsyncMode(string(opts.Fsync))
	if err != nil {
		return nil, err
	}
	opts.Fsync = mode
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if f := opts.Fault; f.Share < 0 || f.Share > 1 || f.Delay < 0 || f.Code != 0 && (f.Code < 100 || f.Code > 599) || f.RetryAfter < 0 || f.RetryAfter > 0 && f.Code == 0 {
		return nil, fmt.Errorf("%w: fault share must be 0..1, code 100..599, delay ≥ 0, a Retry-After only with a code", ErrOptions)
	}
	if opts.Fault.Pick == nil {
		share := opts.Fault.Share
		opts.Fault.Pick = func() bool { return rand.Float64() < share }
	}
	if opts.RunID != "" && !rundir.ValidRunID(opts.RunID) {
		return nil, fmt.Errorf("%w: run id %q", ErrOptions, opts.RunID)
	}
	au, err := newAuthenticator(opts.Auth)
	if err != nil {
		return nil, err
	}
	if err := checkReadToken(opts); err != nil {
		return nil, err
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	met, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("register sink metrics: %w", err)
	}
	if dir := filepath.Dir(opts.LogPath); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create event log directory: %w", err)
		}
	}
	lg, err := openLog(opts.LogPath, opts.Fsync, met.writeDur, met.batchSize, opts.WrapLog)
	if err != nil {
		return nil, err
	}
	s := &Sink{opts: opts, log: lg, met: met, auth: au, tab: newTable(opts.MaxTracked), now: opts.Now}
	if s.now == nil {
		s.now = time.Now
	}
	s.bufs.New = func() any { return new(bytes.Buffer) }
	return s, nil
}

// Close writes what is queued, fsyncs and closes the log, and closes the
// correlation table's spill file. Calls arriving after Close are answered 503.
func (s *Sink) Close() error {
	err := s.log.close()
	s.tab.close()
	return err
}

// Stats returns the counts so far.
func (s *Sink) Stats() Stats {
	return Stats{
		Events:           s.c.events.Load(),
		Callbacks:        s.c.callbacks.Load(),
		Incoming:         s.c.incoming.Load(),
		Webhooks:         s.c.webhooks.Load(),
		Malformed:        s.c.malformed.Load(),
		Unauthorized:     s.c.unauthorized.Load(),
		TooLarge:         s.c.tooLarge.Load(),
		Duplicates:       s.c.duplicates.Load(),
		Redelivered:      s.c.redelivered.Load(),
		Unmatched:        s.c.unmatched.Load(),
		TerminalMessages: s.c.terminal.Load(),
		TerminalMatched:  s.c.terminalMatched.Load(),
		FailoverSteps:    s.c.failover.Load(),
		WriteErrors:      s.c.writeErrors.Load(),
		Evicted:          int64(s.evicted()),
		Faulted:          s.c.faulted.Load(),
	}
}

func (s *Sink) evicted() uint64 {
	s.tab.mu.Lock()
	defer s.tab.mu.Unlock()
	return s.tab.evicted
}

// Handler serves POST /callback, /incoming, /webhook; GET /healthz, /v1/events and
// /v1/stats (these two behind Options.ReadToken when set). /metrics is left to
// the caller, who owns the registry.
func (s *Sink) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(rundir.SinkCallback, s.receive(rundir.SinkCallback, rundir.APIMessaging))
	mux.HandleFunc(rundir.SinkIncoming, s.receive(rundir.SinkIncoming, rundir.APIMessaging))
	mux.HandleFunc(rundir.SinkWebhook, s.receive(rundir.SinkWebhook, rundir.APINotify))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if why := s.log.unhealthy(); why != "" {
			// The log cannot take calls (a cut back failed, a write failed or
			// is stuck): let a probe take the sink out of service.
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, why+"\n")
			return
		}
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /v1/events", s.readAuth("/v1/events", s.serveEvents))
	mux.HandleFunc("GET /v1/stats", s.readAuth("/v1/stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s.Stats())
	}))
	return mux
}

// outcome is what one call turned into, for counting after it is on disk.
type outcome struct {
	duplicate, unmatched, newTerminal bool
	// provoke: the sink answers this call with its fault (a refusal or a
	// delay), so the service may send it again; refuse: that fault is a
	// refusal; redelivered: this call is such a second arrival, accepted.
	provoke, refuse, redelivered bool
	steps                        [][2]string
	latency                      float64
	hasLatency                   bool
	stateLabel, channelLabel     string
	evicted                      int // old messages the table forgot to make room for this one
	// What the call taught the correlation table, undone when it could not
	// be logged (forget).
	api, key string
	sent     int64 // the millisecond its tag says the message was first sent (0: untagged)
	setSeen  uint64
	setSteps uint8
}

func (s *Sink) receive(route, api string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		received := s.now().UTC()
		if r.Method != http.MethodPost {
			s.met.refused.WithLabelValues(route, refusedMethod).Inc()
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		buf := s.bufs.Get().(*bytes.Buffer)
		buf.Reset()
		defer s.putBuf(buf)
		if !s.readBody(w, r, buf, route, api, received) {
			return
		}
		body := buf.Bytes()
		ev := rundir.Event{Route: route, ReceivedAt: received, API: api}
		payload := s.bufs.Get().(*bytes.Buffer)
		defer s.putBuf(payload)
		setPayload(&ev, body, payload)

		if aerr := s.auth.check(r, body); aerr != nil {
			s.refuseUnauthorized(w, &ev, aerr)
			return
		}

		// The fault is drawn in correlation (drawFault), before the table
		// marks what the sink asked the service to send again.
		var out outcome
		if err := s.correlate(&ev, body, &out); err != nil {
			s.refuseMalformed(w, &ev, err)
			return
		}
		faulted := out.provoke
		ev.Sig = s.signature(r, body, received)
		if faulted && s.opts.Fault.Code != 0 {
			ev.Answered = s.opts.Fault.Code
		}
		if faulted && s.opts.Fault.Delay > 0 {
			ev.Delayed = s.opts.Fault.Delay.Seconds()
		}
		if !s.write(w, &ev, &out) {
			s.forget(&out)
			return
		}
		s.count(&ev, &out)
		s.answer(w, r, &ev, faulted)
	}
}

// putBuf returns a buffer to the pool unless a large body grew it.
func (s *Sink) putBuf(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		s.bufs.Put(b)
	}
}

// readBody reads the request's body into buf, at most MaxBody bytes: a
// larger one is logged as malformed (too_large) and refused with 413, a body
// cut off is refused with 400; false when the call is answered so.
func (s *Sink) readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer, route, api string, received time.Time) bool {
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		s.met.refused.WithLabelValues(route, refusedTooLarge).Inc()
		ev := rundir.Event{Kind: rundir.KindMalformed, Route: route, ReceivedAt: received, API: api,
			Reason: fmt.Sprintf("too_large: body larger than %d bytes", s.opts.MaxBody)}
		if s.write(w, &ev, nil) {
			s.c.tooLarge.Add(1)
			s.c.malformed.Add(1)
			s.met.malformed.WithLabelValues(route).Inc()
			s.met.events.WithLabelValues(api, rundir.KindMalformed, "none", "none").Inc()
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		}
		return false
	case err != nil:
		// The client went away or timed out mid-body: nothing complete arrived.
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return false
	}
	return true
}

// refuseUnauthorized logs ev as unauthorized (aerr says why) and answers 401.
func (s *Sink) refuseUnauthorized(w http.ResponseWriter, ev *rundir.Event, aerr error) {
	ev.Kind = rundir.KindUnauthorized
	ev.Reason = aerr.Error()
	s.met.refused.WithLabelValues(ev.Route, refusedAuth).Inc()
	if s.write(w, ev, nil) {
		s.c.unauthorized.Add(1)
		s.met.unauthorized.WithLabelValues(ev.Route).Inc()
		s.met.events.WithLabelValues(ev.API, rundir.KindUnauthorized, "none", "none").Inc()
		w.Header().Set("WWW-Authenticate", `Basic realm="msgload sink"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}
}

// correlate finds what ev (body) answers, by its route.
func (s *Sink) correlate(ev *rundir.Event, body []byte, out *outcome) error {
	switch ev.Route {
	case rundir.SinkCallback:
		return s.correlateCallback(ev, body, out)
	case rundir.SinkIncoming:
		return s.correlateIncoming(ev, body, out)
	default:
		return s.correlateWebhook(ev, body, out)
	}
}

// refuseMalformed logs ev as malformed (err says why) and answers 400.
func (s *Sink) refuseMalformed(w http.ResponseWriter, ev *rundir.Event, err error) {
	ev.Kind = rundir.KindMalformed
	ev.Reason = err.Error()
	ev.Corr = nil
	if s.write(w, ev, nil) {
		s.c.malformed.Add(1)
		s.met.malformed.WithLabelValues(ev.Route).Inc()
		s.met.events.WithLabelValues(ev.API, rundir.KindMalformed, "none", "none").Inc()
		http.Error(w, ev.Reason, http.StatusBadRequest)
	}
}

// answer answers a logged call: 200, or as the drawn fault says (held for
// its delay, then its code).
func (s *Sink) answer(w http.ResponseWriter, r *http.Request, ev *rundir.Event, faulted bool) {
	if !faulted {
		w.WriteHeader(http.StatusOK)
		return
	}
	s.c.faulted.Add(1)
	if d := s.opts.Fault.Delay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	if ev.Answered != 0 {
		if ra := s.opts.Fault.RetryAfter; ra > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(ra.Seconds())), 10))
		}
		http.Error(w, "refused on purpose (sink fault injection)", ev.Answered)
	} else {
		w.WriteHeader(http.StatusOK)
	}
}

// setPayload keeps the body as received: as compact JSON (into scratch) when it
// is JSON, else as text.
func setPayload(ev *rundir.Event, body []byte, scratch *bytes.Buffer) {
	if len(body) == 0 {
		return
	}
	scratch.Reset()
	if json.Compact(scratch, body) == nil {
		ev.Payload = json.RawMessage(scratch.Bytes())
	} else {
		ev.Raw = string(body)
	}
}

// linePool holds encoded-line buffers (the writer is done with a line once append returns).
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// write appends ev to the log and reports whether it is there; when it is not,
// the call is answered 500 (503 after Close, or when the log did not take
// it in appendWait: stalled storage) so the service retries.
func (s *Sink) write(w http.ResponseWriter, ev *rundir.Event, out *outcome) bool {
	lp := linePool.Get().(*[]byte)
	line := appendEvent((*lp)[:0], ev)
	err := s.log.append(line)
	if cap(line) <= 64<<10 && !errors.Is(err, errLogStalled) { // a stalled writer may still read line
		*lp = line[:0]
		linePool.Put(lp)
	}
	if err != nil {
		s.c.writeErrors.Add(1)
		switch {
		case errors.Is(err, errClosed):
			s.met.notWritten.WithLabelValues(notWrittenClosed).Inc()
			http.Error(w, "sink closed", http.StatusServiceUnavailable)
		case errors.Is(err, errLogStalled):
			s.met.notWritten.WithLabelValues(notWrittenStalled).Inc()
			http.Error(w, "event log stalled: try again", http.StatusServiceUnavailable)
		default:
			s.met.notWritten.WithLabelValues(notWrittenFailed).Inc()
			http.Error(w, "event log write failed", http.StatusInternalServerError)
		}
		return false
	}
	s.c.events.Add(1)
	return true
}

// forget undoes what a call answered 5xx taught the correlation table: the
// event is not in the log, so the service's retry is the first arrival a
// reader of the log sees, and the sink takes it as one too (latency point,
// not a duplicate; the failover step and terminal state counted then).
func (s *Sink) forget(out *outcome) {
	if out.key == "" || out.setSeen == 0 && out.setSteps == 0 && !out.newTerminal {
		return
	}
	s.tab.undo(out.api, out.key, out.sent, out.setSeen, out.setSteps, out.newTerminal)
}

// count updates counters and metrics for a valid event now on disk.
func (s *Sink) count(ev *rundir.Event, out *outcome) {
	switch ev.Kind {
	case rundir.KindCallback:
		s.c.callbacks.Add(1)
	case rundir.KindIncoming:
		s.c.incoming.Add(1)
		s.met.incoming.WithLabelValues(ev.Corr.Channel).Inc()
	case rundir.KindWebhook:
		s.c.webhooks.Add(1)
	}
	s.met.events.WithLabelValues(ev.API, ev.Kind, out.stateLabel, out.channelLabel).Inc()
	if out.duplicate {
		s.c.duplicates.Add(1)
		s.met.duplicates.WithLabelValues(ev.API).Inc()
	}
	if out.redelivered {
		s.c.redelivered.Add(1)
		s.met.redelivered.WithLabelValues(ev.API).Inc()
	}
	if out.unmatched {
		s.c.unmatched.Add(1)
		s.met.unmatched.WithLabelValues(ev.API).Inc()
	}
	if out.newTerminal {
		s.c.terminal.Add(1)
		if !out.unmatched {
			s.c.terminalMatched.Add(1)
		}
	}
	for _, st := range out.steps {
		s.c.failover.Add(1)
		s.met.failover.WithLabelValues(st[0], st[1]).Inc()
	}
	if out.hasLatency {
		s.met.latency.WithLabelValues(ev.API, out.channelLabel, out.stateLabel).Observe(max(out.latency, 0))
	}
	if out.evicted > 0 {
		s.met.evicted.Add(float64(out.evicted))
	}
}
