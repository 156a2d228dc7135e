package replay

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/msgload/msgload/internal/netguard/proxytest"
)

// TestRecorderIgnoresEnvironmentProxy: with HTTP_PROXY and the others set,
// the recorder forwards to its upstream directly, never through the proxy
// (a host nobody confirmed, which would get every recorded secret). Before,
// a recorder with no Transport used http.DefaultTransport, which reads the
// proxy from the environment.
func TestRecorderIgnoresEnvironmentProxy(t *testing.T) {
	proxytest.Run(t, func(t *testing.T, trap *proxytest.Trap, host string) {
		var reached atomic.Int64
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached.Add(1)
			w.WriteHeader(http.StatusAccepted)
		}))
		defer up.Close()
		u, _ := url.Parse(strings.Replace(up.URL, "127.0.0.1", host, 1))
		rec, err := NewRecorder(RecorderOptions{Upstream: u, Out: &bytes.Buffer{}})
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Close()
		req := httptest.NewRequest(http.MethodPost, "/api/v1/notifications", strings.NewReader(`{"to":"x"}`))
		req.Header.Set("Authorization", "Bearer secret-token")
		w := httptest.NewRecorder()
		rec.ServeHTTP(w, req)
		if seen := trap.Seen(); len(seen) > 0 {
			t.Fatalf("%d requests went through the environment proxy: %q", len(seen), seen)
		}
		if reached.Load() != 1 || w.Code != http.StatusAccepted {
			t.Fatalf("upstream reached %d times, answer %d; want once, 202", reached.Load(), w.Code)
		}
	})
}
