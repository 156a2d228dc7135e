package characterise

import (
	"fmt"
	"strconv"
	"time"

	"github.com/msgload/msgload/scenarios"
)

// state carries what the probes found to the probes after them and to the
// findings.
type state struct {
	base *scenarios.Scenario
	plan *Plan
	// burst: the burst probe's cold burst size (accepted before the first 429), 0 when none came.
	burst int64
	data  map[string]*probeData
	ran   map[string]Probe // each probe as it was run
	// hook: the retry schedule the first callback probe saw (nil before it)
	hook *schedule
}

// sized is pr fitted to what the budget still allows and to what the probes
// before it found: the isolation probe sends a little more than twice the
// burst (each client past its own burst), or nothing when no burst was found.
func (st *state) sized(pr Probe, left int64) Probe {
	if pr.Name == probeIsolation {
		want := int64(0)
		if st.burst > 0 {
			want = isolationNeed(st.burst)
		}
		pr.Requests = min(pr.Requests, want)
		pr.Takes = burstFor(pr.Requests, st.plan.BurstRate) + probeGrace
		pr.What = fmt.Sprintf("two clients at once, %d requests each at %g/s in all (each past the burst of %d)", pr.Requests/2, st.plan.BurstRate, st.burst)
	}
	switch pr.Name {
	case probeStraddle:
		pr = st.sizeStraddle(pr)
	case probeSustain:
		pr = st.sizeSustain(pr, left)
	case probeToken:
		pr = st.sizeToken(pr, left)
	}
	pr.Requests = min(pr.Requests, max(left, 0))
	if st.ran == nil {
		st.ran = map[string]Probe{}
	}
	st.ran[pr.Name] = pr
	return pr
}

// record keeps a probe's data and what the next probes need of it.
func (st *state) record(pr Probe, pd *probeData) {
	if st.data == nil {
		st.data = map[string]*probeData{}
	}
	st.data[pr.Name] = pd
	if pr.Name == probeBurst && pd != nil {
		st.burst = burstSize(pd.attempts, st.burstCount()).low
	}
	if pr.Name == probeHookRetry && pd != nil {
		if h, err := readHookData(pd); err == nil {
			st.hook = readSchedule(h)
		}
	}
}

// burstCount is how many requests the burst probe's cold burst has.
func (st *state) burstCount() int64 {
	for _, p := range st.plan.Probes {
		if p.Name == probeBurst {
			return p.burst
		}
	}
	return 0
}

// scenario is the probe as a scenario: the file's target, auth, clients,
// message and sim, with the probe's load, no retries, no thresholds, a hard
// cap of its share of the budget, and the limit exceeded on purpose.
func (st *state) scenario(pr Probe) *scenarios.Scenario {
	s := *st.base
	s.Name = st.base.Name + "-" + pr.Name
	s.Thresholds = nil
	s.Retry.Max, s.Retry.On = 0, nil
	// the limit is what is measured: none is stated, or the fit would prefer
	// it (a window longer than the probe, never refuted within it)
	s.Limit = scenarios.Limit{Mode: "exceed"}
	s.Idempotency = scenarios.Idempotency{}
	s.Delivery = scenarios.Delivery{Via: "none", Grace: dur(time.Second)}
	s.Load = scenarios.LoadSpec{Profile: "constant", MaxInFlight: st.base.Load.MaxInFlight}
	s.Creds = st.base.Creds[:1]
	s.Clients = scenarios.Clients{N: 1}
	rate := st.plan.BurstRate
	switch pr.Name {
	case probeIdempotency:
		n := pr.Requests / idemPerMsg
		s.Load.Rate, s.Load.Requests = rateOf(1, time.Second), n
		idemScenario(&s)
		s.Delivery = st.base.Delivery
		s.Delivery.Grace = dur(grace(st.base))
		s.MaxMessages = n
	case probeBurst:
		s.Load.Profile = "steps"
		s.Load.Steps = burstSteps(pr, st.plan)
		s.Load.Requests = pr.Requests
		s.MaxMessages = pr.Requests
	case probeHookRetry, probeHookRetryAfter, probeHookGone, probeHookTimeout:
		st.hookScenario(&s, pr)
	case probeMsgStatus:
		st.failoverScenario(&s, pr)
	case probeMsgRetry:
		st.msgRetryScenario(&s, pr)
	case probeStraddle:
		s.Load.Profile = "steps"
		s.Load.Steps = st.straddleSteps(pr)
		s.Load.Requests = pr.Requests
		s.MaxMessages = pr.Requests
	case probeSustain:
		s.Load.Profile = "steps"
		s.Load.Steps = st.sustainSteps()
		s.Load.Requests = pr.Requests
		s.MaxMessages = pr.Requests
	case probeIsolation:
		s.Creds = st.base.Creds[:2]
		s.Clients = scenarios.Clients{N: 2}
		s.Load.Rate, s.Load.Requests = rateOf(rate, time.Second), pr.Requests
		s.MaxMessages = pr.Requests
	}
	return &s
}

