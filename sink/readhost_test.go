package sink

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// A sink with no read token (loopback) answers its read API only to a
// loopback Host or its listen address: a DNS-rebinding page (Host:
// evil.example) is refused and gets no event.
func TestReadAPIRefusesForeignHost(t *testing.T) {
	k, err := New(Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl"), ListenAddr: "sink.internal:8082"}, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h := k.Handler()
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"evil.example", false},
		{"evil.example:8082", false},
		{"127.0.0.1.evil.example", false},
		{"10.0.0.5:8082", false},
		{"127.0.0.1:8082", true},
		{"127.3.4.5", true},
		{"localhost:8082", true},
		{"[::1]:8082", true},
		{"sink.internal:8082", true},
	} {
		for _, path := range []string{"/v1/events", "/v1/stats"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Host = tc.host
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if got := rec.Code == http.StatusOK; got != tc.ok {
				t.Errorf("GET %s Host %s: %d, want ok=%v", path, tc.host, rec.Code, tc.ok)
			}
			if !tc.ok && rec.Code != http.StatusMisdirectedRequest && rec.Code != http.StatusForbidden {
				t.Errorf("GET %s Host %s: %d, want 421 or 403", path, tc.host, rec.Code)
			}
		}
	}
}
