package characterise

import (
	"fmt"
	"math"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/scenarios"
)

// probeStraddle sends across a window boundary: a fixed window admits its
// limit just before the boundary and its limit again just after, up to
// twice the limit within one window's length.
const probeStraddle = "straddle"

// The straddle probe's shape in windows of the fitted limiter: a pause
// that puts its start three quarters into a window (a new simulator's
// window starts with the probe), then a stream at four times the limit's
// rate for five eighths of a window — the limit in the quarter before the
// boundary, the limit again in the quarter after it, and an eighth to
// spare for a start that came late.
const (
	straddlePause  = 0.75
	straddleStream = 0.625
	straddleRate   = 4.0
)

// straddlePlanned is the straddle probe as planned, before the limiter is
// known: the longest window's pause and stream. Its requests are what the
// probes before it leave (sized at run time, from the fitted limit).
func straddlePlanned(o Options, cool time.Duration) Probe {
	return Probe{Name: probeStraddle, Takes: straddleTakes(o.MaxWindow), CoolDown: cool,
		What: "one client, when the limiter is a fixed window or a bucket: a pause to three quarters of a window, then a stream at 4× the limit's rate for 5/8 of a window (what the probes before leave of the budget)"}
}

func straddleTakes(w time.Duration) time.Duration {
	return time.Duration(float64(w)*(straddlePause+straddleStream)) + probeGrace
}

// fittedWindow is the burst probe's limiter as fitted (its verdict, limit
// and window), or ok false when it named none or its run is not trusted.
func (st *state) fittedWindow() (verdict string, limit float64, window time.Duration, ok bool) {
	pd := st.data[probeBurst]
	if pd == nil || pd.sum == nil || pd.verdict == reports.VerdictError {
		return "", 0, 0, false
	}
	alg := pd.sum.RateLimit.Algorithm
	w := time.Duration(alg.Window * float64(time.Second))
	return alg.Verdict, alg.Limit, w, alg.Limit > 0 && w > 0
}

// sizeStraddle fits the straddle probe to the limiter the burst probe
// found: only a fixed window or a bucket can straddle (a sliding log holds
// its limit in every window, which its fit already says), at most
// stream × rate requests (planned as none: what the probes before it leave
// of the budget, sized caps it), and its time from the fitted window.
func (st *state) sizeStraddle(pr Probe) Probe {
	v, limit, w, ok := st.fittedWindow()
	if !ok || (v != "fixed window" && v != "token bucket") {
		pr.Requests = 0
		return pr
	}
	rate := straddleRate * limit / w.Seconds()
	want := int64(math.Ceil(rate * w.Seconds() * straddleStream))
	pr.Requests = want // sized caps it by what the budget still allows
	if start, when, ok := st.straddleStart(time.Now(), pr.CoolDown); ok {
		pr.startAt = start
		pr.Takes = time.Until(start) - pr.CoolDown + streamOf(w) + probeGrace
		pr.What = fmt.Sprintf("one client: %d requests at %.3g/s (4× %g per %s) for %s, %s", pr.Requests, rate, limit, shortDur(w), dur(streamOf(w)).Raw, when)
		return pr
	}
	pr.Takes = straddleTakes(w)
	pr.What = fmt.Sprintf("one client: a pause of %s, then %d requests at %.3g/s (4× %g per %s) for %s, across the window's boundary",
		dur(pauseOf(w)).Raw, pr.Requests, rate, limit, shortDur(w), dur(streamOf(w)).Raw)
	return pr
}

func pauseOf(w time.Duration) time.Duration {
	return (time.Duration(float64(w) * straddlePause)).Round(time.Millisecond)
}

func streamOf(w time.Duration) time.Duration {
	return (time.Duration(float64(w) * straddleStream)).Round(time.Millisecond)
}

// straddleSteps is the probe's load: the pause, then the stream — the
// stream alone when it was timed to a boundary (the harness starts it then).
func (st *state) straddleSteps(pr Probe) []scenarios.Step {
	_, _, w, _ := st.fittedWindow()
	d := streamOf(w)
	stream := scenarios.Step{Rate: rateOf(float64(pr.Requests), d), Duration: dur(d)}
	if !pr.startAt.IsZero() {
		return []scenarios.Step{stream}
	}
	return []scenarios.Step{{Duration: dur(pauseOf(w))}, stream}
}
