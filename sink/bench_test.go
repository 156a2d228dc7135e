package sink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/msgload/msgload/rundir"
)

// benchBody is a realistic status callback: tagged, with a chain and an error object.
func benchBody(i int64) []byte {
	tag := rundir.Tag{Run: "bench", Seq: i, First: time.Unix(1795400000, 0), Chain: []string{"viber:DELIVERED", "sms"}}
	return []byte(status(txID(int(i)), []string{"DELIVERED", "SEEN", "EXPIRED"}[i%3], "sms", &tag))
}

// BenchmarkIngest measures callbacks per second over loopback HTTP, with the same
// client load against a bare handler (answers 200, stores nothing) and against
// the sink with each fsync mode, in one run. The figure to read is callbacks/s.
func BenchmarkIngest(b *testing.B) {
	benchIngest(b, []FsyncMode{FsyncBatch, fsyncNone, fsyncAlways}, benchHTTP)
}

// benchIngest runs load against a bare handler (answers 200, stores nothing),
// then against the sink in each of modes.
func benchIngest(b *testing.B, modes []FsyncMode, load func(*testing.B, http.Handler)) {
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusOK)
	})
	b.Run("bare", func(b *testing.B) { load(b, bare) })
	for _, mode := range modes {
		b.Run("sink-"+string(mode), func(b *testing.B) {
			s, err := New(Options{LogPath: filepath.Join(b.TempDir(), rundir.EventsFile), Fsync: mode}, prometheus.NewRegistry())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			load(b, s.Handler())
			if got := s.Stats().Callbacks; got != int64(b.N) {
				b.Fatalf("the sink counted %d callbacks of %d", got, b.N)
			}
			n, sum := histMean(b, s.met.batchSize)
			_, wsum := histMean(b, s.met.writeDur)
			if n > 0 {
				b.ReportMetric(sum/n, "events/batch")
				b.ReportMetric(wsum/n*1e6, "µs/batch-write")
			}
		})
	}
}

// Group commit turns concurrency into batch size: throughput is at most the calls
// in flight divided by the fsync time, so the load is 256 concurrent callers (a
// service fanning out callbacks keeps many in flight).
const benchParallelism = 128 // × GOMAXPROCS goroutines

// caller posts one callback body to the sink under test and returns the
// answer's status code.
type caller func(body []byte) (int, error)

