package scenarios

import (
	"math"
	"slices"
	"time"

	"github.com/msgload/msgload/rundir"
)

// Plan is what a scenario will do, computed without sending anything: the dry
// run `msgload validate` prints and the harness sizes its work by.
type Plan struct {
	Name, API, Profile string
	Duration           time.Duration // how long requests are sent (0 for replay: read from the recording)
	RatePerSecond      float64       // mean planned rate, all clients
	PeakPerSecond      float64       // highest planned rate, all clients
	Requests           int64         // messages planned by the load profile (first attempts)
	Messages           int64         // messages really sent: Requests capped by maxMessages
	Probes             int64         // extra idempotency probe requests expected
	Retries            int64         // retries expected from the simulator's faults (embedded target)
	Attempts           int64         // send requests expected: Messages + Probes + Retries
	Limit              Rate          // the limit per client (zero: none)
	LimitEnforced      Rate          // the limit the embedded simulator enforces (sim.rateLimit.rate), or Limit
	Mode               string        // respect | exceed
	Expected429        float64       // share of first attempts expected to be answered 429
	// DiskBytes is about what the run writes to its directory: a send's
	// records for each request, a callback for each message accepted (via
	// the sink), the embedded simulator's truth of each message
	// (rundir.SendBytes, CallbackBytes, TruthBytes, TruthCallbackBytes). A message called back
	// or polled more than once writes more.
	DiskBytes int64
	Clients   []clientPlan
	Parts     []Plan // a file with parts: one plan per part, the fields above are totals
}

// clientPlan is one client's share of the plan.
type clientPlan struct {
	ID             string
	Requests       int64   // first attempts of messages (after maxMessages)
	RatePerSecond  float64 // mean
	PeakPerWindow  float64 // most requests in any window of the limit's length (sliding)
	LimitPerWindow float64 // the limit's count (0: no limit)
	Expected429    float64 // share expected to be answered 429 (fixed-window estimate)
}

// rateAt returns the planned total rate (requests per second) at t.
func (l *LoadSpec) rateAt(t time.Duration) float64 {
	switch l.Profile {
	case "constant":
		return l.Rate.PerSecond()
	case "ramp":
		d := l.Duration.D
		if d <= 0 {
			return 0
		}
		f := float64(t) / float64(d)
		return l.From.PerSecond() + (l.To.PerSecond()-l.From.PerSecond())*f
	case "steps":
		var start time.Duration
		for _, st := range l.Steps {
			if t < start+st.Duration.D {
				return st.Rate.PerSecond()
			}
			start += st.Duration.D
		}
		return 0
	case "sine":
		if l.Period.D <= 0 {
			return l.Rate.PerSecond()
		}
		return l.Rate.PerSecond() + l.Amplitude.PerSecond()*math.Sin(2*math.Pi*float64(t)/float64(l.Period.D))
	}
	return 0
}

// ProfileDuration is how long the profile runs before any requests cap: the
// duration, the sum of the steps, or for a constant rate with only a request
// count the time those take (0 for replay: the recording decides).
func (l *LoadSpec) ProfileDuration() time.Duration {
	switch l.Profile {
	case "constant":
		if !l.Duration.IsZero() {
			return l.Duration.D
		}
		if r := l.Rate.PerSecond(); r > 0 && l.Requests > 0 {
			return time.Duration(float64(l.Requests) / r * float64(time.Second))
		}
	case "steps":
		var d time.Duration
		for _, st := range l.Steps {
			d += st.Duration.D
		}
		return d
	case "ramp", "sine":
		return l.Duration.D
	}
	return 0
}

// planGrid is how many slices the plan integrates the rate over.
const planGrid = 4000

