package sim

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/internal/httpserve"
)

// Issue 13: a client sending its request body one byte at a time kept a
// connection and a goroutine of the simulator as long as it liked. Served
// the way msgload serves it (httpserve), with a short read timeout, the
// send endpoints of both APIs cut it off at that bound.
func TestSlowClientCutOff(t *testing.T) {
	s, err := New(DefaultConfig(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	to := httpserve.Default
	to.Read = 300 * time.Millisecond
	srv := httpserve.New(s.Handler(), to)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	for _, path := range []string{"/messaging/v1/send", "/api/v1/notifications"} {
		t.Run(path, func(t *testing.T) {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			start := time.Now()
			// demo:demo, as the default messaging account; the notification
			// API answers 401 without a token, and still waits for the body
			io.WriteString(c, "POST "+path+" HTTP/1.1\r\nHost: sim\r\nAuthorization: Basic ZGVtbzpkZW1v\r\n"+
				"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
			stop := make(chan struct{})
			sent := make(chan struct{})
			go func() { // a byte every 100 ms: the body would take 100 s
				defer close(sent)
				for range 1000 {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()
			defer func() { close(stop); <-sent }()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = io.Copy(io.Discard, c) // until the server hangs up
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("still connected after 5 s")
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("cut off after %v, want about %v", d, to.Read)
			}
		})
	}
}
