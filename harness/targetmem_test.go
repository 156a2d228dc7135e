package harness

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
)

// TestTargetMemorySampled: a run whose scenario names the target's metrics
// endpoint writes a sample of its memory metric every MemoryEvery while it
// sends — each as the endpoint said it, a failed look as an error line
// (missing, never 0 bytes) — and records where in run.json, the endpoint's
// password redacted in every file of the run directory.
func TestTargetMemorySampled(t *testing.T) {
	simSrv := realSim(t, func(*sim.Config) {})
	var looks atomic.Int64
	reg := prometheus.NewRegistry()
	rss := prometheus.NewGauge(prometheus.GaugeOpts{Name: "process_resident_memory_bytes"})
	heap := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "jvm_memory_used_bytes"}, []string{"area"})
	reg.MustRegister(rss, heap)
	prom := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "scraper" || p != "s3cret-pw" {
			http.Error(w, "who", http.StatusUnauthorized)
			return
		}
		n := looks.Add(1)
		if n%4 == 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable) // a look that fails
			return
		}
		rss.Set(100e6 + 1e6*float64(n))
		heap.WithLabelValues("heap").Set(float64(n))
		heap.WithLabelValues("nonheap").Set(1000)
		prom.ServeHTTP(w, r)
	}))
	defer metrics.Close()
	mu, _ := url.Parse(metrics.URL)
	mu.User = url.UserPassword("scraper", "s3cret-pw")
	mu.Path = "/metrics"

	for _, metric := range []string{"", "jvm_memory_used_bytes"} {
		t.Run(strings.TrimSuffix("metric "+metric, " "), func(t *testing.T) {
			looks.Store(0)
			extra := ""
			if metric != "" {
				extra = fmt.Sprintf(", memoryMetric: %s", metric)
			}
			src := fmt.Sprintf(`name: mem
api: messaging
target: { baseUrl: %s, metrics: "%s"%s }
clients: [ { clientId: demo, clientSecret: demo } ]
load: { rate: 20/s, duration: 2s }
message: { recipient: "+79990000001", text: "x {{.Seq}}", scenario: [ { channel: sms, sender: msgload } ] }
delivery: { via: none }
`, simSrv.URL, mu.String(), extra)
			s, err := scenarios.Parse("mem.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			before := time.Now()
			res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr, MemoryEvery: 100 * time.Millisecond})
			after := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			p := res.Parts[0]
			if p.Err != nil {
				t.Fatalf("run: %v\n%s", p.Err, stderr.String())
			}
			var meta rundir.Meta
			b, err := os.ReadFile(filepath.Join(p.Dir, rundir.MetaFile))
			if err != nil || json.Unmarshal(b, &meta) != nil {
				t.Fatalf("run.json: %v", err)
			}
			want := cmp.Or(metric, scenarios.DefaultMemoryMetric)
			if meta.TargetMemory == nil || meta.TargetMemory.Metric != want || meta.TargetMemory.Every.D() != 100*time.Millisecond || !strings.Contains(meta.TargetMemory.URL, "scraper") {
				t.Fatalf("run.json target_memory %+v, want the endpoint, %s, every 100ms", meta.TargetMemory, want)
			}
			var got []rundir.MemorySample
			if err := rundir.ReadJSONL(filepath.Join(p.Dir, rundir.TargetMemoryFile), func(m rundir.MemorySample) error { got = append(got, m); return nil }, func(line int, err error) { t.Errorf("line %d: %v", line, err) }); err != nil {
				t.Fatal(err)
			}
			// A look every 100 ms for 2 s and one at the attack's end: at
			// least the first and the last even on a machine that stalls.
			if len(got) < 2 || int64(len(got)) != looks.Load() {
				t.Fatalf("%d samples for %d looks at the endpoint", len(got), looks.Load())
			}
			var ok, failed int
			for i, m := range got {
				n := float64(i + 1) // the endpoint's look number
				switch {
				case (i+1)%4 == 0:
					if m.Bytes != nil || !strings.Contains(m.Error, "HTTP 503") {
						t.Errorf("look %d failed at the endpoint: sample %+v, want an error and no bytes", i+1, m)
					}
					failed++
				case m.Bytes == nil:
					t.Errorf("look %d: %s", i+1, m.Error)
				case metric == "" && *m.Bytes != 100e6+1e6*n, metric != "" && *m.Bytes != n+1000:
					t.Errorf("look %d: %g bytes, not what the endpoint said", i+1, *m.Bytes)
				default:
					ok++
				}
				// Taken during the run, in order; the last when the attack
				// was over (the sampler starts before the attack and looks
				// a last time after it: no bound on how long either takes).
				if m.At.Before(before) || m.At.After(after) || i > 0 && m.At.Before(got[i-1].At) {
					t.Errorf("sample %d at %v: not in order within the run (%v – %v)", i+1, m.At, before, after)
				}
			}
			if last := got[len(got)-1].At; last.Before(meta.AttackEnd) {
				t.Errorf("the last sample at %v, before the attack's end %v: want one look when it was over", last, meta.AttackEnd)
			}
			if ok == 0 {
				t.Error("no sample read")
			}
			for _, f := range []string{rundir.MetaFile, rundir.ScenarioFile, rundir.TargetMemoryFile, rundir.SummaryFile} {
				if b, _ := os.ReadFile(filepath.Join(p.Dir, f)); bytes.Contains(b, []byte("s3cret-pw")) {
					t.Errorf("%s holds the metrics endpoint's password", f)
				}
			}
			if strings.Contains(stderr.String(), "s3cret-pw") {
				t.Error("stderr holds the metrics endpoint's password")
			}
		})
	}
}

