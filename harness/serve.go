package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/msgload/msgload/internal/httpserve"
)

// server is an HTTP server on a listener that is bound before it serves, so an
// address error comes back at once.
type server struct {
	sv *httpserve.Served
	ln net.Listener
}

// listen binds addr and serves h on it in the background.
func listen(addr string, h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	// read, write and idle timeouts a slow client cannot defeat
	return &server{sv: httpserve.Start(ln, httpserve.New(h, httpserve.Default)), ln: ln}, nil
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
	return s.sv.Stop(ctx)
}

// metricsHandler serves the registry with the OpenMetrics format available, so
// native histograms and exemplars reach a Prometheus that asks for them.
func metricsHandler(g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	return mux
}

// listenMetrics listens on o.MetricsAddr; when that is a busy default
// (o.MetricsFallback), on a free port of the same host instead, said loudly:
// a Prometheus scraping the default does not see this run.
func listenMetrics(o Options, h http.Handler) (*server, error) {
	srv, err := listen(o.MetricsAddr, h)
	if err == nil || !o.MetricsFallback || !errors.Is(err, syscall.EADDRINUSE) {
		return srv, err
	}
	host, _, serr := net.SplitHostPort(o.MetricsAddr)
	if serr != nil {
		return nil, err
	}
	srv, ferr := listen(net.JoinHostPort(host, "0"), h)
	if ferr != nil {
		return nil, err
	}
	fmt.Fprintf(o.Stderr, "msgload: WARNING: the default metrics address %s is busy (another process holds it); serving /metrics on %s instead — a Prometheus scraping %s does not see this run (set --metrics-addr to choose)\n",
		o.MetricsAddr, srv.Addr(), o.MetricsAddr)
	return srv, nil
}
