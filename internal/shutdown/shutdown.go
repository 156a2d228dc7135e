package shutdown

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Tracker remembers a server's connections that have not started a request.
type Tracker struct {
	srv   *http.Server
	mu    sync.Mutex
	fresh map[net.Conn]bool
}

// connState is the server's ConnState hook (Track sets it).
func (t *Tracker) connState(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st == http.StateNew {
		if t.fresh == nil {
			t.fresh = map[net.Conn]bool{}
		}
		t.fresh[c] = true
	} else {
		delete(t.fresh, c)
	}
}

// closeFresh closes the connections that have not started a request.
func (t *Tracker) closeFresh() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.fresh {
		c.Close()
		delete(t.fresh, c)
	}
}

// Track makes srv report its connections to a new Tracker, keeping any
// ConnState hook it had.
func Track(srv *http.Server) *Tracker {
	t := &Tracker{srv: srv}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		t.connState(c, st)
		if prev != nil {
			prev(c, st)
		}
	}
	return t
}

// Shutdown shuts the server down like its Shutdown(ctx), closing the
// connections that have not started a request (while the listener closes,
// one may still arrive, so until Shutdown returns).
func (t *Tracker) Shutdown(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- t.srv.Shutdown(ctx) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		t.closeFresh()
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
	}
}
