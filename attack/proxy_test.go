package attack

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/internal/netguard/proxytest"
	"github.com/msgload/msgload/rundir"
)

// TestEngineIgnoresEnvironmentProxy: with HTTP_PROXY and the others set, the
// engine's requests (the token client's client_secret, the sends with their
// bearer token) go to the target, never to the proxy: a proxy is a host
// nobody confirmed. Before, the engine's transport was a clone of
// http.DefaultTransport and every request went through the proxy.
func TestEngineIgnoresEnvironmentProxy(t *testing.T) {
	proxytest.Run(t, func(t *testing.T, trap *proxytest.Trap, host string) {
		var tokens, sends atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/token" {
				b, _ := io.ReadAll(r.Body)
				if strings.Contains(string(b), "secret-c") || strings.Contains(r.Header.Get("Authorization"), "Basic ") {
					tokens.Add(1)
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"access_token":"tok-c","token_type":"Bearer","expires_in":3600}`))
				return
			}
			sends.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		base := "http://" + strings.Replace(strings.TrimPrefix(srv.URL, "http://"), "127.0.0.1", host, 1)
		_, err := Run(context.Background(), Options{
			API: rundir.APINotify, BaseURL: base, TokenURL: base + "/token", Clients: clients("c"),
			Pacer: Constant(vegeta.Rate{Freq: 100, Per: time.Second}), Requests: 3,
			Body: notifyBody, RunID: "envproxy", Out: &memRecorder{},
		})
		if err != nil {
			t.Fatal(err)
		}
		if seen := trap.Seen(); len(seen) > 0 {
			t.Fatalf("%d requests went through the environment proxy: %q", len(seen), seen)
		}
		if tokens.Load() == 0 || sends.Load() == 0 {
			t.Fatalf("the target got %d token requests and %d sends, want both", tokens.Load(), sends.Load())
		}
	})
}
