package sim

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/internal/netguard"
	"github.com/msgload/msgload/rundir"
)

const (
	apiMessaging = rundir.APIMessaging
	apiNotify    = rundir.APINotify
)

// Fault names (metric label).
const (
	faultError500       = "error_500"
	faultError503       = "error_503"
	faultProcessed500   = "processed_then_500"
	faultProcessedReset = "processed_then_reset"
	faultLatency        = "latency"
)

// errClosed is returned by operations on a closed Server.
var errClosed = errors.New("sim: server closed")

// Server is one simulator: both APIs, the delivery engine and the truth.
type Server struct {
	cfg     Config
	met     *metrics
	truth   *truthRec
	limiter *limiter
	eng     *engine
	mux     *http.ServeMux
	signer  *signer
	jwtKey  []byte
	start   time.Time

	rngMu sync.Mutex
	rng   *mrand.Rand

	accounts map[string]*account
	profiles [6]channelProfile // by channel index; the built-in one when cfg has none
	clients  map[string]*Client

	// latestTok: each client's newest token's ID (notify.tokenRevokeOnIssue)
	tokMu     sync.Mutex
	latestTok map[string]string

	msgMu sync.RWMutex
	msgs  map[[16]byte]*message // in flight, or settled but not stored (settled.go)

	settled  *settledStore // settled messages' status records; nil: kept in msgs
	acctNums map[*account]uint16

	ntMu     sync.Mutex
	idem     map[idemKey]*idemEntry
	webhooks map[string]string

	dupMu sync.Mutex
	dups  map[dedupKey][16]byte // messaging.dedup: the first message of each account and trackData

	pendingMsg atomic.Int64
	pendingNt  atomic.Int64
	// owed: accepted messages and notifications not final yet, plus those
	// whose final callback has not had its last attempt (see Owed).
	owed atomic.Int64

	cbs *senders

	// late is how far behind its due time the engine event running now
	// started, and lag how far behind the delays it drew the status being
	// made now is, counting the earlier steps' lag (scheduler goroutine
	// only): a busy machine holds the scheduler up, and the truth records
	// it so that the report can tell the simulator's lateness from the
	// service's (TruthCallback.Due).
	late, lag time.Duration

	internMu sync.Mutex
	interned map[string]string

	closeOnce sync.Once
}

type account struct {
	Account
	channels uint8 // bit per channel index
	allow    []*net.IPNet
}

