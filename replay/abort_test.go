package replay

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// Issue 13: a client that aborts mid-download left no trace in the
// recording, though the upstream had processed its request. The exchange is
// written with its code and the error, without the cut body.
func TestRecorderKeepsExchangeAbortedMidDownload(t *testing.T) {
	chunk := strings.Repeat("x", 32<<10)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		for range 2048 { // up to 64 MiB, far more than loopback buffers hold
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	base, stop := startRecorder(t, up.URL, RedactOptions{})

	resp, err := http.Get(base + "/messaging/v1/check-status/tx-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // mid-download: the transport closes the connection
	path := stop()    // waits for the proxy's handler to end

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	var ex []exchange
	for sc.Scan() {
		var e exchange
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Method != "" {
			ex = append(ex, e)
		}
	}
	if len(ex) != 1 {
		t.Fatalf("%d exchanges recorded, want 1", len(ex))
	}
	e := ex[0]
	if e.Code != http.StatusOK || !strings.HasPrefix(e.Error, "client aborted mid-download") || e.RespBody != "" {
		t.Fatalf("recorded code %d, error %q, %d body bytes", e.Code, e.Error, len(e.RespBody))
	}
}