// Plan computes what the scenario will do. Rates are spread evenly across
// clients. The share of 429 is estimated with fixed windows of the enforced
// limit aligned on the start of the run; it is 0 when there is no limit.
func (s *Scenario) Plan() Plan {
	if len(s.Parts) > 0 {
		return s.planParts()
	}
	l := &s.Load
	p := Plan{Name: s.Name, API: s.API, Profile: l.Profile, Limit: s.Limit.Rate, Mode: s.Limit.Mode}
	p.LimitEnforced = s.Limit.Rate
	if s.Target.Embedded && !s.Sim.RateLimit.Rate.IsZero() {
		p.LimitEnforced = s.Sim.RateLimit.Rate
	}
	n := max(len(s.Creds), 1)
	c, total := l.curve()
	p.Duration = c.d
	p.Requests = int64(math.Round(total))
	if l.Profile == "replay" {
		p.Requests = l.Requests
	}
	if c.d > 0 {
		p.RatePerSecond = round9(total / c.d.Seconds())
	}
	p.PeakPerSecond = round9(c.peakRate)
	p.Messages = p.Requests
	if s.MaxMessages > 0 && p.Messages > s.MaxMessages {
		p.Messages = s.MaxMessages
	}
	probeShare, retryShare := s.overheads()
	p.Probes = int64(math.Round(probeShare * float64(p.Messages)))
	p.Retries = int64(math.Round(retryShare * float64(p.Messages)))
	p.Attempts = p.Messages + p.Probes + p.Retries
	// probes and retries are requests too: they count against the limit
	overhead := 1 + probeShare + retryShare
	// messages really sent stop at maxMessages: scale the per-window counts
	scale := 1.0
	if total > 0 {
		scale = float64(p.Messages) / total
	}
	var clientPeak float64
	if !s.Limit.Rate.IsZero() {
		// a message capped by maxMessages is never sent, so the peak is at most the cap
		clientPeak = min(c.peak(s.Limit.Rate.Per, p.PeakPerSecond), float64(p.Messages)) * overhead / float64(n)
	}
	if lim := p.LimitEnforced; !lim.IsZero() && c.d > 0 && p.Messages > 0 {
		rejectedPerClient := c.rejectedPerClient(lim, scale, overhead, n)
		p.Expected429 = min(1, rejectedPerClient*float64(n)/(float64(p.Messages)*overhead))
	}
	p.Clients = s.clientPlans(&p, n, scale, clientPeak)
	p.DiskBytes = s.diskBytes(&p)
	return p
}

// diskBytes is p.DiskBytes: about what a run of the plan writes.
func (s *Scenario) diskBytes(p *Plan) int64 {
	called := 0.0 // messages called back
	if s.Delivery.Via != "none" && s.Delivery.Via != "poll" {
		called = float64(p.Messages) * (1 - p.Expected429)
	}
	b := float64(p.Attempts)*rundir.SendBytes + called*rundir.CallbackBytes
	if s.Target.Embedded {
		b += float64(p.Messages)*rundir.TruthBytes + called*rundir.TruthCallbackBytes
	}
	return int64(math.Round(b))
}

// planParts is the plan of a scenario with parts: the parts' plans, their
// counts and rates added, the longest duration, and the share of 429 over
// all their messages.
func (s *Scenario) planParts() Plan {
	p := Plan{Name: s.Name}
	var first, rejected float64
	for i := range s.Parts {
		pp := s.Parts[i].Plan()
		p.Parts = append(p.Parts, pp)
		p.add(pp)
		first += float64(pp.Messages)
		rejected += pp.Expected429 * float64(pp.Messages)
	}
	if first > 0 {
		p.Expected429 = rejected / first
	}
	return p
}

// add adds part q's counts and rates to p, a plan of parts that run at
// once: its duration is the longest part's.
func (p *Plan) add(q Plan) {
	p.Requests += q.Requests
	p.Messages += q.Messages
	p.Probes += q.Probes
	p.Retries += q.Retries
	p.Attempts += q.Attempts
	p.DiskBytes += q.DiskBytes
	p.RatePerSecond += q.RatePerSecond
	p.PeakPerSecond += q.PeakPerSecond
	p.Duration = max(p.Duration, q.Duration)
}

// curve is the planned count of messages over the run: cum[i] by i×dt
// (planGrid slices, linear between their ends), until d.
type curve struct {
	cum      []float64
	dt       time.Duration // a grid slice
	d        time.Duration // the run's length (a requests cap shortens the profile's)
	peakRate float64       // the highest rate at a grid point, per second
}

// curve integrates the load's rate over its profile; total is the count
// planned (the requests cap when it shortens the run).
func (l *LoadSpec) curve() (c curve, total float64) {
	c.d = l.ProfileDuration()
	c.cum = make([]float64, planGrid+1)
	c.dt = c.d / planGrid
	for i := 1; i <= planGrid && c.dt > 0; i++ {
		a, b := l.rateAt(time.Duration(i-1)*c.dt), l.rateAt(time.Duration(i)*c.dt)
		c.peakRate = max(c.peakRate, a, b)
		c.cum[i] = c.cum[i-1] + (a+b)/2*c.dt.Seconds()
	}
	total = c.cum[planGrid]
	// a requests cap shortens the run
	if l.Requests > 0 && total > float64(l.Requests)+0.5 {
		for i := 1; i <= planGrid; i++ {
			if c.cum[i] >= float64(l.Requests) {
				frac := (float64(l.Requests) - c.cum[i-1]) / (c.cum[i] - c.cum[i-1])
				c.d = time.Duration((float64(i-1) + frac) * float64(c.dt))
				break
			}
		}
		total = float64(l.Requests)
	}
	return c, total
}