// TestMemoryFromMetrics: the sum of the metric's series in the text format;
// what is not a number of bytes is an error, and so is a page in the
// protobuf format (not read: FuzzMemoryFromMetrics).
func TestMemoryFromMetrics(t *testing.T) {
	for _, c := range []struct {
		page, metric string
		want         float64
		err          string
	}{
		{"# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 1.5e+08\n", "process_resident_memory_bytes", 1.5e8, ""},
		{"jvm_memory_used_bytes{area=\"heap\"} 100\njvm_memory_used_bytes{area=\"nonheap\"} 23\nother 5\n", "jvm_memory_used_bytes", 123, ""},
		{"# TYPE x counter\nx 7\n# EOF\n", "x", 7, ""},
		{"other 5\n", "process_resident_memory_bytes", 0, "no process_resident_memory_bytes"},
		{"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n", "h", 0, "is a HISTOGRAM"},
		{"m NaN\n", "m", 0, "not a number of bytes"},
		{"m -1\n", "m", 0, "not a number of bytes"},
		{"m +Inf\n", "m", 0, "not a number of bytes"},
		{"m{a=\"1\"} 1e308\nm{a=\"2\"} 1e308\n", "m", 0, "sums to"},
		{"<html>oops</html>", "m", 0, "not a metrics page"},
	} {
		got, err := memoryFromMetrics(strings.NewReader(c.page), c.metric)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%q: %g, %v; want %g", c.page, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %g, %v; want an error with %q", c.page, got, err, c.err)
		}
	}
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "process_resident_memory_bytes"})
	g.Set(4096)
	reg.MustRegister(g)
	mfs, _ := reg.Gather()
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := memoryFromMetrics(&b, "process_resident_memory_bytes"); err == nil {
		t.Errorf("a protobuf page read as %g bytes, want an error", got)
	}
}

// FuzzMemoryFromMetrics: whatever a metrics endpoint answers, reading it
// never panics nor asks for more memory than the page holds, and a value
// read is a finite number of bytes, never negative. Seeds in
// testdata/fuzz/FuzzMemoryFromMetrics (e7d41ba074941492: a protobuf message
// length that made the protobuf decoder ask for 2 TB).
func FuzzMemoryFromMetrics(f *testing.F) {
	f.Add([]byte("process_resident_memory_bytes 1.5e+08\n"), "process_resident_memory_bytes")
	f.Fuzz(func(t *testing.T, page []byte, metric string) {
		v, err := memoryFromMetrics(bytes.NewReader(page), metric)
		if err == nil && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("read %g from %q", v, page)
		}
	})
}
