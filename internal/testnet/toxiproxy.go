package testnet

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

var quietToxiproxy sync.Once

// Proxy starts toxiproxy in-process on a free loopback port in front of
// upstream (host:port), named name, until the test ends: the tests put
// toxics on it (harness's fault suite, characterise's jitter). Its address
// is the proxy's Listen.
func Proxy(t testing.TB, name, upstream string) *toxiproxy.Proxy {
	t.Helper()
	quietToxiproxy.Do(func() { zerolog.SetGlobalLevel(zerolog.Disabled) }) // toxics log through zerolog's global logger
	tp := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(tp, name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// Jitter puts a latency toxic of latency ± jitter on both of p's streams
// (requests and answers): each chunk is held latency plus a uniform draw in
// [−jitter, +jitter), in order on its connection.
func Jitter(t testing.TB, p *toxiproxy.Proxy, latency, jitter time.Duration) {
	t.Helper()
	for _, stream := range []string{"upstream", "downstream"} {
		b, err := json.Marshal(map[string]any{"name": "jitter_" + stream, "type": "latency", "stream": stream, "toxicity": 1,
			"attributes": map[string]any{"latency": latency.Milliseconds(), "jitter": jitter.Milliseconds()}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Toxics.AddToxicJson(strings.NewReader(string(b))); err != nil {
			t.Fatalf("latency toxic on %s: %v", stream, err)
		}
	}
}
