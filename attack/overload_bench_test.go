package attack_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgload/msgload/attack/internal/benchload"
)

// BenchmarkOverloadMemory measures the attacker's peak memory when the target
// cannot keep up: a loopback target that serves at most
// MSGLOAD_OVERLOAD_WORKERS requests at once, each in MSGLOAD_OVERLOAD_DELAY
// (default 100 at once × 100 ms = 1,000/s), is attacked at
// MSGLOAD_OVERLOAD_RATE (default 3,000/s) for MSGLOAD_OVERLOAD_SECONDS
// (default 5 s): an open model with no cap keeps starting requests, and its
// backlog (requests, goroutines, connections) grows by 2,000 a second. Each
// cap in MSGLOAD_OVERLOAD_CAPS (default "-1,0,256": none, the default
// attack.DefaultMaxInFlight, 256) is one run of internal/benchload, a child
// process whose peak RSS (VmHWM) is its own. Bounded: rate × seconds messages,
// the default 30 s request timeout, loopback only.
//
//	go test ./attack -run '^$' -bench OverloadMemory -benchtime 1x
func BenchmarkOverloadMemory(b *testing.B) {
	loader := build(b, "benchload", "github.com/msgload/msgload/attack/internal/benchload/benchload")
	conc, _ := strconv.Atoi(envDefault("MSGLOAD_OVERLOAD_WORKERS", "100"))
	delay, err := time.ParseDuration(envDefault("MSGLOAD_OVERLOAD_DELAY", "100ms"))
	if err != nil || conc <= 0 {
		b.Fatalf("MSGLOAD_OVERLOAD_WORKERS / _DELAY: %v", err)
	}
	rate, _ := strconv.Atoi(envDefault("MSGLOAD_OVERLOAD_RATE", "3000"))
	secs, _ := strconv.Atoi(envDefault("MSGLOAD_OVERLOAD_SECONDS", "5"))
	rate, secs = max(rate, 1), max(secs, 1)
	url, peak := slowTarget(b, conc, delay)
	for _, cs := range strings.Split(envDefault("MSGLOAD_OVERLOAD_CAPS", "-1,0,256"), ",") {
		capN, err := strconv.Atoi(cs)
		if err != nil {
			b.Fatalf("MSGLOAD_OVERLOAD_CAPS: bad cap %q", cs)
		}
		b.Run("cap="+cs, func(b *testing.B) {
			peak.Store(0)
			dir := b.TempDir()
			n := int64(rate * secs)
			cmd := exec.Command(loader, "-url="+url, "-rate="+strconv.Itoa(rate), "-requests="+strconv.FormatInt(n, 10),
				"-dir="+dir, "-max-in-flight="+cs)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			start := time.Now()
			cpu, rss, _, err := runMeasured(cmd)
			if err != nil {
				b.Fatalf("benchload: %v\n%s", err, errb.String())
			}
			took := time.Since(start)
			var rep benchload.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				b.Fatalf("benchload said %q: %v", out.String(), err)
			}
			b.ReportMetric(float64(rss), "peak-KiB")
			b.ReportMetric(float64(peak.Load()), "target-peak-in-flight")
			b.ReportMetric(float64(rep.Capped), "capped-sends")
			b.Logf("cap %d: %d messages planned at %d/s against %d/s: peak RSS %d KiB, target held up to %d requests, %d sends capped, %d errors, cpu %v, %v in all",
				capN, n, rate, int(float64(conc)/delay.Seconds()), rss, peak.Load(), rep.Capped, rep.Errors, cpu.Round(time.Millisecond), took.Round(time.Millisecond))
		})
	}
}

// slowTarget is a loopback messaging target that serves conc requests at
// once, each in delay; the others wait in line (open connections). peak is
// the most requests it held at once, served or waiting.
func slowTarget(b *testing.B, conc int, delay time.Duration) (string, *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	slots := make(chan struct{}, conc)
	var n, now, peak atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		held := now.Add(1)
		defer now.Add(-1)
		for p := peak.Load(); held > p && !peak.CompareAndSwap(p, held); p = peak.Load() {
		}
		io.Copy(io.Discard, r.Body)
		select {
		case slots <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		time.Sleep(delay)
		<-slots
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"txId":"00000000-0000-0000-0000-%012d","state":"ACCEPTED"}`, n.Add(1))
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String(), &peak
}
