package sink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/msgload/msgload/internal/httpserve"
	"github.com/msgload/msgload/rundir"
)

// serverTimeouts: a slow client cannot pin a connection longer than these.
// Read bounds the whole request, headers and body, from its first byte: a
// caller trickling its body (one byte a second) is cut off at 30 s, answered
// nothing and the call is not logged. Write bounds the request and its answer
// together (a reader of /v1/events that stops reading is cut off too).
var serverTimeouts = httpserve.Timeouts{
	ReadHeader: 5 * time.Second,
	Read:       30 * time.Second,
	Write:      WriteTimeout,
	Idle:       120 * time.Second,
}

// WriteTimeout is the sink server's write timeout (serverTimeouts).
const WriteTimeout = 30 * time.Second

// shutdownTimeout bounds the standalone sink's shutdown.
const shutdownTimeout = 10 * time.Second

// ServerConfig is what `msgload sink` runs: a standalone sink on Addr that logs
// to Dir/events.jsonl and serves /metrics from its own registry.
type ServerConfig struct {
	Addr    string // default 127.0.0.1:8082
	Dir     string // data directory; the log is Dir/events.jsonl
	Options        // LogPath is set from Dir when empty
	// Ready, when set, is called with the listening address once the port is open.
	Ready func(addr string)
	// Notify, when set, receives notices for the operator (never a secret).
	Notify func(msg string)

	timeouts httpserve.Timeouts // tests shorten them; zero fields take serverTimeouts
}

// or is d, or def when d is zero.
func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// DefaultAddr is where a standalone sink listens: loopback unless told otherwise.
const DefaultAddr = "127.0.0.1:8082"

// Serve runs a standalone sink until ctx is done, then stops taking calls, lets
// those in flight finish, and closes the log (flush and fsync).
//
// Beyond loopback the read API (GET /v1/events, /v1/stats) always needs a read
// token: with no Options.ReadToken, Serve takes the one in Dir/read-token,
// generating it (0600) the first time, and names the file through Notify.
// /metrics and /healthz stay open (counts and bounded labels only, for
// Prometheus and health probes).
func Serve(ctx context.Context, cfg ServerConfig) (err error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.LogPath == "" {
		if cfg.Dir == "" {
			return fmt.Errorf("%w: no data directory", ErrOptions)
		}
		cfg.LogPath = filepath.Join(cfg.Dir, rundir.EventsFile)
	}
	notify := cfg.Notify
	if notify == nil {
		notify = func(string) {}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer ln.Close() // when New fails; Shutdown closes it otherwise
	if !isLoopback(ln.Addr()) {
		if cfg.ReadToken == "" {
			dir := cfg.Dir
			if dir == "" {
				dir = filepath.Dir(cfg.LogPath)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("create data directory: %w", err)
			}
			tok, path, err := ensureReadToken(dir)
			if err != nil {
				return err
			}
			cfg.ReadToken = tok
			notify(fmt.Sprintf("listening beyond loopback: the read API (/v1/events, /v1/stats) needs \"Authorization: Bearer <token>\"; the token is in %s (set MSGLOAD_SINK_READ_TOKEN to choose it)", path))
		}
		if !cfg.Auth.Enabled() {
			notify("warning: listening beyond loopback with no authentication of callbacks: anyone who reaches it can post events")
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if cfg.ListenAddr == "" {
		cfg.ListenAddr = cfg.Addr // the read API answers to this Host too
	}
	s, err := New(cfg.Options, reg)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.Handle("/", s.Handler())
	t, d := cfg.timeouts, serverTimeouts
	srv := httpserve.New(mux, httpserve.Timeouts{
		ReadHeader: or(t.ReadHeader, d.ReadHeader),
		Read:       or(t.Read, d.Read),
		Write:      or(t.Write, d.Write),
		Idle:       or(t.Idle, d.Idle),
	})
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr().String()) // bound: a call waits in the backlog until Serve accepts it
	}
	err = httpserve.Serve(ctx, ln, srv, shutdownTimeout)
	if errors.Is(err, context.DeadlineExceeded) {
		// calls still in flight at the bound: not the sink's failure (their
		// events are either committed or not acknowledged)
		return nil
	}
	return err
}
