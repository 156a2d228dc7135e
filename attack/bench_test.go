package attack_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/attack/internal/benchload"
	"github.com/msgload/msgload/rundir"
)

// The side-by-side benchmark: msgload's attack path and the vegeta CLI (built
// from the pinned module) at the same rates against the same loopback target,
// one after the other in one run. Each loader is a program of its own (the
// vegeta CLI, and internal/benchload for msgload: attack.Run with unique
// bodies, Basic auth, metrics and the attempt log), built with go build, so
// its CPU (user+sys, rusage) and peak RSS are its own.
//
//	go test ./attack -run '^$' -bench '^BenchmarkVersusVegeta$' -benchtime 1x
//
// Environment: MSGLOAD_BENCH_RATES (comma-separated, "max" = vegeta's own
// maximum measured first; default "1000,4000,max"), MSGLOAD_BENCH_SECONDS
// (per run, default 3), MSGLOAD_BENCH_REPEAT (pairs per rate, run
// alternately; the median is reported; default 1), MSGLOAD_BENCH_CPUPROFILE (a file for benchload's CPU
// profile), MSGLOAD_BENCH_MEMORY (message counts for the memory
// run, e.g. "100000,1000000"; default none: long) at MSGLOAD_BENCH_MEMORY_RATE
// (default 10000/s) with at most MSGLOAD_BENCH_MEMORY_WORKERS vegeta workers
// (default 64): with workers bounded a loader that falls behind sends late
// instead of piling up requests, so what is measured is the attack path's own
// memory against run length, not a backlog of a busy machine.
// MSGLOAD_BENCH_RATES=none runs the memory part alone.

type loaderRun struct {
	cpu     time.Duration // user + sys
	rss     int64         // peak, KiB
	halves  [2]int64      // largest RSS in the first and second half of the run, KiB
	sent    int64
	rate    float64 // achieved, requests per second between the first and last send
	success float64
}

func (r loaderRun) cpuPerReq() float64 { return float64(r.cpu.Microseconds()) / float64(r.sent) }

// runMeasured runs cmd and returns its CPU time (user+sys, from its rusage),
// its peak RSS in KiB, and the largest RSS seen in each half of its run (a
// memory that grows with run length shows a larger second half). Memory is
// read from /proc every 50 ms while it runs (VmHWM, VmRSS): rusage's ru_maxrss
// is useless here, as Linux counts in it the parent's RSS at the fork (the
// child shares the parent's memory until exec).
func runMeasured(cmd *exec.Cmd) (cpu time.Duration, peak int64, halves [2]int64, err error) {
	m, err := runMeasuredSplit(cmd)
	return m.cpu, m.peak, m.halves, err
}

// measured is what runMeasuredSplit saw of a child: its CPU, peak RSS and the
// RSS of each half of its run, and the largest file-backed (RssFile: pages of
// the executable and libraries) and anonymous (RssAnon: heap, stacks) RSS
// sampled, in KiB.
type measured struct {
	cpu        time.Duration
	peak       int64
	halves     [2]int64
	file, anon int64
}

