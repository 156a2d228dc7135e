package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// ShutdownTimeout bounds how long Serve waits for requests in flight when its
// context ends.
const ShutdownTimeout = 5 * time.Second

// Serve runs rec on ln until ctx ends, then stops taking connections, lets the
// requests in flight finish (at most ShutdownTimeout), and closes rec so every
// queued exchange is written and flushed.
//
// Connections that are open but have not started a request (a client's spare
// keep-alive dial) are closed at once: http.Server.Shutdown would otherwise
// count them as busy for 5 s, and the stop would time out with nothing in
// flight.
func Serve(ctx context.Context, ln net.Listener, rec *Recorder) error {
	var mu sync.Mutex
	fresh := map[net.Conn]bool{} // connections in StateNew
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 30 * time.Second,
		ConnState: func(c net.Conn, st http.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			if st == http.StateNew {
				fresh[c] = true
			} else {
				delete(fresh, c)
			}
		}}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }()
	// Until the listener is closed a spare connection may still arrive.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var shutErr error
wait:
	for {
		mu.Lock()
		for c := range fresh {
			c.Close()
		}
		mu.Unlock()
		select {
		case shutErr = <-shut:
			break wait
		case <-tick.C:
		}
	}
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