// New builds a Server from cfg and registers its metrics on reg. Close stops it.
func New(cfg Config, reg prometheus.Registerer) (*Server, error) {
	if errs := cfg.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", errConfig, errors.Join(errs...))
	}
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	met, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("register sim metrics: %w", err)
	}
	seed := cfg.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	now := time.Now()
	s := &Server{
		cfg:      cfg,
		met:      met,
		truth:    newTruth(cfg.RateLimit, cfg.TruthCap, now),
		limiter:  newLimiter(cfg.RateLimit.Requests, cfg.RateLimit.Window, cfg.RateLimit.Algorithm, now, cfg.RateLimit.Count429),
		start:    now,
		rng:      mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		accounts: map[string]*account{},
		clients:  map[string]*Client{},
		msgs:     map[[16]byte]*message{},
		idem:     map[idemKey]*idemEntry{},
		webhooks: map[string]string{},
		interned: map[string]string{},
		acctNums: map[*account]uint16{},
		jwtKey:   make([]byte, 32),
	}
	if _, err := rand.Read(s.jwtKey); err != nil {
		return nil, fmt.Errorf("draw token key: %w", err)
	}
	if cfg.Callbacks.SigningSecret != "" {
		if s.signer, err = newSigner(cfg.Callbacks.SigningSecret); err != nil {
			return nil, fmt.Errorf("%w: callbacks.signingSecret: %w", errConfig, err)
		}
	}
	defaults := DefaultConfig().Messaging.Profiles
	for i, ch := range allChannels {
		p, ok := cfg.Messaging.Profiles[ch]
		if !ok {
			p = defaults[ch]
		}
		s.profiles[i] = p
	}
	for i, a := range cfg.Messaging.Accounts {
		acc := &account{Account: a}
		if i <= math.MaxUint16 {
			s.acctNums[acc] = uint16(i)
		}
		for _, ch := range a.Channels {
			acc.channels |= 1 << chanIndex(ch)
		}
		for _, ip := range a.AllowIPs {
			n, _ := parseAllow(ip)
			acc.allow = append(acc.allow, n)
		}
		s.accounts[a.Login] = acc
	}
	for i := range cfg.Notify.Clients {
		c := &cfg.Notify.Clients[i]
		s.clients[c.ID] = c
		if c.WebhookURL != "" {
			s.webhooks[c.ID] = c.WebhookURL
		}
	}
	client := cfg.HTTPClient
	if client == nil {
		// The timeout bounds the dial and the wait for the answer's header,
		// without a timer per call (http.Client.Timeout would make one).
		client = netguard.Client(&http.Client{
			Transport: &http.Transport{
				Proxy:                 nil,
				DialContext:           (&net.Dialer{Timeout: cfg.Callbacks.Timeout, KeepAlive: 30 * time.Second}).DialContext,
				ResponseHeaderTimeout: cfg.Callbacks.Timeout,
				MaxIdleConns:          cfg.Callbacks.Senders * 2,
				MaxIdleConnsPerHost:   cfg.Callbacks.Senders,
				IdleConnTimeout:       90 * time.Second,
			},
		})
	}
	// Without the store (no temporary directory to write), settled messages
	// stay in memory for the retention, as they did before it.
	if s.settled, _ = newSettledStore(""); s.settled != nil {
		go s.writeSettled(s.settled)
	}
	s.cbs = newSenders(s, client, cfg.Callbacks.Senders)
	s.eng = newEngine(s.runEvent)
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+rundir.RouteSend, s.handleSend)
	mux.HandleFunc("GET "+rundir.RouteCheckStatus+"{txId}", s.handleCheckStatus)
	mux.HandleFunc("POST "+rundir.RouteToken, s.handleToken)
	mux.HandleFunc("POST "+rundir.RouteNotifications, s.handleNotification)
	mux.HandleFunc("POST "+rundir.RouteWebhooks, s.handleWebhook)
	mux.HandleFunc("GET "+rundir.RouteWebhooks, s.handleWebhook)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /sim/v1/truth", netguard.GuardHost(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Truth())
	}, s.cfg.ListenAddr))
	mux.HandleFunc("GET /sim/v1/pending", netguard.GuardHost(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]int{"pending": s.Pending(), "owed": s.Owed()})
	}, s.cfg.ListenAddr))
	s.mux = mux
}

// Handler serves both APIs, the token endpoint, /healthz and /sim/v1/truth.
// /metrics is the caller's (it owns the registry).
func (s *Server) Handler() http.Handler { return s.mux }

// Truth returns the ground truth so far (streaming, read back from
// truth.jsonl: for small truths and the read API).
func (s *Server) Truth() rundir.Truth { return s.truth.snapshot() }

// StreamTruth makes the simulator write its truth to a new file at path
// (rundir.TruthStreamFile: one rundir.TruthRecord a line) as the records
// become final, flushed at least every second, instead of keeping it: memory
// then holds only the messages in flight. Call it before the first request;
// Shutdown writes the end record and closes the file.
func (s *Server) StreamTruth(path string) error { return s.truth.streamTo(path) }

// Pending is the number of accepted messages and notifications whose final
// state has not been reached yet.
func (s *Server) Pending() int { return int(s.pendingMsg.Load() + s.pendingNt.Load()) }

// Owed is the number of accepted messages and notifications the receiver is
// still owed something for: their final status is not reached yet, or their
// final callback (messaging: the status change that ends the message;
// notify: the webhook) has not had its last attempt — held back by a callback
// delay or reorder, queued for a sender, in flight, or waiting for a retry.
// A duplicated final callback is owed until both copies are done; a dropped
// one, one given up after its last retry, and one with no URL to go to (no
// callback address, no webhook) owe nothing. When Owed is 0 every final
// callback the simulator will ever make has been answered or given up.
func (s *Server) Owed() int { return int(s.owed.Load()) }

// Close stops the delivery engine and waits for callbacks in flight, at most
// the callback timeout.
func (s *Server) Close() error {
	return s.Shutdown(context.Background())
}

