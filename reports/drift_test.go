package reports

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// driftRun is a run of minutes at 4 messages a second whose request latency
// is reqAt(sec), each delivered by its callback delAt(sec) after its send,
// and every errEvery-th answered 500 (none when 0).
func driftRun(minutes int, reqAt, delAt func(sec float64) float64, errEvery int) *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8080" // no simulator: no truth to require
	d := time.Duration(minutes) * time.Minute
	r.meta.AttackEnd, r.meta.End = t0.Add(d), t0.Add(d+10*time.Second)
	r.meta.Planned.Duration = rundir.Duration(d)
	r.meta.Limit = rundir.Limit{}
	n := minutes * 60 * 4
	for i := range n {
		sec := float64(i) / 4
		seq := int64(i + 1)
		code := 200
		if errEvery > 0 && i%errEvery == 0 {
			code = 500
		}
		r.send(seq, "c1", sec, code, reqAt(sec))
		if code == 200 {
			r.callback(seq, sec+delAt(sec), rundir.StateDelivered, "sms", true, false)
		}
	}
	return r
}

// TestDriftFlat: a flat run gives slopes of about 0 and passes
// `requests.latency.p95_slope < 1ms/10m`; an error share that grows gives
// its slope (fraction per second).
func TestDriftFlat(t *testing.T) {
	for _, th := range []string{"requests.latency.p95_slope < 1ms/10m", "delivery.latency.p95_slope < 10ms/10m", "requests.error_rate_slope < 1%/10m", "drift.requests_latency_p95_slope < 1ms/10m"} {
		if err := summary.CheckThresholdFor(th, summary.Scope{Via: "sink"}); err != nil {
			t.Errorf("%s: refused: %v", th, err)
		}
	}
	flat := func(sec float64) float64 { return 0.05 + 0.002*math.Sin(sec*3.1) }
	r := driftRun(10, flat, func(float64) float64 { return 1 }, 0)
	// errors only in the second half: the share steps from 0 to 1/10.
	for i := range r.attempts {
		if a := &r.attempts[i]; a.Sent.Sub(t0) >= 5*time.Minute && i%10 == 0 {
			a.Code = 500
			a.Outcome, a.Class = rundir.Classify(500, nil)
		}
	}
	s := analyzed(t, r.write(t))
	if s.Drift == nil || s.Requests.Latency.P95Slope == nil || math.Abs(*s.Requests.Latency.P95Slope) > 0.0005/600 {
		t.Fatalf("flat run: request p95 slope %v, want about 0", s.Drift)
	}
	if err := s.Evaluate([]string{"requests.latency.p95_slope < 1ms/10m", "requests.error_rate_slope < 1%/10m"}); err != nil {
		t.Fatal(err)
	}
	if !s.Thresholds[0].OK {
		t.Errorf("flat run fails p95_slope < 1ms/10m: %+v", s.Thresholds[0])
	}
	if s.Requests.ErrorRateSlope == nil || *s.Requests.ErrorRateSlope <= 0 || s.Thresholds[1].OK {
		t.Errorf("error share from 0 to 10 %% over 10 minutes: slope %v, threshold %+v", deref(s.Requests.ErrorRateSlope), s.Thresholds[1])
	}
}

// TestDriftShortRunNoData: a run shorter than 10 minutes has drift null in
// summary.json, and a threshold on a slope fails with "no data".
func TestDriftShortRunNoData(t *testing.T) {
	s := analyzed(t, driftRun(9, func(float64) float64 { return 0.05 }, func(float64) float64 { return 1 }, 0).write(t))
	b, _ := json.Marshal(s)
	if s.Drift != nil || !strings.Contains(string(b), `"drift":null`) || strings.Contains(string(b), "p95_slope") {
		t.Fatalf("9-minute run: drift %+v, want null and no slopes", s.Drift)
	}
	if err := s.Evaluate([]string{"requests.latency.p95_slope < 1ms/10m"}); err != nil {
		t.Fatal(err)
	}
	if th := s.Thresholds[0]; th.OK || !strings.Contains(th.Error, "no data") {
		t.Fatalf("threshold on a slope of a short run: %+v, want failed with no data", th)
	}
	if s.Verdict == VerdictPass {
		t.Fatal("a short run passes a threshold on its drift")
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestDriftWindowsHoldFewBytes: a soak's drift keeps two latency counts a
// window (a minute) for as long as the run goes; 10 minutes at 1,000/s with
// latencies spread over three orders of magnitude hold at most 16 KiB a
// window — the buckets that hold a value, 8 bytes each (about 10 KB; the
// bound leaves room for what else the process allocates meanwhile). A map
// of them held 33 KB a window (0.55 bytes a message, growing with the run).
func TestDriftWindowsHoldFewBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	start := time.Unix(1_700_000_000, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := &driftRec{start: start}
	const windows, perWindow = 10, 60_000
	for i := range windows * perWindow {
		w := d.win(start.Add(time.Duration(i) * time.Millisecond))
		w.req.add(0.02 * math.Exp(rng.NormFloat64()))
		w.del.add(0.5 * math.Exp(rng.NormFloat64()))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	perWin := held / windows
	t.Logf("%d bytes a window of %d values", perWin, perWindow)
	if perWin > 16<<10 {
		t.Errorf("the drift holds %d bytes a window of %d values, want at most 16 KiB", perWin, perWindow)
	}
	runtime.KeepAlive(d)
}

// A minute whose requests went a tenth unanswered (timeouts) has its p95
// among them: only a lower bound, so the request latency has no slope and a
// threshold on it fails "no data", as the delivery's does over censored
// messages. Read as values, the timeouts made a slope of the timeout.
func TestDriftRequestsCensored(t *testing.T) {
	flat := func(float64) float64 { return 0.05 }
	r := driftRun(10, flat, func(float64) float64 { return 1 }, 0)
	for i := range r.attempts {
		if a := &r.attempts[i]; a.Sent.Sub(t0) >= 7*time.Minute && a.Sent.Sub(t0) < 8*time.Minute && i%10 == 0 {
			a.Code, a.Latency = 0, 30
			a.Outcome, a.Class = rundir.OutcomeUnknown, rundir.ClassTimeout
		}
	}
	s := analyzed(t, r.write(t))
	if s.Drift == nil || s.Requests.Latency.P95Slope != nil || !strings.Contains(strings.Join(s.Drift.Notes, "|"), "falls among requests with no answer") {
		t.Fatalf("a minute with a tenth unanswered: slope %v, drift %+v", s.Requests.Latency.P95Slope, s.Drift)
	}
	if err := s.Evaluate([]string{"requests.latency.p95_slope < 1ms/10m"}); err != nil {
		t.Fatal(err)
	}
	if s.Thresholds[0].OK || len(s.Thresholds[0].NoData) == 0 {
		t.Errorf("threshold on a slope with no data: %+v", s.Thresholds[0])
	}
}
