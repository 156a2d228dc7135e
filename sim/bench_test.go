package sim

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
)

const benchTrack = `{"msgload_run":"bench-run-0001","msgload_seq":"123456","msgload_sent":"1763870000000000000","msgload_chain":"sms"}`

// BenchmarkSendWithCallbacks: accepted sends per second, each delivered at
// once with its status callback POSTed to a loopback receiver over
// keep-alive connections. The clock stops only when every callback has been
// answered, so the figure is end to end (handler, engine, senders).
func BenchmarkSendWithCallbacks(b *testing.B) {
	var got atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer rcv.Close()
	cfg := DefaultConfig()
	cfg.Seed = 1
	cfg.Messaging.IncomingShare = 0
	for ch, p := range cfg.Messaging.Profiles {
		p.Delay = fixed(0)
		p.SeenShare = 0
		p.Outcomes = []Outcome{{State: rundir.StateDelivered, Weight: 1}}
		cfg.Messaging.Profiles[ch] = p
	}
	s, err := New(cfg, prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	body := `{"callback":"` + rcv.URL + `/callback","trackData":` + benchTrack + `,"scenario":[` + itemJSON() + `]}`
	h := s.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, _ := http.NewRequest(http.MethodPost, "/messaging/v1/send", strings.NewReader(body))
			r.RemoteAddr = "127.0.0.1:40000"
			r.SetBasicAuth("demo", "demo")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 200 {
				b.Errorf("send: %d", w.Code)
				return
			}
		}
	})
	for got.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "sends/s")
	// On a shared machine wall time depends on the neighbours; sends per
	// CPU-second of this process (user+system, receiver included) does not.
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "sends/cpu-s")
}

// BenchmarkSendOverHTTP: the same with the sends themselves over loopback
// HTTP (client and server on the same two cores).
func BenchmarkSendOverHTTP(b *testing.B) {
	var got atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer rcv.Close()
	cfg := DefaultConfig()
	cfg.Messaging.IncomingShare = 0
	for ch, p := range cfg.Messaging.Profiles {
		p.Delay = fixed(0)
		p.SeenShare = 0
		p.Outcomes = []Outcome{{State: rundir.StateDelivered, Weight: 1}}
		cfg.Messaging.Profiles[ch] = p
	}
	s, err := New(cfg, prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := `{"callback":"` + rcv.URL + `/callback","trackData":` + benchTrack + `,"scenario":[` + itemJSON() + `]}`
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/messaging/v1/send", strings.NewReader(body))
			r.SetBasicAuth("demo", "demo")
			resp, err := client.Do(r)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	for got.Load() < int64(b.N) {
		time.Sleep(time.Millisecond)
	}
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "sends/s")
	// On a shared machine wall time depends on the neighbours; sends per
	// CPU-second of this process (user+system, receiver included) does not.
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "sends/cpu-s")
}

// BenchmarkPendingMemory: heap in use with 1,000,000 accepted messages whose
// delivery is an hour away (run with -benchtime 1x). Messages go through
// accept, as the handler does after validation, with the attacker's trackData.
// The truth keeps its default cap (the first 200,000 messages).
func BenchmarkPendingMemory(b *testing.B) {
	const n = 1_000_000
	cfg := DefaultConfig()
	for ch, p := range cfg.Messaging.Profiles {
		p.Delay = fixed(time.Hour)
		cfg.Messaging.Profiles[ch] = p
	}
	// One round whatever b.N is (a round is a million messages): the figure
	// is the heap, not the time.
	for i := 0; i < b.N && i < 1; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		s, err := New(cfg, prometheus.NewRegistry())
		if err != nil {
			b.Fatal(err)
		}
		req, err := DecodeSend(strings.NewReader(`{"callback":"http://127.0.0.1:9/callback","trackData":` + benchTrack + `,"scenario":[` + itemJSON() + `]}`))
		if err != nil {
			b.Fatal(err)
		}
		acc := s.accounts["demo"]
		for range n {
			s.accept(acc, req)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if s.Pending() != n {
			b.Fatalf("pending %d", s.Pending())
		}
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/(1<<20), "heapMB")
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n, "B/pending")
		_ = s.Close()
	}
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSendHandler: the send handler alone (decode, validate, accept),
// delivery an hour away, no callbacks.
func BenchmarkSendHandler(b *testing.B) {
	cfg := DefaultConfig()
	for ch, p := range cfg.Messaging.Profiles {
		p.Delay = fixed(time.Hour)
		cfg.Messaging.Profiles[ch] = p
	}
	s, err := New(cfg, prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	body := `{"callback":"http://127.0.0.1:9/cb","trackData":` + benchTrack + `,"scenario":[` + itemJSON() + `]}`
	h := s.Handler()
	b.ReportAllocs()
	for b.Loop() {
		r, _ := http.NewRequest(http.MethodPost, "/messaging/v1/send", strings.NewReader(body))
		r.RemoteAddr = "127.0.0.1:40000"
		r.SetBasicAuth("demo", "demo")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
	}
}

// BenchmarkSettledTruthMemory: heap in use once 100,000 messages are
// delivered, called back and forgotten, with the truth kept in memory (as
// without a run directory) and streamed to truth.jsonl (as the harness runs
// the embedded simulator): streamed, what stays is the messages in flight —
// none — instead of every record of the run (run with -benchtime 1x).
// "retained" streams the truth and keeps the default status retention (two
// days): every message must still answer check-status, from the settled
// store (settled.go) instead of memory.
func BenchmarkSettledTruthMemory(b *testing.B) {
	for _, c := range []struct {
		name               string
		streamed, retained bool
	}{{"kept", false, false}, {"streamed", true, false}, {"retained", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N && i < 1; i++ {
				settledTruthHeap(b, c.streamed, c.retained)
			}
		})
	}
}

func settledTruthHeap(b *testing.B, streamed, retained bool) {
	const n = 100_000
	var got atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
	}))
	defer rcv.Close()
	cfg := DefaultConfig()
	cfg.Seed = 1
	cfg.Messaging.IncomingShare = 0
	if !retained {
		cfg.Messaging.StatusRetention = time.Millisecond
	}
	for ch, p := range cfg.Messaging.Profiles {
		p.Delay = fixed(0)
		p.SeenShare = 0
		p.Outcomes = []Outcome{{State: rundir.StateDelivered, Weight: 1}}
		cfg.Messaging.Profiles[ch] = p
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := New(cfg, prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if streamed {
		if err := s.StreamTruth(filepath.Join(b.TempDir(), rundir.TruthStreamFile)); err != nil {
			b.Fatal(err)
		}
	}
	body := `{"callback":"` + rcv.URL + `/callback","trackData":` + benchTrack + `,"scenario":[` + itemJSON() + `]}`
	h := s.Handler()
	for range n {
		r, _ := http.NewRequest(http.MethodPost, "/messaging/v1/send", strings.NewReader(body))
		r.RemoteAddr = "127.0.0.1:40000"
		r.SetBasicAuth("demo", "demo")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatalf("send: %d", w.Code)
		}
	}
	// Held with the retention and no store: the messages stay for two days.
	for got.Load() < n || s.Owed() > 0 || (s.heldMessages() > 0 && (!retained || s.settled != nil)) {
		time.Sleep(10 * time.Millisecond)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/(1<<20), "heapMB")
	b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n, "B/message")
}

// heldMessages counts the messages the simulator still holds (status
// retention not over).
func (s *Server) heldMessages() int {
	s.msgMu.RLock()
	defer s.msgMu.RUnlock()
	return len(s.msgs)
}
