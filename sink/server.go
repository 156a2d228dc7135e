package sink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/msgload/msgload/internal/shutdown"
	"github.com/msgload/msgload/rundir"
)

// Server timeouts: a slow client cannot pin a connection longer than these.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 120 * time.Second
	shutdownTimeout   = 10 * time.Second
)

// ServerConfig is what `msgload sink` runs: a standalone sink on Addr that logs
// to Dir/events.jsonl and serves /metrics from its own registry.
type ServerConfig struct {
	Addr    string // default 127.0.0.1:8082
	Dir     string // data directory; the log is Dir/events.jsonl
	Options        // LogPath is set from Dir when empty
	// Ready, when set, is called with the listening address once the port is open.
	Ready func(addr string)
}

// DefaultAddr is where a standalone sink listens: loopback unless told otherwise.
const DefaultAddr = "127.0.0.1:8082"

// Serve runs a standalone sink until ctx is done, then stops taking calls, lets
// those in flight finish, and closes the log (flush and fsync).
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
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s, err := New(cfg.Options, reg)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := s.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.Handle("/", s.Handler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	tr := shutdown.Track(srv)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := tr.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}
