package sim

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The simulator's read endpoints have no token: they answer only to a
// loopback Host or the listen address, not to a DNS-rebinding page.
func TestReadEndpointsRefuseForeignHost(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ListenAddr = "sim.internal:8081"
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, path := range []string{"/sim/v1/truth", "/sim/v1/pending"} {
		for host, ok := range map[string]bool{"evil.example": false, "evil.example:8081": false, "127.0.0.1:8081": true, "localhost": true, "[::1]:8081": true, "sim.internal:8081": true} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Host = host
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, req)
			if (w.Code == http.StatusOK) != ok || (!ok && w.Code != http.StatusMisdirectedRequest) {
				t.Errorf("GET %s Host %s: %d, want ok=%v (421 otherwise)", path, host, w.Code, ok)
			}
		}
	}
}
