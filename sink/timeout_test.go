package sink

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgload/msgload/internal/httpserve"
)

// A client that trickles its request (one byte at a time) is cut off at the
// read timeout, headers or body, and nothing of it is logged.
func TestSlowClientCutOff(t *testing.T) {
	dir := t.TempDir()
	addr, _ := serveT(t, ServerConfig{Addr: "127.0.0.1:0", Dir: dir,
		timeouts: httpserve.Timeouts{ReadHeader: 300 * time.Millisecond, Read: 600 * time.Millisecond}})
	body := status(txID(1), "DELIVERED", "sms", nil)
	head := fmt.Sprintf("POST /callback HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	for _, c := range []struct {
		name       string
		fast, slow string
	}{
		{"slow body", head, body},
		{"slow headers", "", head + body},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			start := time.Now()
			closed := make(chan time.Duration, 1)
			go func() {
				io.Copy(io.Discard, bufio.NewReader(conn)) // until the server closes
				closed <- time.Since(start)
			}()
			conn.Write([]byte(c.fast))
			// One byte every 50 ms: the whole request would take seconds.
			for i := 0; i < len(c.slow); i++ {
				if _, err := conn.Write([]byte{c.slow[i]}); err != nil {
					break
				}
				select {
				case <-closed:
					i = len(c.slow)
					closed <- time.Since(start)
				case <-time.After(50 * time.Millisecond):
				}
			}
			select {
			case d := <-closed:
				if d > 2*time.Second {
					t.Errorf("connection kept %v", d)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the server kept the trickling connection")
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "events.jsonl")); len(b) != 0 {
		t.Errorf("a cut-off call was logged: %s", b)
	}
}
