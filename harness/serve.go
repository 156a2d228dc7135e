package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/msgload/msgload/internal/httpserve"
	"github.com/msgload/msgload/internal/shutdown"
)

// server is an HTTP server on a listener that is bound before it serves, so an
// address error comes back at once.
type server struct {
	srv  *http.Server
	tr   *shutdown.Tracker
	ln   net.Listener
	done chan error
}

// listen binds addr and serves h on it in the background.
func listen(addr string, h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := &server{
		// read, write and idle timeouts a slow client cannot defeat
		srv:  httpserve.New(h, httpserve.Default),
		ln:   ln,
		done: make(chan error, 1),
	}
	s.tr = shutdown.Track(s.srv)
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// URL is the base URL of the server, http://host:port.
func (s *server) URL() string { return "http://" + s.ln.Addr().String() }

// Addr is the bound address.
func (s *server) Addr() string { return s.ln.Addr().String() }

// shutdown stops accepting, lets requests in flight finish (bounded by timeout),
// then closes what is left. Connections without a request do not hold it.
func (s *server) shutdown(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := s.tr.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close()
	}
	if serr := <-s.done; serr != nil && err == nil {
		err = serr
	}
	return err
}

// metricsHandler serves the registry with the OpenMetrics format available, so
// native histograms and exemplars reach a Prometheus that asks for them.
func metricsHandler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	return mux
}
