package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/msgload/msgload/internal/netguard"
	"github.com/msgload/msgload/rundir"
)

// The target's memory (issue 23: the drift of a soak "where exposed"). When
// the scenario names the target's Prometheus endpoint (target.metrics), the
// run reads the memory metric there (the sum of its series; by default
// process_resident_memory_bytes, which every client library's process
// collector exports) every memoryEvery while it sends, and appends each look
// to target-memory.jsonl as it is taken — a failed look as an error line, so
// that the report counts it missing, never as 0 bytes. The report fits the
// slope of the samples minute by minute (reports/drift.go: memory_slope).

// defaultMemoryEvery is how often the target's memory is sampled
// (Options.MemoryEvery).
const defaultMemoryEvery = 10 * time.Second

// maxMetricsBytes bounds what is read of one answer of the metrics endpoint.
const maxMetricsBytes = 8 << 20

// memoryAccept asks for the text format only. The protobuf format is not
// read: its decoder makes a buffer as long as a message says it is before
// reading it, so one wrong length from the endpoint took this process down
// (FuzzMemoryFromMetrics: 2 TB asked for 9 bytes read).
const memoryAccept = `text/plain;version=0.0.4;q=1,*/*;q=0.1`

// memorySampler samples the target's memory into its file until stopped.
type memorySampler struct {
	stopOnce sync.Once
	stopc    chan struct{}
	done     chan struct{}
}

// lastLookTimeout bounds the look at the attack's end, which the grace wait
// waits for.
const lastLookTimeout = 2 * time.Second

// sampleTargetMemory starts sampling the target's memory as src says (nil:
// the scenario names no endpoint, nothing to do) into the part's directory,
// and returns the function that takes a last sample and stops (called again:
// nothing). A look under way when it is stopped is finished, never cut
// short (a look cut short would read as a failed sample). A file that cannot
// be created is told on stderr: the report then finds it missing.
func (r *partRun) sampleTargetMemory(src *rundir.MemorySource) (stop func()) {
	if src == nil {
		return func() {}
	}
	f, err := rundir.Create(filepath.Join(r.dir, rundir.TargetMemoryFile))
	if err != nil {
		fmt.Fprintf(r.o.Stderr, "msgload: %s: the target's memory is not sampled: %v\n", r.s.Name, err)
		return func() {}
	}
	m := &memorySampler{stopc: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Transport: netguard.Transport(), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(timeout time.Duration) rundir.MemorySample {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		at := time.Now().UTC()
		b, err := readMemory(ctx, client, r.s.Target.Metrics, src.URL, src.Metric)
		if err != nil {
			return rundir.MemorySample{At: at, Error: err.Error()}
		}
		return rundir.MemorySample{At: at, Bytes: &b}
	}
	told := false
	write := func(s rundir.MemorySample) {
		line, _ := json.Marshal(s) // a time, a float and a string: never fails
		// One write a line, unbuffered: a sample taken is in the file, a
		// killed process loses none.
		if _, err := f.Write(append(line, '\n')); err != nil && !told {
			told = true
			fmt.Fprintf(r.o.Stderr, "msgload: %s: %s: %v\n", r.s.Name, rundir.TargetMemoryFile, err)
		}
	}
	go func() {
		defer close(m.done)
		defer f.Close()
		t := time.NewTicker(src.Every.D())
		defer t.Stop()
		for {
			write(get(min(src.Every.D(), 5*time.Second)))
			select {
			case <-m.stopc:
				write(get(min(src.Every.D(), lastLookTimeout))) // the attack's end
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		m.stopOnce.Do(func() {
			close(m.stopc)
			<-m.done
		})
	}
}

// readMemory reads metric at the endpoint rawURL: the sum of its series'
// values. An error names the endpoint as shown (its URL redacted by the
// scenario's rule, as run.json has it), never with its secrets.
func readMemory(ctx context.Context, c *http.Client, rawURL, shown, metric string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, fmt.Errorf("GET %s: %v", shown, err)
	}
	req.Header.Set("Accept", memoryAccept)
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("GET %s: %v", shown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetricsBytes))
		return 0, fmt.Errorf("GET %s: HTTP %d", shown, resp.StatusCode)
	}
	v, err := memoryFromMetrics(io.LimitReader(resp.Body, maxMetricsBytes), metric)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", shown, err)
	}
	return v, nil
}

// memoryFromMetrics is the sum of metric's series in a metrics page in the
// text format: a gauge's, an untyped metric's or a counter's value. A page
// without the metric, a summary or histogram of that name, or a value that
// is not a finite number of bytes is an error: a sample missing. The text
// parser of prometheus/common v0.62 panics on some pages (a line "{}", as a
// JSON error body starts: FuzzMemoryFromMetrics): such a page is an error
// too, never the run's end.
func memoryFromMetrics(r io.Reader, metric string) (v float64, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = 0, fmt.Errorf("not a metrics page (the parser failed: %v)", p)
		}
	}()
	dec := expfmt.NewDecoder(r, expfmt.NewFormat(expfmt.TypeTextPlain))
	var sum float64
	found := false
	for {
		var mf dto.MetricFamily
		err := dec.Decode(&mf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("not a metrics page: %v", err)
		}
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			var v float64
			switch {
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Untyped != nil:
				v = m.GetUntyped().GetValue()
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			default:
				return 0, fmt.Errorf("%s is a %s, not a number of bytes", metric, mf.GetType())
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return 0, fmt.Errorf("%s is %g, not a number of bytes", metric, v)
			}
			sum += v
			found = true
		}
	}
	if !found {
		return 0, fmt.Errorf("no %s in the metrics", metric)
	}
	if math.IsInf(sum, 0) {
		return 0, fmt.Errorf("%s sums to %g", metric, sum)
	}
	return sum, nil
}