// countAt is the count at time t (linear between grid points), capped by the
// run's end.
func (c *curve) countAt(t time.Duration) float64 {
	if c.dt <= 0 || t <= 0 {
		return 0
	}
	if t >= c.d {
		t = c.d
	}
	x := float64(t) / float64(c.dt)
	i := int(x)
	if i >= planGrid {
		return c.cum[planGrid]
	}
	return c.cum[i] + (c.cum[i+1]-c.cum[i])*(x-float64(i))
}

// peak is the most messages any window of length w holds; peakRate is the
// plan's peak per second, which a window shorter than a grid slice (where the
// rate is linear) holds at most.
func (c *curve) peak(w time.Duration, peakRate float64) float64 {
	if w <= 0 || c.d <= 0 {
		return 0
	}
	best := 0.0
	if w < c.dt {
		// the window is shorter than a grid slice, where the rate is linear
		return peakRate * w.Seconds()
	}
	step := max(min(w, c.d)/200, c.dt/4, 1)
	for t := time.Duration(0); t <= c.d; t += step {
		best = max(best, c.countAt(t+w)-c.countAt(t))
	}
	if w >= c.d {
		best = max(best, c.countAt(c.d))
	}
	return best
}

// rejectedPerClient is how many of a client's requests the limit lim refuses
// over the run, with fixed windows aligned on its start: the count of each
// window (scaled by scale for maxMessages, by overhead for probes and
// retries, shared by n clients) over lim.Count.
func (c *curve) rejectedPerClient(lim Rate, scale, overhead float64, n int) float64 {
	var rejected float64
	if windows := c.d / lim.Per; windows > 4*planGrid {
		// many windows: within a grid slice the rate is about constant, so each
		// of the slice's windows carries rate × window
		for i := 1; i <= planGrid; i++ {
			k := (c.cum[i] - c.cum[i-1]) / c.dt.Seconds() * lim.Per.Seconds() * scale * overhead / float64(n)
			rejected += max(0, k-lim.Count) * (float64(c.dt) / float64(lim.Per))
		}
		return rejected
	}
	for start := time.Duration(0); start < c.d; start += lim.Per {
		k := (c.countAt(start+lim.Per) - c.countAt(start)) * scale * overhead / float64(n)
		rejected += max(0, k-lim.Count)
	}
	return rejected
}

// clientPlans spreads the plan p over n clients: their messages (the first
// ones one more when they do not divide), rates and peaks.
func (s *Scenario) clientPlans(p *Plan, n int, scale, clientPeak float64) []clientPlan {
	var out []clientPlan
	per := p.Messages / int64(n)
	extra := p.Messages % int64(n)
	for i := range n {
		cp := clientPlan{ID: "client-1", Requests: per, RatePerSecond: p.RatePerSecond * scale / float64(n),
			PeakPerWindow: clientPeak, Expected429: p.Expected429}
		if i < len(s.Creds) {
			cp.ID = s.Creds[i].ID
		}
		if int64(i) < extra {
			cp.Requests++
		}
		if !s.Limit.Rate.IsZero() {
			cp.LimitPerWindow = s.Limit.Rate.Count
		}
		out = append(out, cp)
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// round9 drops the integration's floating-point noise (2.0000000000000306 → 2).
func round9(x float64) float64 { return math.Round(x*1e9) / 1e9 }

// overheads returns the extra requests per message: idempotency probes (one
// sequential resend, Concurrent copies at once, InFlight copies with the
// first send and one changed body per probed message) and, on
// the embedded target, the retries the simulator's faults are expected to cause
// (a fault share f retried up to max times: f + f² + … + f^max).
func (s *Scenario) overheads() (probes, retries float64) {
	if f := s.Idempotency.Probes.F; f > 0 {
		probes = f * float64(1+s.Idempotency.Concurrent+s.Idempotency.InFlight+b2i(s.Idempotency.ChangedBody))
	}
	if !s.Target.Embedded || s.Retry.Max <= 0 {
		return probes, 0
	}
	on := func(v string) bool { return slices.Contains(s.Retry.On, v) }
	fl := s.Sim.Faults
	f := 0.0
	if on("500") {
		f += fl.Error500.F + fl.ProcessedThen500.F
	}
	if on("503") {
		f += fl.Error503.F
	}
	if on("reset") || on("timeout") {
		f += fl.ResetAfterProcessing.F
	}
	f = min(f, 1)
	term := 1.0
	for range min(s.Retry.Max, 100) {
		term *= f
		retries += term
	}
	return probes, retries
}
