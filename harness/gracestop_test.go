package harness

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/scenarios"
)

// An interrupt that comes in the grace wait (the sends are over, callbacks
// still due) makes the run incomplete: it said pass with exit 130. On a busy
// machine the interrupt may land in the sends instead; incomplete either way.
func TestInterruptInGraceIsIncomplete(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for late callbacks for some seconds")
	}
	src := `name: grace-stop
api: notify
target: embedded
clients: 1
load: { rate: 5/s, duration: 1s }
limit: { rate: 1000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x" }
delivery: { grace: 30s }
sim: { rateLimit: { rate: 1000/1m }, notifyDelay: { median: 5s, p95: 6s } }
`
	s, err := scenarios.Parse("grace-stop.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	sig := make(chan os.Signal, 1)
	go func() {
		time.Sleep(3 * time.Second) // the sends (1 s) are over: in the grace wait
		sig <- os.Interrupt
	}()
	var stderr bytes.Buffer
	res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr, Signals: sig})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Fatal("Result.Interrupted is false after an interrupt")
	}
	p := res.Parts[0]
	if p.Summary == nil {
		t.Fatalf("no summary: %v\n%s", p.Err, stderr.String())
	}
	if p.Summary.Verdict != reports.VerdictIncomplete || res.OK() {
		t.Fatalf("verdict %q, want incomplete: %+v", p.Summary.Verdict, p.Summary.Reasons)
	}
}
