package httpserve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// get sends GET / to addr and sends its body, or the error, on the channel.
func get(addr string) <-chan string {
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + addr)
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		answer <- string(b)
	}()
	return answer
}

// blocking is a handler that tells when a request started and answers "done"
// when release is closed.
func blocking() (h http.Handler, started <-chan struct{}, release chan struct{}) {
	st := make(chan struct{}, 1)
	release = make(chan struct{})
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st <- struct{}{}
		<-release
		io.WriteString(w, "done")
	})
	return h, st, release
}

// Serve returns nil once ctx ends and the request in flight was answered.
func TestServeFinishesRequestInFlight(t *testing.T) {
	h, started, release := blocking()
	ln := listenLoopback(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, New(h, Default), 5*time.Second) }()
	answer := get(ln.Addr().String())
	<-started
	cancel()
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with a request in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if got := <-answer; got != "done" {
		t.Errorf("the request in flight got %q", got)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("still accepting after Serve returned")
	}
}

// failingListener accepts nothing: Accept fails at once with a permanent error.
type failingListener struct {
	net.Listener
	err error
}

func (l failingListener) Accept() (net.Conn, error) { return nil, l.err }

// A listener's error ends Serve before ctx does, and is returned.
func TestServeReturnsListenerError(t *testing.T) {
	boom := errors.New("accept: boom")
	ln := failingListener{Listener: listenLoopback(t), err: boom}
	defer ln.Listener.Close()
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), ln, New(http.NotFoundHandler(), Default), 5*time.Second) }()
	select {
	case err := <-done:
		if !errors.Is(err, boom) || err.Error() != "serve: accept: boom" {
			t.Fatalf("Serve = %v, want serve: %v", err, boom)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return on the listener's error")
	}
}

// A connection that never sent a request does not hold the shutdown (net/http
// would wait 5 s on it).
func TestServeDoesNotWaitOnFreshConnection(t *testing.T) {
	ln := listenLoopback(t)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, New(http.NotFoundHandler(), Default), 10*time.Second) }()
	spare, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer spare.Close()
	time.Sleep(100 * time.Millisecond) // accepted: StateNew
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("shutdown took %v", d)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the shutdown waits on a connection that never sent a request")
	}
	// the server closed it
	spare.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := spare.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the fresh connection: read %v, want EOF", err)
	}
}

// A request still in flight when the bound ends is cut off, and the error
// says the bound passed.
func TestStopBoundCutsOff(t *testing.T) {
	h, started, release := blocking()
	defer close(release)
	ln := listenLoopback(t)
	s := Start(ln, New(h, Default))
	answer := get(ln.Addr().String())
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := s.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != "shut down: context deadline exceeded" {
		t.Fatalf("Stop = %v, want shut down: %v", err, context.DeadlineExceeded)
	}
	select {
	case got := <-answer:
		if got == "done" {
			t.Fatal("the request was answered although the handler never returned")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the connection of the request in flight is still open after Stop")
	}
	select {
	case <-s.Failed():
		t.Error("Failed is closed after a Stop")
	default:
	}
}
