package characterise

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

// jitter is toxiproxy's latency toxic, on requests and answers alike.
type jitter struct{ latency, jitter time.Duration }

func (j jitter) String() string { return fmt.Sprintf("%s±%s", j.latency, j.jitter) }

// The jitters the limiters are characterised through: small against their
// windows (2 s; nginx's 2 s a token), and large against them.
var (
	smallJitter = jitter{20 * time.Millisecond, 15 * time.Millisecond}
	largeJitter = jitter{200 * time.Millisecond, 150 * time.Millisecond}
)

// behindJitter is the host of url behind toxiproxy (in-process, loopback)
// with j both ways: the URL to use instead.
func behindJitter(t *testing.T, url string, j jitter) string {
	t.Helper()
	p := testnet.Proxy(t, "jitter", strings.TrimPrefix(url, "http://"))
	testnet.Jitter(t, p, j.latency, j.jitter)
	return "http://" + p.Listen
}

// simTarget serves a simulator limiting notifications by rl on its own URL:
// a real target to characterise, one limiter for every probe (its window
// starts when it does).
func simTarget(t *testing.T, rl sim.RateLimit) string {
	t.Helper()
	cfg := sim.DefaultConfig()
	rl.RetryAfter = true
	cfg.RateLimit = rl
	sv, err := sim.New(cfg, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sv.Close() })
	srv := httptest.NewServer(sv.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// targetFile is a characterisation file of one client against the
// notification API at base (its token at token), no callbacks.
func targetFile(t *testing.T, name, base, token string) *File {
	t.Helper()
	f, err := parse(t, fmt.Sprintf(`name: %s
api: notify
target: { baseUrl: "%s", tokenUrl: "%s/oauth/token" }
clients:
  - { clientId: demo-1, clientSecret: demo }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { via: none }
`, name, base, token))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// characteriseLimiter runs the rate limiter's probes of f only: the burst
// probe (the burst, limit, algorithm, capacity, whether 429s use quota,
// Retry-After) and the straddle.
func characteriseLimiter(t *testing.T, f *File, o Options) *Result {
	t.Helper()
	return characteriseOnly(t, f, o, probeBurst, probeStraddle)
}

// jitterCase is a limiter to characterise through jitter: start serves it
// (the URL to limit through, and the one of tokens), and what characterise
// must find of it.
type jitterCase struct {
	name  string
	start func(t *testing.T) (base, token string)
	o     Options
	want  map[string]string
	burst [2]float64 // the true burst's least and most: the finding's interval must meet it
}

// jitterCases: the simulator's three limiters (429s counted or not), the two
// libraries' buckets, and nginx when it is installed; all only with all.
func jitterCases(all bool) []jitterCase {
	o := Options{Budget: 300, MaxWindow: 4 * time.Second, MaxTime: 10 * time.Minute}
	names := map[string]string{sim.AlgSliding: "sliding window", sim.AlgFixed: "fixed window", sim.AlgTokenBucket: "token bucket"}
	straddles := map[string]string{sim.AlgSliding: no, sim.AlgFixed: yes, sim.AlgTokenBucket: yes}
	// A bucket's burst also takes what refilled while it reached the
	// limiter: 10 a second, and the network (and a busy machine) spreads
	// the burst's 67 over up to 3 s
	bucket := [2]float64{20, 50}
	var cs []jitterCase
	for _, alg := range []string{sim.AlgFixed, sim.AlgSliding, sim.AlgTokenBucket} {
		for _, count := range []bool{false, true} {
			if !all && (alg != sim.AlgFixed || count) {
				continue
			}
			want := map[string]string{RuleAlgorithm: names[alg], RuleLimit: "20/2s", RuleCapacity: "20", RuleRetryAfter: "present", RuleStraddle: straddles[alg]}
			if alg != sim.AlgFixed { // a fixed window decides alike whether its 429s count
				want[RuleRefusalsUseQuota] = map[bool]string{true: yes, false: no}[count]
			}
			// a fixed window began at any phase before the burst: it may take two windows' limits
			burst := map[string][2]float64{sim.AlgSliding: {20, 20}, sim.AlgTokenBucket: bucket, sim.AlgFixed: {20, 40}}[alg]
			rl := sim.RateLimit{Requests: 20, Window: 2 * time.Second, Algorithm: alg, Count429: count}
			cs = append(cs, jitterCase{name: fmt.Sprintf("sim-%s/count429=%v", alg, count), o: o, want: want, burst: burst,
				start: func(t *testing.T) (string, string) { u := simTarget(t, rl); return u, u }})
		}
	}
	if testing.Short() {
		return cs
	}
	lib := map[string]string{RuleAlgorithm: "token bucket", RuleLimit: "20/2s", RuleCapacity: "20", RuleRetryAfter: "present"}
	cs = append(cs, jitterCase{name: "x-time-rate", o: o, want: lib, burst: bucket,
		start: func(t *testing.T) (string, string) { u := limitedServer(t, xTimeRate(10, 20)); return u, u }})
	if !all {
		return cs
	}
	cs = append(cs, jitterCase{name: "throttled-gcra", o: o, want: lib, burst: bucket,
		start: func(t *testing.T) (string, string) { u := limitedServer(t, throttledGCRA(t, 10, 19)); return u, u }})
	if bin, err := exec.LookPath("nginx"); err == nil {
		cs = append(cs, jitterCase{name: "nginx", o: Options{Budget: 400, MaxWindow: 20 * time.Second, MaxTime: 10 * time.Minute},
			want: map[string]string{RuleAlgorithm: "token bucket", RuleLimit: "30/1m", RuleCapacity: "6"}, burst: [2]float64{6, 8},
			start: func(t *testing.T) (string, string) {
				u := simTarget(t, sim.RateLimit{Algorithm: sim.AlgSliding}) // nginx limits, the simulator does not (no requests: no limit)
				port := testnet.StartNginx(t, bin, strings.TrimPrefix(u, "http://"), []int{5})[0]
				return fmt.Sprintf("http://127.0.0.1:%d", port), u
			}})
	}
	return cs
}

// Limiters characterised through toxiproxy's latency jitter on both ways,
// between characterise and the limiter: the simulator's (served as a real
// target), x/time/rate's and throttled's buckets, and nginx's limit_req. The
// rate limit's findings — algorithm, limit, capacity, burst, whether 429s
// used quota, the straddle — hold within their intervals or cannot be told,
// never a wrong value (through either, the answers take longer than the
// cold burst's spacing, and the fit's limit is not claimed: fitDoubt).
// make test has the simulator's fixed window and x/time/rate (not with
// -short) through the small jitter; -characterise.matrix every limiter
// through both.
func TestJitter(t *testing.T) {
	t.Parallel()
	jitters := []jitter{smallJitter}
	if *wholeMatrix {
		jitters = append(jitters, largeJitter)
	}
	for _, j := range jitters {
		for _, c := range jitterCases(*wholeMatrix) {
			t.Run(c.name+"/"+j.String(), func(t *testing.T) {
				t.Parallel()
				base, token := c.start(t)
				proxied := behindJitter(t, base, j)
				tokens := proxied
				if token != base {
					tokens = behindJitter(t, token, j)
				}
				res := characteriseLimiter(t, targetFile(t, "jitter", proxied, tokens), c.o)
				checkJitter(t, res.Contract, c)
			})
		}
	}
}

// checkJitter holds c's findings to jc.want or cannot tell, and the burst
// to meet jc.burst.
func checkJitter(t *testing.T, c *reports.Contract, jc jitterCase) {
	t.Helper()
	var text strings.Builder
	_ = c.Text(&text)
	for _, f := range c.Findings {
		w, ok := jc.want[f.Rule]
		switch {
		case f.Value == reports.CannotTell:
		case f.Rule == RuleBurst:
			if f.Low == nil || f.High == nil || *f.Low > jc.burst[1] || *f.High < jc.burst[0] {
				t.Errorf("burst %s, want within %v or cannot tell: %q\n%s", f.Value, jc.burst, f.Evidence, text.String())
			}
		case f.Rule == RuleLimit || f.Rule == RuleCapacity:
			if !matches(&f, w) {
				t.Errorf("%s = %s, want %s or cannot tell: %q\n%s", f.Rule, f.Value, w, f.Evidence, text.String())
			}
		case ok && f.Value != w:
			t.Errorf("%s = %s, want %s or cannot tell: %q\n%s", f.Rule, f.Value, w, f.Evidence, text.String())
		}
	}
	t.Logf("%s: %s\n%s", c.Verdict, strings.Join(c.Reasons, "; "), text.String())
}

// The straddle reads the window's phase: against the simulator's fixed
// window of 20 per 2 s served as a real target (one limiter for every
// probe, its window started with it), from six phases of that window at the
// characterisation's start, the straddle — its stream's middle on a
// boundary the burst probe's recoveries put — surely sees more than the
// limit accepted within one window each time (it paused to three quarters
// of a window after its cool-down before, at whatever phase that fell, and
// could not tell about three times in eight). A run that did not hold its
// plan may not tell. The fit must name the fixed window of 20 per 2 s or
// say it cannot tell: it named a sliding log of 20 per 1 s in 0–3 of 6
// runs (false recoveries from out-of-order answers hid the window's phase),
// and the straddle then said what a sliding log does. The simulator's
// Retry-After is exact (whole seconds, rounded up): never judged wrong (it
// was "no" whenever a burst's answers came back out of order). Half a
// minute each, at once: skipped with -short.
func TestStraddleReadsThePhase(t *testing.T) {
	if testing.Short() {
		t.Skip("half a minute of traffic per phase: not with -short")
	}
	t.Parallel()
	const w = 2 * time.Second
	for i := range 6 {
		t.Run(fmt.Sprintf("phase=%d-sixths", i), func(t *testing.T) {
			t.Parallel()
			u := simTarget(t, sim.RateLimit{Requests: 20, Window: w, Algorithm: sim.AlgFixed})
			time.Sleep(time.Duration(i) * w / 6)
			res := characteriseLimiter(t, targetFile(t, "phase", u, u), Options{Budget: 300, MaxWindow: 2 * w, MaxTime: 10 * time.Minute})
			c := res.Contract
			var text strings.Builder
			_ = c.Text(&text)
			find := func(rule string) reports.Finding {
				k := slices.IndexFunc(c.Findings, func(f reports.Finding) bool { return f.Rule == rule })
				if k < 0 {
					t.Fatalf("no %s finding\n%s", rule, text.String())
				}
				return c.Findings[k]
			}
			alg, lim, ra, st := find(RuleAlgorithm), find(RuleLimit), find(RuleRetryAfterRight), find(RuleStraddle)
			if ra.Value == no {
				t.Errorf("the simulator's exact Retry-After judged wrong: %q\n%s", ra.Evidence, text.String())
			}
			held := c.Verdict != reports.VerdictIncomplete && c.Verdict != reports.VerdictError
			switch {
			case alg.Value == reports.CannotTell:
				t.Logf("the fit cannot tell (%s): %s: %s", alg.Because, c.Verdict, strings.Join(c.Reasons, "; "))
			case alg.Value != "fixed window" || lim.Value != "20/2s":
				keepTrace(t, res.Dir, fmt.Sprintf("straddle-phase-%d", i))
				t.Fatalf("the fit named %s %s, not the fixed window of 20/2s: %q\n%s", alg.Value, lim.Value, alg.Evidence, text.String())
			case st.Value == yes:
			case st.Value == reports.CannotTell && !held:
				t.Logf("%s: %s", c.Verdict, strings.Join(c.Reasons, "; "))
			default:
				t.Errorf("straddle %s (%s)\n%s", st.Value, st.Because, text.String())
			}
		})
	}
}

// keepTrace copies the burst probe's attempts of the characterisation in
// dir into $TEST_ARTIFACTS (when set) as name.jsonl: the trace a wrong fit
// was made from, for reports/limitfit's testdata.
func keepTrace(t *testing.T, dir, name string) {
	out := os.Getenv("TEST_ARTIFACTS")
	if out == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(dir, probeBurst, rundir.AttemptsFile))
	if err == nil {
		err = os.WriteFile(filepath.Join(out, name+".jsonl"), b, 0o644)
	}
	if err != nil {
		t.Logf("the burst probe's trace not kept: %v", err)
		return
	}
	t.Logf("the burst probe's trace: %s", filepath.Join(out, name+".jsonl"))
}

// windowPhase: a fixed window of 2 s turning over at 1.3 s (and 3.3 s):
// refusals every 250 ms up to each boundary, acceptances after it, answered
// in 30 ms. A refusal held 400 ms by the network, answered after an
// acceptance sent 50 ms after it (the window's last slot went to the later
// one), is no recovery: the phase is read within the arcs of the true ones.
// Acceptances after refusals at no one phase (a window of another length)
// have none.
func TestWindowPhase(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := 2 * time.Second
	at := func(ms, code int, lat float64) rundir.Attempt {
		return rundir.Attempt{Op: "send", Code: code, Sent: t0.Add(time.Duration(ms) * time.Millisecond), Latency: lat}
	}
	var as []rundir.Attempt
	for _, b := range []int{1300, 3300} {
		for ms := b - 1000; ms < b; ms += 250 {
			as = append(as, at(ms, 429, 0.03))
		}
		as = append(as, at(b+50, 200, 0.03), at(b+300, 200, 0.03))
	}
	as = append(as, at(2000, 429, 0.4), at(2050, 200, 0.01)) // reordered: the last slot went to the later one
	b, half, ok := windowPhase(as, w)
	off := b.Sub(t0.Add(1300 * time.Millisecond))
	off -= off.Round(w) // to the nearest boundary
	if !ok || off.Abs() > half || half > 200*time.Millisecond {
		t.Errorf("phase %s ±%s (%v), %s from a boundary", b.Format("05.000"), half, ok, off)
	}
	var other []rundir.Attempt
	for _, ms := range []int{0, 700, 1500} {
		other = append(other, at(ms, 429, 0.03), at(ms+100, 200, 0.03))
	}
	if _, _, ok := windowPhase(other, w); ok {
		t.Error("recoveries 0.7 s and 0.8 s apart: phased as a window of 2 s")
	}
}
