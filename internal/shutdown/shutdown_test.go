package shutdown

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// A connection that never sends a request does not hold Server; a request in
// flight is still answered.
func TestServerClosesFreshConnections(t *testing.T) {
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.WriteString(w, "done")
	})}
	tr := Track(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	spare, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer spare.Close()
	answer := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String())
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answer <- string(b)
	}()
	time.Sleep(100 * time.Millisecond) // both connections accepted, the request started
	// Shutdown bounded well under the 5 s a fresh connection would hold it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- tr.Shutdown(ctx) }()
	time.Sleep(50 * time.Millisecond)
	close(release)
	if err := <-shut; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if got := <-answer; got != "done" {
		t.Errorf("the request in flight got %q", got)
	}
}
