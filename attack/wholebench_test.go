package attack_test

import (
	"bytes"
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
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The whole-process comparison (issue 16): the msgload binary running a
// messaging scenario (`msgload run FILE --out DIR --metrics-addr "" --quiet`,
// delivery: none, one client with Basic auth) against `vegeta attack` at the
// same rate, with the same body and headers, against the same loopback target,
// as child processes run alternately. CPU is user+sys from each child's
// rusage, peak RSS its VmHWM, with the largest file-backed (RssFile: the
// executable's pages) and anonymous (RssAnon: heap, stacks) parts sampled
// (runMeasuredSplit); requests are counted by the target.
//
//	go test ./attack -run '^$' -bench RunVersusVegeta -benchtime 1x -timeout 30m
//
// Environment: MSGLOAD_BENCH_PAIRS (alternating pairs per rate, default 5),
// MSGLOAD_BENCH_WHOLE_RATES (comma-separated, "max" = vegeta's maximum measured
// first as in BenchmarkVersusVegeta; default "5000,max"),
// MSGLOAD_BENCH_WHOLE_SECONDS (per run, default 5), MSGLOAD_BENCH_PROFILE_DIR
// (a directory: each child writes its CPU profile there, vegeta's as
// cpu-vegeta-N.pprof through its -profile flag, msgload's as cpu-msgload-N.pprof through
// MSGLOAD_CPUPROFILE, N the pair — to compare where the two spend it).

// wholeTarget is the loopback service: it answers every send as accepted,
// counts the requests, and keeps the first request's body and headers.
type wholeTarget struct {
	url   string
	n     atomic.Int64
	mu    sync.Mutex
	first *http.Request
	body  []byte
}

func newWholeTarget(b *testing.B) *wholeTarget {
	t := &wholeTarget{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := t.n.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/messaging/v1/send" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		t.mu.Lock()
		if t.first == nil {
			t.first, t.body = r, body
		}
		t.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"txId":"00000000-0000-0000-0000-%012d","state":"ACCEPTED","updatedAt":"2026-01-01T00:00:00Z"}`, n)
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	t.url = "http://" + ln.Addr().String()
	return t
}

type wholeRun struct {
	cpu        time.Duration
	rss        int64 // peak, KiB
	file, anon int64 // the largest file-backed and anonymous RSS sampled, KiB
	reqs       int64 // answered by the target
}

func (r wholeRun) cpuPerReq() float64 { return float64(r.cpu.Microseconds()) / float64(max(r.reqs, 1)) }

const wholeScenario = `name: wholebench
api: messaging
target: { baseUrl: "%s" }
auth: { login: bench, password: "${MSGLOAD_BENCH_PASS}" }
load: { profile: constant, rate: %d/s, %s }
message:
  recipient: "+79990000001"
  text: "bench {{.Seq}}"
  scenario:
    - channel: sms
      sender: msgload
delivery: { via: none }
`

func runMsgloadWhole(b *testing.B, bin string, t *wholeTarget, rate int, load, prof string) wholeRun {
	dir := b.TempDir()
	sc := filepath.Join(dir, "wholebench.yaml")
	if err := os.WriteFile(sc, []byte(fmt.Sprintf(wholeScenario, t.url, rate, load)), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "run", sc, "--out", filepath.Join(dir, "runs"), "--metrics-addr", "", "--quiet")
	cmd.Env = append(os.Environ(), "MSGLOAD_BENCH_PASS=bench-pass")
	if prof != "" {
		cmd.Env = append(cmd.Env, "MSGLOAD_CPUPROFILE="+prof)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	n0 := t.n.Load()
	m, err := runMeasuredSplit(cmd)
	if err != nil {
		b.Fatalf("msgload run: %v\n%s", err, out.String())
	}
	return wholeRun{cpu: m.cpu, rss: m.peak, file: m.file, anon: m.anon, reqs: t.n.Load() - n0}
}

// vegetaTargets writes vegeta's targets file: the body and headers of
// msgload's first send (a warm-up run of one message).
func vegetaTargets(b *testing.B, t *wholeTarget) string {
	dir := b.TempDir()
	t.mu.Lock()
	r, body := t.first, t.body
	t.mu.Unlock()
	if r == nil {
		b.Fatal("the warm-up msgload run sent nothing")
	}
	bodyFile := filepath.Join(dir, "body.json")
	os.WriteFile(bodyFile, body, 0o644)
	var sb strings.Builder
	sb.WriteString("POST " + t.url + "/messaging/v1/send\n")
	for _, h := range []string{"Authorization", "Content-Type", "Accept"} {
		if v := r.Header.Get(h); v != "" {
			sb.WriteString(h + ": " + v + "\n")
		}
	}
	sb.WriteString("@" + bodyFile + "\n")
	targets := filepath.Join(dir, "targets.txt")
	os.WriteFile(targets, []byte(sb.String()), 0o644)
	return targets
}

func runVegetaWhole(b *testing.B, bin, targets string, t *wholeTarget, rate int, du time.Duration, workers uint64, prof string) wholeRun {
	var args []string
	if prof != "" {
		// vegeta profiles the CPU when the name starts with "cpu", and
		// writes NAME.pprof in its working directory.
		args = append(args, "-profile", strings.TrimSuffix(filepath.Base(prof), ".pprof"))
	}
	args = append(args, "attack", "-targets="+targets, "-output="+filepath.Join(b.TempDir(), "results.bin"),
		"-duration="+du.String(), "-rate="+strconv.Itoa(rate)+"/s")
	if workers > 0 {
		args = append(args, "-max-workers="+strconv.FormatUint(workers, 10))
	}
	cmd := exec.Command(bin, args...)
	if prof != "" {
		cmd.Dir = filepath.Dir(prof)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	n0 := t.n.Load()
	m, err := runMeasuredSplit(cmd)
	if err != nil {
		b.Fatalf("vegeta: %v\n%s", err, out.String())
	}
	return wholeRun{cpu: m.cpu, rss: m.peak, file: m.file, anon: m.anon, reqs: t.n.Load() - n0}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func BenchmarkRunVersusVegeta(b *testing.B) {
	vbin := build(b, "vegeta", "github.com/tsenart/vegeta/v12")
	mbin := build(b, "msgload", "github.com/msgload/msgload/cmd/msgload")
	t := newWholeTarget(b)
	secs, _ := strconv.Atoi(envDefault("MSGLOAD_BENCH_WHOLE_SECONDS", "5"))
	du := time.Duration(max(secs, 1)) * time.Second
	pairs, _ := strconv.Atoi(envDefault("MSGLOAD_BENCH_PAIRS", "5"))
	pairs = max(pairs, 1)

	// Warm-up: one message, so vegeta sends msgload's body and headers.
	runMsgloadWhole(b, mbin, t, 10, "requests: 1", "")
	profDir := os.Getenv("MSGLOAD_BENCH_PROFILE_DIR")
	profile := func(who string, i int) string {
		if profDir == "" {
			return ""
		}
		return filepath.Join(profDir, fmt.Sprintf("cpu-%s-%d.pprof", who, i+1))
	}
	targets := vegetaTargets(b, t)

	var vegetaMax int
	for _, rs := range strings.Split(envDefault("MSGLOAD_BENCH_WHOLE_RATES", "5000,max"), ",") {
		rate, err := strconv.Atoi(rs)
		if rs != "max" && (err != nil || rate <= 0) {
			b.Fatalf("MSGLOAD_BENCH_WHOLE_RATES: bad rate %q", rs)
		}
		b.Run("rate="+rs, func(b *testing.B) {
			var workers uint64 // vegeta's default: unbounded
			if rs == "max" {
				if vegetaMax == 0 {
					// benchload's body (BenchmarkVersusVegeta's search), of the same shape.
					vegetaMax = vegetaMaxRate(b, vbin, t.url, du)
				}
				if vegetaMax == 0 {
					b.Skip("vegeta held no rate of 100/s or more within 1 % here: no max-rate run")
				}
				rate, workers = vegetaMax, maxRateWorkers
				b.ReportMetric(float64(rate), "rate/s")
			}
			var cpuRatios, rssRatios []float64
			var vs, ms []wholeRun
			for i := range pairs {
				v := runVegetaWhole(b, vbin, targets, t, rate, du, workers, profile("vegeta", i))
				load := "duration: " + du.String()
				if workers > 0 {
					// The same bound on requests in flight as vegeta's workers.
					load += ", maxInFlight: " + strconv.FormatUint(workers, 10)
				}
				m := runMsgloadWhole(b, mbin, t, rate, load, profile("msgload", i))
				cr, rr := m.cpuPerReq()/v.cpuPerReq(), float64(m.rss)/float64(v.rss)
				cpuRatios, rssRatios = append(cpuRatios, cr), append(rssRatios, rr)
				vs, ms = append(vs, v), append(ms, m)
				planned := int64(float64(rate) * du.Seconds())
				short := func(r wholeRun) string {
					if float64(r.reqs) < 0.99*float64(planned) {
						return " (SHORT of the plan)"
					}
					return ""
				}
				b.Logf("pair %d at %d/s for %v: vegeta %d req%s cpu %.2f s (%.1f µs/req) peak %d KiB (file %d, anon %d) | msgload %d req%s cpu %.2f s (%.1f µs/req) peak %d KiB (file %d, anon %d) | cpu/req ratio %.3f, peak ratio %.3f",
					i+1, rate, du, v.reqs, short(v), v.cpu.Seconds(), v.cpuPerReq(), v.rss, v.file, v.anon, m.reqs, short(m), m.cpu.Seconds(), m.cpuPerReq(), m.rss, m.file, m.anon, cr, rr)
			}
			med := func(rs []wholeRun, f func(wholeRun) float64) float64 {
				var xs []float64
				for _, r := range rs {
					xs = append(xs, f(r))
				}
				return median(xs)
			}
			cpuS := func(r wholeRun) float64 { return r.cpu.Seconds() }
			peak := func(r wholeRun) float64 { return float64(r.rss) }
			b.ReportMetric(med(vs, wholeRun.cpuPerReq), "vegeta-cpu-µs/req")
			b.ReportMetric(med(ms, wholeRun.cpuPerReq), "msgload-cpu-µs/req")
			b.ReportMetric(median(cpuRatios), "cpu-per-req-ratio")
			b.ReportMetric(med(vs, peak), "vegeta-peak-KiB")
			b.ReportMetric(med(ms, peak), "msgload-peak-KiB")
			b.ReportMetric(median(rssRatios), "peak-rss-ratio")
			file := func(r wholeRun) float64 { return float64(r.file) }
			anon := func(r wholeRun) float64 { return float64(r.anon) }
			b.ReportMetric(med(vs, file), "vegeta-file-KiB")
			b.ReportMetric(med(ms, file), "msgload-file-KiB")
			b.ReportMetric(med(vs, anon), "vegeta-anon-KiB")
			b.ReportMetric(med(ms, anon), "msgload-anon-KiB")
			b.Logf("median of %d pairs at %d/s: vegeta cpu %.2f s %.1f µs/req peak %.0f KiB | msgload cpu %.2f s %.1f µs/req peak %.0f KiB | msgload/vegeta cpu/req %.3f (%.3f–%.3f), peak RSS %.3f (%.3f–%.3f)",
				pairs, rate, med(vs, cpuS), med(vs, wholeRun.cpuPerReq), med(vs, peak), med(ms, cpuS), med(ms, wholeRun.cpuPerReq), med(ms, peak),
				median(cpuRatios), slices.Min(cpuRatios), slices.Max(cpuRatios), median(rssRatios), slices.Min(rssRatios), slices.Max(rssRatios))
		})
	}
}
