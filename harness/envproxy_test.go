package harness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/msgload/msgload/internal/netguard/proxytest"
)

// TestRemoteLogIgnoresEnvironmentProxy: with HTTP_PROXY and the others set,
// the copy of a standalone sink's events asks the sink directly; the read
// token never goes to the proxy (a host nobody confirmed). Before, the
// client had no Transport, so http.DefaultTransport sent it through the proxy.
func TestRemoteLogIgnoresEnvironmentProxy(t *testing.T) {
	proxytest.Run(t, func(t *testing.T, trap *proxytest.Trap, host string) {
		var reached atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached.Add(1)
			w.Write([]byte(`{"events":[],"next":0,"more":false}`))
		}))
		defer srv.Close()
		l, err := newRemoteLog(strings.Replace(srv.URL, "127.0.0.1", host, 1), "r1", filepath.Join(t.TempDir(), "events.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.close()
		l.token = "read-secret"
		err = l.pull(context.Background())
		if seen := trap.Seen(); len(seen) > 0 {
			t.Fatalf("%d requests went through the environment proxy: %q", len(seen), seen)
		}
		if err != nil || reached.Load() == 0 {
			t.Fatalf("the sink was reached %d times (err %v), want a direct pull", reached.Load(), err)
		}
	})
}