// Shutdown is Close bounded by ctx as well.
func (s *Server) Shutdown(ctx context.Context) (err error) {
	s.closeOnce.Do(func() {
		s.eng.halt()
		s.cbs.halt() // the scheduler may be waiting for room in the senders' queue
		<-s.eng.exited
		s.cbs.wait(ctx, s.cfg.Callbacks.Timeout)
		s.notePending()
		err = s.truth.end()
		if s.settled != nil {
			s.settled.close()
		}
	})
	return err
}

// --- random draws (one generator, seeded, under a mutex) ---

func (s *Server) chance(p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.Float64() < p
}

func (s *Server) float() float64 {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	return s.rng.Float64()
}

// draw draws a delay from d.
func (s *Server) draw(d Delay) time.Duration {
	switch d.Dist {
	case "uniform":
		return d.Min + time.Duration(s.float()*float64(d.Max-d.Min))
	case "lognormal":
		s.rngMu.Lock()
		z := s.rng.NormFloat64()
		s.rngMu.Unlock()
		sigma := math.Log(float64(d.P95)/float64(d.Median)) / 1.6448536269514722
		v := float64(d.Median) * math.Exp(sigma*z)
		if v > float64(100*24*time.Hour) {
			v = float64(100 * 24 * time.Hour)
		}
		return time.Duration(v)
	default:
		return d.Median
	}
}

// pick draws one outcome by weight.
func (s *Server) pick(os []Outcome) Outcome {
	sum := 0.0
	for _, o := range os {
		sum += o.Weight
	}
	x := s.float() * sum
	for _, o := range os {
		if x < o.Weight {
			return o
		}
		x -= o.Weight
	}
	return os[len(os)-1]
}

// --- faults ---

type preFault int

const (
	noFault preFault = iota
	fault500
	fault503
	faultAfter500
	faultAfterReset
)

// drawFault draws the fault of one API request and applies added latency.
func (s *Server) drawFault() preFault {
	f := s.cfg.Faults
	if f.Latency > 0 && (f.LatencyShare == 0 || s.chance(f.LatencyShare)) {
		s.met.faults.WithLabelValues(faultLatency).Inc()
		time.Sleep(f.Latency)
	}
	if f.Error500+f.Error503+f.ProcessedThen500+f.ProcessedThenReset == 0 {
		return noFault
	}
	x := s.float()
	switch {
	case x < f.Error500:
		s.met.faults.WithLabelValues(faultError500).Inc()
		return fault500
	case x < f.Error500+f.Error503:
		s.met.faults.WithLabelValues(faultError503).Inc()
		return fault503
	case x < f.Error500+f.Error503+f.ProcessedThen500:
		return faultAfter500
	case x < f.Error500+f.Error503+f.ProcessedThen500+f.ProcessedThenReset:
		return faultAfterReset
	}
	return noFault
}

// afterFault applies a "processed, then …" fault; it reports whether it answered.
func (s *Server) afterFault(w http.ResponseWriter, f preFault, errBody func(int) any) bool {
	switch f {
	case faultAfter500:
		s.met.faults.WithLabelValues(faultProcessed500).Inc()
		writeJSON(w, http.StatusInternalServerError, errBody(http.StatusInternalServerError))
		return true
	case faultAfterReset:
		s.met.faults.WithLabelValues(faultProcessedReset).Inc()
		resetConn(w)
		return true
	}
	return false
}

// resetConn drops the connection without an answer (a TCP reset when it can).
func resetConn(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encode answer", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// observe records one answered request.
// observed is one API call as the simulator's metrics see it: what it was,
// when it began, the client who made it and the code it got (200 unless set).
type observed struct {
	s       *Server
	api, op string
	began   time.Time
	client  string
	code    int
}

// begin starts observing a call; its handler defers done.
func (s *Server) begin(api, op string) *observed {
	return &observed{s: s, api: api, op: op, began: time.Now(), code: http.StatusOK}
}

// done counts the call and its duration.
func (o *observed) done() { o.s.observe(o.api, o.op, o.code, o.client, o.began) }

func (s *Server) observe(api, op string, code int, client string, began time.Time) {
	s.met.request(api, op, code, client)
	s.met.duration.WithLabelValues(api, op).Observe(time.Since(began).Seconds())
}

// utc formats t as RFC 3339 UTC with fractional seconds (always 9 digits' worth, trimmed to millis at least).
func utc(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") }
