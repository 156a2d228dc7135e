package attack

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// ioSizes keeps the size of the first Read and the first Write on each
// connection: the transport's bufio buffers fill and flush in their own size.
type ioSizes struct {
	mu                sync.Mutex
	firstRead, firstW []int
}

type sizedConn struct {
	net.Conn
	s           *ioSizes
	read, wrote bool
}

func (c *sizedConn) Read(p []byte) (int, error) {
	if !c.read {
		c.read = true
		c.s.mu.Lock()
		c.s.firstRead = append(c.s.firstRead, len(p))
		c.s.mu.Unlock()
	}
	return c.Conn.Read(p)
}

func (c *sizedConn) Write(p []byte) (int, error) {
	if !c.wrote {
		c.wrote = true
		c.s.mu.Lock()
		c.s.firstW = append(c.s.firstW, len(p))
		c.s.mu.Unlock()
	}
	return c.Conn.Write(p)
}

// TestEngineConnBuffers: the engine's connections read into a 1 KiB buffer
// and write from a 2 KiB one (net/http's 4 KiB each is most of the memory a
// connection holds, and a run holds one per message in flight at its peak),
// and a request and an answer larger than the buffers still go whole.
func TestEngineConnBuffers(t *testing.T) {
	answer := bytes.Repeat([]byte("a"), 3000)
	var got int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.Copy(io.Discard, r.Body)
		w.Write(answer)
	}))
	defer srv.Close()
	ctx := context.Background()
	e := newEngine(ctx, ctx, &Options{API: rundir.APIMessaging, BaseURL: srv.URL, Clients: clients("a")})
	tr := e.rt.(*http.Transport)
	var sizes ioSizes
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &sizedConn{Conn: c, s: &sizes}, nil
	}
	defer tr.CloseIdleConnections()
	body := bytes.Repeat([]byte("b"), 5000)
	a := &rundir.Attempt{}
	e.exchange(ctx, e.clients[0], a, http.MethodPost, e.sendURL, body)
	if a.Code != http.StatusOK || a.BytesIn != int64(len(answer)) || got != int64(len(body)) {
		t.Fatalf("code %d, %d bytes read of %d, the service got %d of %d: %s", a.Code, a.BytesIn, len(answer), got, len(body), a.Error)
	}
	sizes.mu.Lock()
	defer sizes.mu.Unlock()
	if len(sizes.firstRead) != 1 || sizes.firstRead[0] > connReadBuffer {
		t.Errorf("first reads of the connections %v bytes, want one of at most %d", sizes.firstRead, connReadBuffer)
	}
	if len(sizes.firstW) != 1 || sizes.firstW[0] > connWriteBuffer {
		t.Errorf("first writes of the connections %v bytes, want one of at most %d", sizes.firstW, connWriteBuffer)
	}
}
