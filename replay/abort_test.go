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

// A client that goes away while the upstream is between two writes (no write
// to the client failed) is a client abort too: it was recorded as "upstream
// answer broke off mid-body" (issue 24).
func TestRecorderTellsClientAbortWhileUpstreamIdle(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, strings.Repeat("x", 4096))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // idle until the proxy gives up on it
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
	resp.Body.Close()
	path := stop()

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ex []exchange
	for _, l := range strings.Split(string(b), "\n") {
		var e exchange
		if json.Unmarshal([]byte(l), &e) == nil && e.Method != "" {
			ex = append(ex, e)
		}
	}
	if len(ex) != 1 || !strings.HasPrefix(ex[0].Error, "client aborted mid-download") {
		t.Fatalf("recorded %+v, want one exchange with a client abort", ex)
	}
}