// runMeasuredSplit is runMeasured that also tells the file-backed from the
// anonymous part of the memory (sampled every 50 ms: the largest of each).
func runMeasuredSplit(cmd *exec.Cmd) (m measured, err error) {
	if err := cmd.Start(); err != nil {
		return m, err
	}
	type sample struct {
		at                   time.Time
		hwm, rss, file, anon int64
	}
	var samples []sample
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		path := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if b, err := os.ReadFile(path); err == nil {
				samples = append(samples, sample{time.Now(), statusKiB(b, "VmHWM:"), statusKiB(b, "VmRSS:"), statusKiB(b, "RssFile:"), statusKiB(b, "RssAnon:")})
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	<-sampled
	if len(samples) > 0 {
		mid := samples[0].at.Add(samples[len(samples)-1].at.Sub(samples[0].at) / 2)
		for _, sm := range samples {
			m.peak = max(m.peak, sm.hwm)
			m.file, m.anon = max(m.file, sm.file), max(m.anon, sm.anon)
			h := 0
			if sm.at.After(mid) {
				h = 1
			}
			m.halves[h] = max(m.halves[h], sm.rss)
		}
	}
	ps := cmd.ProcessState
	m.cpu = ps.UserTime() + ps.SystemTime()
	return m, err
}

// statusKiB reads a "Key:   123 kB" line of /proc/PID/status.
func statusKiB(b []byte, key string) int64 {
	_, v, ok := strings.Cut(string(b), key)
	if !ok {
		return 0
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return 0
	}
	kb, _ := strconv.ParseInt(f[0], 10, 64)
	return kb
}

func runMsgload(b *testing.B, bin, url string, rate int, du time.Duration, requests int64, workers uint64) loaderRun {
	dir := b.TempDir()
	cmd := exec.Command(bin, "-url="+url, "-rate="+strconv.Itoa(rate), "-duration="+du.String(),
		"-requests="+strconv.FormatInt(requests, 10), "-dir="+dir, "-max-workers="+strconv.FormatUint(workers, 10))
	if prof := os.Getenv("MSGLOAD_BENCH_CPUPROFILE"); prof != "" {
		cmd.Args = append(cmd.Args, "-cpuprofile="+prof)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cpu, rss, halves, err := runMeasured(cmd)
	if err != nil {
		b.Fatalf("benchload: %v\n%s", err, errb.String())
	}
	var rep benchload.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		b.Fatalf("benchload said %q: %v", out.String(), err)
	}
	r := loaderRun{cpu: cpu, rss: rss, halves: halves, sent: rep.Sent}
	if d := rep.Last.Sub(rep.First); d > 0 && rep.Sent > 1 {
		r.rate = float64(rep.Sent-1) / d.Seconds()
	}
	r.success = 1 - float64(rep.Errors)/float64(max(rep.Sent, 1))
	return r
}

func runVegeta(b *testing.B, bin, url string, rate int, du time.Duration, workers uint64) loaderRun {
	dir := b.TempDir()
	body := filepath.Join(dir, "body.json")
	static, _ := benchload.Body(1, "bench", rundir.Tag{Run: "bench", Seq: 1, First: time.Now()})
	os.WriteFile(body, static, 0o644)
	targets := filepath.Join(dir, "targets.txt")
	os.WriteFile(targets, []byte("POST "+url+"/messaging/v1/send\nAuthorization: Basic YmVuY2g6YmVuY2gtcGFzcw==\nContent-Type: application/json\n@"+body+"\n"), 0o644)
	results := filepath.Join(dir, "results.bin")
	args := []string{"attack", "-targets=" + targets, "-output=" + results, "-duration=" + du.String(), "-rate=" + strconv.Itoa(rate) + "/s"}
	if workers > 0 {
		args = append(args, "-max-workers="+strconv.FormatUint(workers, 10))
	}
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cpu, rss, halves, err := runMeasured(cmd)
	if err != nil {
		b.Fatalf("vegeta: %v\n%s", err, out.String())
	}
	f, err := os.Open(results)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var m vegeta.Metrics
	var first, last time.Time
	dec := vegeta.NewDecoder(f)
	for {
		var res vegeta.Result
		if err := dec.Decode(&res); err == io.EOF {
			break
		} else if err != nil {
			b.Fatal(err)
		}
		m.Add(&res)
		if first.IsZero() || res.Timestamp.Before(first) {
			first = res.Timestamp
		}
		if res.Timestamp.After(last) {
			last = res.Timestamp
		}
	}
	m.Close()
	r := loaderRun{cpu: cpu, rss: rss, halves: halves, sent: int64(m.Requests), success: m.Success}
	if d := last.Sub(first); d > 0 && m.Requests > 1 {
		r.rate = float64(m.Requests-1) / d.Seconds() // as for msgload: between the first and last send
	}
	return r
}

// benchTarget is the loopback service both loaders hit.
func benchTarget(b *testing.B) string {
	var n atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"txId":"00000000-0000-0000-0000-%012d","state":"ACCEPTED","updatedAt":"2026-01-01T00:00:00Z"}`, n.Add(1))
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// build compiles pkg (the vegeta CLI from the pinned module, or benchload)
// into a temporary directory.
func build(b *testing.B, name, pkg string) string {
	bin := filepath.Join(b.TempDir(), name)
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "true" {
			b.Fatalf("build %s: %v\n%s", pkg, err, out)
		}
		b.Skipf("build %s (needs the go tool and the module cache): %v\n%s", pkg, err, out)
	}
	return bin
}

func envDefault(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// held reports whether a run at rate for du sent the plan within 1 %: the
// count and the achieved rate.
func (r loaderRun) held(rate int, du time.Duration) bool {
	planned := float64(rate) * du.Seconds()
	return float64(r.sent) >= 0.99*planned && r.rate >= 0.99*float64(rate) && r.rate <= 1.01*float64(rate)
}

// maxRateWorkers bounds the workers of both loaders in the max-rate search and
// run: unbounded, a loader that falls behind opens thousands of connections,
// and their TIME_WAIT ports spoil the runs that follow.
const maxRateWorkers = 256

// vegetaMaxRate is the highest paced rate the vegeta CLI holds within 1 %
// here: its unpaced throughput (64 workers) first, then paced tries from there
// down by 15 % steps (maxRateWorkers workers); 0 when it holds none.
func vegetaMaxRate(b *testing.B, bin, url string, du time.Duration) int {
	mx := runVegeta(b, bin, url, 0, du, 64)
	b.Logf("vegeta unpaced throughput here: %.0f/s (cpu %.1f µs/req)", mx.rate, mx.cpuPerReq())
	for rate := int(mx.rate); rate >= 100; rate = rate * 85 / 100 {
		v := runVegeta(b, bin, url, rate, du, maxRateWorkers)
		b.Logf("vegeta paced at %d/s: %d requests, %.1f/s", rate, v.sent, v.rate)
		if v.held(rate, du) {
			return rate
		}
	}
	return 0
}

func BenchmarkVersusVegeta(b *testing.B) {
	bin := build(b, "vegeta", "github.com/tsenart/vegeta/v12")
	loader := build(b, "benchload", "github.com/msgload/msgload/attack/internal/benchload/benchload")
	url := benchTarget(b)
	secs, _ := strconv.Atoi(envDefault("MSGLOAD_BENCH_SECONDS", "3"))
	du := time.Duration(max(secs, 1)) * time.Second
	var vegetaMax int
	repeat, _ := strconv.Atoi(envDefault("MSGLOAD_BENCH_REPEAT", "1"))
	repeat = max(repeat, 1)
	for _, rs := range strings.Split(envDefault("MSGLOAD_BENCH_RATES", "1000,4000,max"), ",") {
		if rs == "none" {
			continue
		}
		rate, err := strconv.Atoi(rs)
		if rs != "max" && (err != nil || rate <= 0) {
			b.Fatalf("MSGLOAD_BENCH_RATES: bad rate %q", rs)
		}
		b.Run("rate="+rs, func(b *testing.B) {
			if rs == "max" {
				if vegetaMax == 0 {
					vegetaMax = vegetaMaxRate(b, bin, url, du)
				}
				if vegetaMax == 0 {
					b.Skip("vegeta held no rate of 100/s or more within 1 % here (a busy machine): no max-rate run")
				}
				rate = vegetaMax
				b.ReportMetric(float64(rate), "rate/s")
			}
			// Pairs run alternately; the pair with the median CPU ratio is
			// reported, so a burst of other work on the machine hits both.
			type pair struct{ v, m loaderRun }
			var pairs []pair
			var workers uint64 // vegeta's default: unbounded
			if rs == "max" {
				workers = maxRateWorkers
			}
			for range repeat {
				p := pair{v: runVegeta(b, bin, url, rate, du, workers), m: runMsgload(b, loader, url, rate, du, 0, workers)}
				b.Logf("  pair: vegeta %.1f µs/req %.1f/s | msgload %.1f µs/req %.1f/s | ratio %.3f",
					p.v.cpuPerReq(), p.v.rate, p.m.cpuPerReq(), p.m.rate, p.m.cpuPerReq()/p.v.cpuPerReq())
				pairs = append(pairs, p)
			}
			slices.SortFunc(pairs, func(a, b pair) int {
				return cmp.Compare(a.m.cpuPerReq()/a.v.cpuPerReq(), b.m.cpuPerReq()/b.v.cpuPerReq())
			})
			v, m := pairs[len(pairs)/2].v, pairs[len(pairs)/2].m
			b.ReportMetric(v.cpuPerReq(), "vegeta-cpu-µs/req")
			b.ReportMetric(m.cpuPerReq(), "msgload-cpu-µs/req")
			b.ReportMetric(m.cpuPerReq()/v.cpuPerReq(), "cpu-ratio")
			b.ReportMetric(100*(v.rate-float64(rate))/float64(rate), "vegeta-rate-err-%")
			b.ReportMetric(100*(m.rate-float64(rate))/float64(rate), "msgload-rate-err-%")
			b.ReportMetric(float64(v.rss), "vegeta-peak-KiB")
			b.ReportMetric(float64(m.rss), "msgload-peak-KiB")
			b.Logf("held within 1 %%: vegeta %v, msgload %v", v.held(rate, du), m.held(rate, du))
			b.Logf("rate %d/s for %v: vegeta %d req %.1f µs/req %.1f/s ok %.3f rss %d KiB | msgload %d req %.1f µs/req %.1f/s ok %.3f rss %d KiB",
				rate, du, v.sent, v.cpuPerReq(), v.rate, v.success, v.rss, m.sent, m.cpuPerReq(), m.rate, m.success, m.rss)
		})
	}
	if counts := os.Getenv("MSGLOAD_BENCH_MEMORY"); counts != "" {
		rate, _ := strconv.Atoi(envDefault("MSGLOAD_BENCH_MEMORY_RATE", "10000"))
		rate = max(rate, 1)
		workers, _ := strconv.ParseUint(envDefault("MSGLOAD_BENCH_MEMORY_WORKERS", "64"), 10, 64)
		for _, cs := range strings.Split(counts, ",") {
			n, err := strconv.ParseInt(cs, 10, 64)
			if err != nil || n <= 0 {
				b.Fatalf("MSGLOAD_BENCH_MEMORY: bad count %q", cs)
			}
			b.Run(fmt.Sprintf("memory/requests=%d", n), func(b *testing.B) {
				m := runMsgload(b, loader, url, rate, 0, n, workers)
				b.ReportMetric(float64(m.rss), "msgload-peak-KiB")
				b.ReportMetric(float64(m.halves[0]), "msgload-1st-half-KiB")
				b.ReportMetric(float64(m.halves[1]), "msgload-2nd-half-KiB")
				b.ReportMetric(m.cpuPerReq(), "msgload-cpu-µs/req")
				b.Logf("%d requests at %d/s: peak RSS %d KiB (largest RSS in the 1st half %d KiB, 2nd half %d KiB), %.1f µs/req, %.1f/s",
					n, rate, m.rss, m.halves[0], m.halves[1], m.cpuPerReq(), m.rate)
			})
		}
	}
}