// benchPosts serves h on loopback and posts b.N callbacks from
// 128×GOMAXPROCS goroutines; newCaller gives each goroutine its caller, and
// what to close when it is done.
func benchPosts(b *testing.B, h http.Handler, newCaller func(srv *httptest.Server) (caller, func(), error)) {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ReadHeaderTimeout = serverTimeouts.ReadHeader
	srv.Config.IdleTimeout = serverTimeouts.Idle
	srv.Start()
	defer srv.Close()
	var seq atomic.Int64
	b.SetParallelism(benchParallelism)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var call caller
		for pb.Next() {
			if call == nil {
				c, done, err := newCaller(srv)
				if err != nil {
					b.Error(err)
					return
				}
				defer done()
				call = c
			}
			code, err := call(benchBody(seq.Add(1)))
			if err != nil {
				b.Error(err)
				return
			}
			if code != http.StatusOK {
				b.Errorf("status %d", code)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "callbacks/s")
}

// benchHTTP posts through net/http's client over keep-alive connections.
func benchHTTP(b *testing.B, h http.Handler) {
	tr := &http.Transport{
		MaxIdleConnsPerHost: 256,
		DialContext:         (&net.Dialer{}).DialContext,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	benchPosts(b, h, func(srv *httptest.Server) (caller, func(), error) {
		url := srv.URL + "/callback"
		return func(body []byte) (int, error) {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return 0, err
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode, nil
		}, func() {}, nil
	})
}

// BenchmarkMemory feeds a fixed number of callbacks (default 2,000,000 to keep
// `make bench` short; MSGLOAD_SINK_MEM_EVENTS=10000000 for the figure in the README; env
// MSGLOAD_SINK_MEM_EVENTS) through the sink's handler in process, to a log on
// /dev/null, and reports the live heap after a GC at each tenth: the correlation
// table is capped (at 10M events DefaultMaxTracked messages; with fewer events a
// cap that fills a third of the way in), so the heap levels off. Each message
// gets three states (DELIVERED, SEEN, a duplicate DELIVERED), so 10M events touch
// 3.3M messages, three times the cap.
func BenchmarkMemory(b *testing.B) {
	total := int64(2_000_000)
	if v := os.Getenv("MSGLOAD_SINK_MEM_EVENTS"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 10 {
			b.Fatalf("MSGLOAD_SINK_MEM_EVENTS=%q", v)
		}
		total = n
	}
	for range b.N {
		// The table fills a third of the way in: DefaultMaxTracked at 10M events.
		tracked := int(min(int64(DefaultMaxTracked), total/9))
		s, err := New(Options{LogPath: os.DevNull, Fsync: fsyncNone, MaxTracked: tracked}, prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		h := s.Handler()
		heap := func() uint64 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		base := heap()
		var peak, at2 uint64
		tenth := total / 10
		states := []string{"DELIVERED", "SEEN", "DELIVERED"}
		rec := &discardWriter{h: http.Header{}}
		u, _ := url.Parse("/callback")
		req := &http.Request{Method: http.MethodPost, URL: u, Header: http.Header{}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
		rd := bytes.NewReader(nil)
		var body []byte
		for i := int64(0); i < total; i++ {
			msg := i / 3
			body = memBody(body[:0], msg, states[i%3])
			rd.Reset(body)
			req.Body = io.NopCloser(rd)
			req.ContentLength = int64(len(body))
			rec.code = 0
			h.ServeHTTP(rec, req)
			if rec.code != http.StatusOK {
				b.Fatalf("event %d: status %d", i, rec.code)
			}
			if (i+1)%tenth == 0 {
				hp := heap() - min(base, heap())
				peak = max(peak, hp)
				if (i+1)/tenth == 2 {
					at2 = hp
				}
				b.Logf("%d events: live heap %.1f MiB (table %d messages)", i+1, float64(hp)/(1<<20), s.tab.len())
			}
		}
		st := s.Stats()
		if st.Events != total || st.Duplicates != total/3 {
			b.Fatalf("stats %+v", st)
		}
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(at2)/(1<<20), "heap-at-2/10-MiB")
		b.ReportMetric(float64(total), "events")
		b.ReportMetric(float64(st.Evicted), "evicted")
		s.Close()
	}
}

// memBody appends a tagged status record for message msg, without
// reflection: the messages sent 1 ms apart, as at 1,000 a second (the
// table finds a tagged message's generation by when it was sent).
func memBody(b []byte, msg int64, state string) []byte {
	b = append(b, `{"txId":"00000000-0000-4000-8000-`...)
	b = append(b, fmt.Sprintf("%012d", msg)...)
	b = append(b, `","updatedAt":"2026-11-23T02:00:05Z","state":"`...)
	b = append(b, state...)
	b = append(b, `","channel":"sms","trackData":{"msgload_run":"bench","msgload_seq":"`...)
	b = strconv.AppendInt(b, msg, 10)
	b = append(b, `","msgload_sent":"`...)
	b = strconv.AppendInt(b, 1795400000000000000+msg*int64(time.Millisecond), 10) // sent at 1,000 a second
	b = append(b, `"}}`...)
	return b
}

// discardWriter is an http.ResponseWriter that keeps only the status code.
type discardWriter struct {
	h    http.Header
	code int
}

func (d *discardWriter) Header() http.Header { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	return len(p), nil
}
func (d *discardWriter) WriteHeader(c int) {
	if d.code == 0 {
		d.code = c
	}
}

// histMean returns the count and sum of a histogram.
func histMean(b *testing.B, h prometheus.Histogram) (count, sum float64) {
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		b.Fatal(err)
	}
	return float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()
}

// BenchmarkHandler calls the sink's handler in process (no network, no HTTP
// parsing) from 128×GOMAXPROCS goroutines, with a real log file: what the sink
// itself costs per callback and how group commit batches under that load.
func BenchmarkHandler(b *testing.B) {
	for _, mode := range []FsyncMode{FsyncBatch, fsyncNone} {
		b.Run(string(mode), func(b *testing.B) {
			s, err := New(Options{LogPath: filepath.Join(b.TempDir(), rundir.EventsFile), Fsync: mode}, prometheus.NewRegistry())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			h := s.Handler()
			var seq atomic.Int64
			b.SetParallelism(benchParallelism)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				u, _ := url.Parse("/callback")
				rec := &discardWriter{h: http.Header{}}
				var body []byte
				rd := bytes.NewReader(nil)
				for pb.Next() {
					body = memBody(body[:0], seq.Add(1), "DELIVERED")
					rd.Reset(body)
					req := &http.Request{Method: http.MethodPost, URL: u, Header: http.Header{}, Body: io.NopCloser(rd), ContentLength: int64(len(body))}
					rec.code = 0
					h.ServeHTTP(rec, req)
					if rec.code != http.StatusOK {
						b.Errorf("status %d", rec.code)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "callbacks/s")
			n, sum := histMean(b, s.met.batchSize)
			if n > 0 {
				b.ReportMetric(sum/n, "events/batch")
			}
		})
	}
}

// len is the count of messages the table holds (the benchmarks report it).
func (t *table) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}
