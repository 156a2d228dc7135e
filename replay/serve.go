package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/msgload/msgload/internal/httpserve"
	"github.com/msgload/msgload/internal/shutdown"
)

// ShutdownTimeout bounds how long Serve waits for requests in flight when its
// context ends.
const ShutdownTimeout = 5 * time.Second

// Serve runs rec on ln until ctx ends, then stops taking connections, lets the
// requests in flight finish (at most ShutdownTimeout), and closes rec so every
// queued exchange is written and flushed. Connections that have not started a
// request (a client's spare keep-alive dial) are closed at once.
func Serve(ctx context.Context, ln net.Listener, rec *Recorder) error {
	// the proxy's write timeout covers the upstream's answer (httpserve.Proxy)
	srv := httpserve.New(rec, httpserve.Proxy)
	tr := shutdown.Track(srv)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	shutErr := tr.Shutdown(sctx)
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	closeErr := rec.Close()
	if serveErr != nil {
		return fmt.Errorf("serve recorder: %w", serveErr)
	}
	if shutErr != nil {
		return fmt.Errorf("stop recorder: %w", shutErr)
	}
	return closeErr
}