func dur(d time.Duration) scenarios.Duration { return scenarios.Duration{Raw: d.String(), D: d} }

func rateOf(n float64, per time.Duration) scenarios.Rate {
	return scenarios.Rate{Raw: strconv.FormatFloat(n, 'f', -1, 64) + "/" + per.String(), Count: n, Per: per}
}

// burstSteps is the burst probe's load: the cold burst in two parts — a
// few requests, a silent gap, then the rest — and the recovery trace. The
// gap gives the first sends a pattern a sliding log frees them in (the few
// one window after the first part, the rest one window after the second),
// where a fixed window frees everything at one boundary and a token bucket
// refills steadily: the trace, slower than the burst but faster than the
// few freed slots last, sees which; the second burst exhausts the limiter
// again once it recovered, at a phase a window's other readings do not
// share (the reports' limiter fit names it from all of them). A pause
// comes before it: a limiter whose 429s use quota (a token bucket in debt)
// may not recover under the trace's own refusals, and a silence is where
// it shows that it does (a bucket that did not count them would have
// accepted in the trace already).
func burstSteps(pr Probe, p *Plan) []scenarios.Step {
	rate := p.BurstRate
	burst := min(pr.burst, pr.Requests)
	trace := min(pr.trace, pr.Requests-burst)
	reburst := pr.Requests - burst - trace
	td := traceFor(p.MaxWindow) + gapFor(p.MaxWindow)
	first := firstPart(burst, trace, td, gapFor(p.MaxWindow))
	at := func(n int64) scenarios.Step {
		return scenarios.Step{Rate: rateOf(rate, time.Second), Duration: dur(burstFor(n, rate))}
	}
	steps := []scenarios.Step{at(first), {Duration: dur(gapFor(p.MaxWindow))}, at(burst - first)} // rate 0: a pause
	if trace > 0 {
		steps = append(steps, scenarios.Step{Rate: rateOf(float64(trace), td), Duration: dur(td)})
	}
	if reburst > 0 {
		steps = append(steps, scenarios.Step{Duration: dur(gapFor(p.MaxWindow))}, at(reburst))
	}
	return steps
}

// firstPart is the cold burst's first part: a sixteenth, but at most half
// of what the trace sends in one gap — a sliding log frees only these one
// window after them, and the trace must send more than that before the
// second part's slots free, or a window of another length fits as well —
// and at least 1.
func firstPart(burst, trace int64, traceFor, gap time.Duration) int64 {
	inGap := int64(float64(trace) / traceFor.Seconds() * gap.Seconds() / 2)
	return max(min(burst/16, inGap, burst), 1)
}

// gapFor is the silence between the burst's two parts: a quarter of the
// longest window.
func gapFor(w time.Duration) time.Duration { return w / 4 }
