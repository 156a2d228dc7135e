package httpserve

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

func serve(t *testing.T, h http.Handler, to Timeouts) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(h, to)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// closedWithin reads c until it is closed and says how long that took; it
// fails the test if that takes longer than limit.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration, start time.Time) time.Duration {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection still open after %v", limit)
	}
	return time.Since(start)
}

// Every field reaches the server.
func TestNewSetsEveryTimeout(t *testing.T) {
	for _, to := range []Timeouts{Default, Proxy} {
		s := New(http.NotFoundHandler(), to)
		if s.ReadHeaderTimeout <= 0 || s.ReadTimeout <= 0 || s.WriteTimeout <= 0 || s.IdleTimeout <= 0 {
			t.Fatalf("%+v", s)
		}
		if s.ReadHeaderTimeout > s.ReadTimeout || s.WriteTimeout < s.ReadTimeout {
			t.Fatalf("header timeout above read, or write below read: %+v", to)
		}
	}
	if Proxy.Write <= ProxyUpstream {
		t.Fatal("the proxy's write timeout leaves no time after the upstream's answer")
	}
}

// A client sending its body a byte at a time, a client that never sends a
// request and one that keeps an idle connection are all cut off at their bound.
func TestSlowClientsCutOff(t *testing.T) {
	to := Timeouts{ReadHeader: 200 * time.Millisecond, Read: 300 * time.Millisecond, Write: time.Second, Idle: 200 * time.Millisecond}
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}), to)

	t.Run("slow body", func(t *testing.T) {
		// before the dial: the server's read deadline runs from after its
		// accept, which a start taken after Dial returns can follow
		start := time.Now()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
		done := make(chan struct{})
		go func() { // one byte every 50 ms, until the server hangs up
			defer close(done)
			for range 100 {
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		if d := closedWithin(t, c, 3*time.Second, start); d < to.Read {
			t.Fatalf("closed after %v, before the read timeout", d)
		}
		c.Close()
		<-done
	})
	t.Run("no request", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET / HTTP/1.1\r\n") // headers never end
		closedWithin(t, c, 3*time.Second, time.Now())
	})
	t.Run("idle", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		closedWithin(t, c, 3*time.Second, time.Now())
	})
}
