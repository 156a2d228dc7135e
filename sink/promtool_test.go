package sink

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestPromtoolCheckMetrics runs a standalone sink, sends one call of each kind,
// and feeds its /metrics to `promtool check metrics`.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is required when CI=true")
		}
		t.Skip("promtool not installed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServerConfig{Addr: "127.0.0.1:0", Dir: t.TempDir(), Ready: func(a string) { addrc <- a }})
	}()
	var base string
	select {
	case a := <-addrc:
		base = "http://" + a
	case err := <-done:
		t.Fatal(err)
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	tag := &rundir.Tag{Run: "r", Seq: 1, First: time.Now().Add(-time.Second), Chain: []string{"viber:DELIVERED", "sms"}}
	calls := []struct{ route, body string }{
		{"/callback", status(txID(1), "EXPIRED", "viber", tag)},
		{"/callback", status(txID(1), "DELIVERED", "sms", tag)},
		{"/callback", status(txID(1), "DELIVERED", "sms", tag)},
		{"/incoming", `{"txId":"` + txID(2) + `","channel":"sms","recipient":{"type":"MSISDN","value":"7"},"sender":"s"}`},
		{"/webhook", `{"externalId":"` + rundir.Tag{Run: "r", Seq: 2, First: time.Now()}.ExternalID() + `","status":"DELIVERED"}`},
		{"/webhook", `not json`},
	}
	for _, c := range calls {
		resp, err := http.Post(base+c.route, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"msgload_delivery_latency_seconds_bucket", `msgload_sink_failover_steps_total{from="viber",to="sms"} 1`, `msgload_sink_duplicates_total{api="messaging"} 1`} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
