package sink

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// BenchmarkIngestLean is BenchmarkIngest with a lean load generator: each of
// the 128×GOMAXPROCS callers owns one keep-alive connection and writes its
// POSTs as bytes, reading only the status line and Content-Length of each
// answer. net/http's client costs about as much CPU per call as the server
// (it is half the profile of BenchmarkIngest on 2 cores, where the caller and
// the sink share the cores); a real service calls from other machines, so
// this measures more of the sink and less of the caller. The bare handler and
// the sink run under the same load, in one run.
func BenchmarkIngestLean(b *testing.B) {
	benchIngest(b, []FsyncMode{FsyncBatch, fsyncNone}, benchLean)
}

func benchLean(b *testing.B, h http.Handler) {
	benchPosts(b, h, func(srv *httptest.Server) (caller, func(), error) {
		c, err := dialLean(srv.Listener.Addr().String())
		if err != nil {
			return nil, nil, err
		}
		return func(body []byte) (int, error) { return c.post("/callback", body) }, func() { c.Close() }, nil
	})
}

// leanConn is one HTTP/1.1 keep-alive connection that posts JSON and reads
// answers without a body (the sink's 2xx and the bare handler's 200).
type leanConn struct {
	net.Conn
	host string
	br   *bufio.Reader
	buf  []byte
}

func dialLean(addr string) (*leanConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &leanConn{Conn: c, host: addr, br: bufio.NewReaderSize(c, 4096), buf: make([]byte, 0, 2048)}, nil
}

func (c *leanConn) post(path string, body []byte) (int, error) {
	c.buf = append(c.buf[:0], "POST "...)
	c.buf = append(c.buf, path...)
	c.buf = append(c.buf, " HTTP/1.1\r\nHost: "...)
	c.buf = append(c.buf, c.host...)
	c.buf = append(c.buf, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	c.buf = strconv.AppendInt(c.buf, int64(len(body)), 10)
	c.buf = append(c.buf, "\r\n\r\n"...)
	c.buf = append(c.buf, body...)
	if _, err := c.Write(c.buf); err != nil {
		return 0, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("status line %q", line)
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("status line %q", line)
	}
	length := 0
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(line) <= 2 {
			break // the blank line after the header
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return 0, fmt.Errorf("Content-Length %q", v)
			}
		}
	}
	if _, err := c.br.Discard(length); err != nil {
		return 0, err
	}
	return code, nil
}
