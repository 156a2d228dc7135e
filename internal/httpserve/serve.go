package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/msgload/msgload/internal/shutdown"
)

// Served is an http.Server serving a listener in the background, from Start
// until Stop.
type Served struct {
	srv *http.Server
	tr  *shutdown.Tracker
	// failed is closed when Serve returned by itself (not because of Stop)
	// with err; done when it returned at all.
	failed, done chan struct{}
	err          error
}

// Start serves srv on ln in the background. ln is bound already, so an
// address error has come back to the caller before anything serves.
func Start(ln net.Listener, srv *http.Server) *Served {
	s := &Served{srv: srv, tr: shutdown.Track(srv), failed: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.err = err
			close(s.failed)
		}
	}()
	return s
}

// Failed is closed when serving ended by itself: the listener failed. Stop
// then returns that error.
func (s *Served) Failed() <-chan struct{} { return s.failed }

// Stop stops taking connections, closes those that never started a request
// at once (shutdown.Tracker), lets the requests in flight finish until ctx
// ends, and then closes what is left. It returns the first real error:
// serving's own failure ("serve: …") if it ended by itself, else the
// shutdown's ("shut down: …", wrapping ctx's error when requests were still
// in flight at its end). http.ErrServerClosed is not an error.
func (s *Served) Stop(ctx context.Context) error {
	err := s.tr.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close() // the bound is over: nothing outlives it
	}
	<-s.done
	if s.err != nil {
		return fmt.Errorf("serve: %w", s.err)
	}
	if err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}

// Serve serves srv on ln until ctx ends or serving fails, then stops it
// (Stop), letting requests in flight finish for at most bound, and returns
// Stop's error.
func Serve(ctx context.Context, ln net.Listener, srv *http.Server, bound time.Duration) error {
	s := Start(ln, srv)
	select {
	case <-ctx.Done():
	case <-s.Failed():
	}
	sctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	return s.Stop(sctx)
}
