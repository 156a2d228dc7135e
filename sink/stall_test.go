package sink

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// stallFile is an event log file whose writes block until release is closed
// (fsfreeze), or fail with ENOSPC when full is set (a full disk).
type stallFile struct {
	*os.File
	release chan struct{}
	full    atomic.Bool
}

func (f *stallFile) Write(p []byte) (int, error) {
	if f.full.Load() {
		return 0, syscall.ENOSPC
	}
	if f.release != nil {
		<-f.release
	}
	return f.File.Write(p)
}

func shortBounds(t *testing.T) {
	a, u, c := appendWait, unhealthyFor, closeWait
	appendWait, unhealthyFor, closeWait = 300*time.Millisecond, 100*time.Millisecond, 300*time.Millisecond
	t.Cleanup(func() { appendWait, unhealthyFor, closeWait = a, u, c })
}

func healthz(t *testing.T, h *harness) (int, string) {
	t.Helper()
	resp, err := h.srv.Client().Get(h.srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// returns runs fn and fails the test if it has not returned long after the
// bounds under test (it catches a hang, it times nothing).
func returns(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not return: it hangs on stalled storage", what)
	}
}

// On stalled storage a call is answered 503 once the log has not taken it in
// appendWait, /healthz says 503 naming the stall, and Close ends (with an
// error) instead of waiting for the thaw. Before, the call hung, /healthz
// said 200 and SIGTERM waited for the thaw.
func TestSinkOnStalledStorage(t *testing.T) {
	shortBounds(t)
	sf := &stallFile{release: make(chan struct{})}
	h := newHarness(t, Options{WrapLog: func(f *os.File) LogFile { sf.File = f; return sf }})
	t.Cleanup(func() { close(sf.release) })
	code := 0
	returns(t, "a POST", func() { code = h.post("/callback", status(txID(1), "DELIVERED", "sms", nil), nil) })
	if code != http.StatusServiceUnavailable {
		t.Fatalf("POST on stalled storage: %d, want 503", code)
	}
	if c, body := healthz(t, h); c != http.StatusServiceUnavailable || !strings.Contains(body, "pending") {
		t.Fatalf("/healthz on stalled storage: %d %q, want 503 naming the pending write", c, body)
	}
	var err error
	returns(t, "Close", func() { err = h.s.Close() })
	if !errors.Is(err, errLogStalled) {
		t.Fatalf("Close on stalled storage: %v, want errLogStalled", err)
	}
}

// On a full disk /healthz says 503 while writes fail. Before, it said 200
// while every call was answered 500.
func TestHealthzOnFullDisk(t *testing.T) {
	shortBounds(t)
	unhealthyFor = time.Minute // the failure is recent for the whole test
	sf := &stallFile{}
	sf.full.Store(true)
	h := newHarness(t, Options{WrapLog: func(f *os.File) LogFile { sf.File = f; return sf }})
	if code := h.post("/callback", status(txID(1), "DELIVERED", "sms", nil), nil); code != http.StatusInternalServerError {
		t.Fatalf("POST on a full disk: %d, want 500", code)
	}
	if c, body := healthz(t, h); c != http.StatusServiceUnavailable || !strings.Contains(body, "no space") {
		t.Fatalf("/healthz on a full disk: %d %q, want 503 naming the failure", c, body)
	}
	sf.full.Store(false) // space freed: the next call is written, and the sink is healthy again
	if code := h.post("/callback", status(txID(2), "DELIVERED", "sms", nil), nil); code != http.StatusOK {
		t.Fatalf("POST after space was freed: %d, want 200", code)
	}
	if c, body := healthz(t, h); c != http.StatusOK {
		t.Fatalf("/healthz after space was freed: %d %q", c, body)
	}
}
