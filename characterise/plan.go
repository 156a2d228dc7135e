package characterise

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// Probe names: each is a generated scenario, run by the harness in its own
// directory below the characterisation's.
const (
	probeIdempotency = "idempotency"
	probeBurst       = "burst-recovery"
	probeIsolation   = "isolation"
)

// Options are what a characterisation may spend.
type Options struct {
	// Budget is the most requests the probes send, retries and copies
	// included (each probe has a share and a hard cap; never exceeded).
	Budget int64
	// MaxTime bounds the whole characterisation; a plan longer is refused.
	MaxTime time.Duration
	// MaxWindow is the longest limiter window the recovery trace waits out
	// (a sliding or fixed window of up to this frees its slots within it).
	MaxWindow time.Duration
	// BurstRate is the rate of the cold bursts (requests a second).
	BurstRate float64
	// HookWait is how long each callback probe waits for the retries of
	// what the sink refused (shortened to fit --max-time).
	HookWait time.Duration
}

// Defaults of Options.
const (
	DefaultBudget    = 600
	DefaultMaxTime   = 5 * time.Minute
	DefaultMaxWindow = time.Minute
	defaultBurstRate = 100
)

func (o *Options) defaults() {
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.MaxTime <= 0 {
		o.MaxTime = DefaultMaxTime
	}
	if o.MaxWindow <= 0 {
		o.MaxWindow = DefaultMaxWindow
	}
	if o.BurstRate <= 0 {
		o.BurstRate = defaultBurstRate
	}
	if o.HookWait <= 0 {
		o.HookWait = DefaultHookWait
	}
}

// Probe is one step of the plan.
type Probe struct {
	Name string
	What string
	// Requests is the probe's share of the budget: its hard cap. The
	// isolation probe's count is set from the burst the first probe found.
	Requests int64
	// Takes is how long it is planned to take, its grace wait included.
	Takes time.Duration
	// CoolDown is waited before it (a real target's limiter must be cold
	// again; an embedded one is new for each probe).
	CoolDown time.Duration
	// burst is the burst probe's cold burst (the rest of Requests is its
	// recovery trace and the second burst), trace its trace.
	burst, trace int64
	// ladder: the window probe's delays (probes_window.go).
	ladder []time.Duration
	// startAt: when the straddle's stream starts, timed to a boundary of
	// the window (straddle_phase.go); zero: after its pause.
	startAt time.Time
}

// Plan is the probes in order, within the budget and the time.
type Plan struct {
	Options
	Probes []Probe
	// hookWait is the callback probes' wait; hookWhy why they were not
	// planned ("" when they were).
	hookWait time.Duration
	hookWhy  string
	// hookHold is how long the callback-timeout probe's sink holds each
	// call; goneWhy why it and callback-gone were not planned (probes_gone.go).
	hookHold time.Duration
	goneWhy  string
	// failWhy: why the failover probe was not planned (probes_failover.go).
	failWhy string
	// tokenWhy: why the token probe was not planned (probes_token.go).
	tokenWhy string
}

// Shares of the budget.
const (
	idemShare     = 0.10 // at most, and at most idemMaxMessages messages
	burstShare    = 0.25 // of what the idempotency probe leaves
	traceShare    = 0.15
	reburstShare  = 0.20 // a second burst after the trace: the limiter exhausted again, past its first recovery
	idemMaxMsgs   = 15
	idemCopies    = 2                          // concurrent copies per probed message
	idemPerMsg    = 2 + idemCopies + idemExtra // probes_idem.go: idemExtra
	probeGrace    = 10 * time.Second
	minBurstShare = 20
)

// NewPlan plans the probes of f within o.
func NewPlan(f *File, o Options) (*Plan, error) {
	o.defaults()
	s := f.Scenario
	p := &Plan{Options: o}
	left := o.Budget
	cool := o.MaxWindow
	if s.Target.Embedded {
		cool = 0 // every probe has a new simulator
	}
	if s.API == rundir.APINotify {
		n := min(int64(float64(o.Budget)*idemShare)/idemPerMsg, idemMaxMsgs)
		if n >= 1 {
			p.Probes = append(p.Probes, Probe{Name: probeIdempotency, Requests: n * idemPerMsg, Takes: time.Duration(n)*time.Second + grace(s),
				What: idemWhat(n)})
			left -= n * idemPerMsg
		}
		if pr, ok := windowProbe(o, s); ok && float64(left-pr.Requests)*burstShare >= minBurstShare { // never at the burst's cost
			p.Probes = append(p.Probes, pr)
			left -= pr.Requests
		}
	}
	if pr, ok := msgRetryPlanned(o, s); ok { // the messaging API's counterpart of the idempotency probe
		p.Probes = append(p.Probes, pr)
		left -= pr.Requests
	}
	burst := int64(float64(left) * burstShare)
	trace := int64(float64(left) * traceShare)
	reburst := int64(float64(left) * reburstShare)
	if burst < minBurstShare {
		return nil, fmt.Errorf("characterise: --budget %d leaves %d requests for the cold burst, under %d: give a larger budget", o.Budget, burst, minBurstShare)
	}
	gap := gapFor(o.MaxWindow)
	bd, td := burstFor(burst+reburst, o.BurstRate)+2*gap, traceFor(o.MaxWindow)+gap // 2 gaps: in the cold burst, before the second
	p.Probes = append(p.Probes, Probe{Name: probeBurst, Requests: burst + trace + reburst, burst: burst, trace: trace, Takes: bd + td + probeGrace, CoolDown: cool,
		What: fmt.Sprintf("one client: a cold burst of %d at %g/s (%d, a pause of %s, the rest), a recovery trace of %d over %s (%.2f/s), a pause of %s, a second burst of %d",
			burst, o.BurstRate, firstPart(burst, trace, td, gap), gap, trace, td, float64(trace)/td.Seconds(), gap, reburst)})
	left -= burst + trace + reburst
	// the callback probes take what the isolation probe would not need
	// first: the burst probe keeps its shares
	hooks, why := hookRequests(s, o, left)
	p.hookWhy = why
	left -= hooks
	gone := p.goneRequests(hooks, left)
	left -= gone
	fo := p.failoverRequests(s, left)
	left -= fo
	tok := p.tokenRequests(s, left)
	left -= tok
	if len(s.Creds) >= 2 {
		p.Probes = append(p.Probes, Probe{Name: probeIsolation, Requests: left, Takes: burstFor(left, o.BurstRate) + probeGrace, CoolDown: cool,
			What: fmt.Sprintf("two clients at once: each a burst past the burst found, at %g/s", o.BurstRate)}) // its requests: Print's, once the probes left out give theirs back
	}
	p.withHooks(hooks)
	if t := p.Takes() + straddleTakes(o.MaxWindow) + cool; t <= o.MaxTime {
		p.Probes = append(p.Probes, straddlePlanned(o, cool)) // only when it fits the time: it is the last and least needed
	}
	if t := p.Takes() + sustainTakes(o.MaxWindow, 0, o.BurstRate) + cool; t <= o.MaxTime {
		p.Probes = append(p.Probes, sustainPlanned(o, cool)) // likewise
	}
	p.withGone(gone) // likewise, in what is left: among the callback probes
	p.withFailover(s, fo)
	p.withToken(s, tok) // last, when it fits the time
	if t := p.Takes(); t > o.MaxTime {
		return nil, fmt.Errorf("characterise: the plan takes about %s, over --max-time %s: raise --max-time, or lower --max-window (%s)", t.Round(time.Second), o.MaxTime, o.MaxWindow)
	}
	return p, nil
}

// grace is how long a probe waits for its callbacks: the file's when it says
// one, else probeGrace.
func grace(s *scenarios.Scenario) time.Duration {
	if g := s.Delivery.Grace.D; g > 0 && g < probeGrace {
		return g
	}
	return probeGrace
}

// burstFor is how long n requests at rate take.
func burstFor(n int64, rate float64) time.Duration {
	return time.Duration(math.Ceil(float64(n)/rate*1000)) * time.Millisecond
}

// traceFor is the recovery trace's length: the longest window waited out,
// and a margin for a window that began before the burst's first request.
func traceFor(w time.Duration) time.Duration {
	return (w*115/100 + 2*time.Second).Round(time.Second)
}

// Takes is the plan's time, cool-downs included.
func (p *Plan) Takes() time.Duration {
	var t time.Duration
	for _, pr := range p.Probes {
		t += pr.CoolDown + pr.Takes
	}
	return t
}

// Requests is what the plan may send at most.
func (p *Plan) Requests() int64 {
	var n int64
	for _, pr := range p.Probes {
		n += pr.Requests
	}
	return n
}

// Print writes the plan (--dry-run).
func (p *Plan) Print(w io.Writer) {
	fmt.Fprintf(w, "plan: %d probes, at most %d of the budget's %d requests, about %s (--max-time %s)\n",
		len(p.Probes), p.Requests(), p.Budget, p.Takes().Round(time.Second), p.MaxTime)
	for i, pr := range p.Probes {
		cool := ""
		if pr.CoolDown > 0 {
			cool = ", after a cool-down of " + pr.CoolDown.String()
		}
		n := strconv.FormatInt(pr.Requests, 10)
		if pr.Requests == 0 {
			n = "the left-over" // sized when it runs, from what the probes before found
		}
		fmt.Fprintf(w, "  %d. %-20s at most %s requests, about %s%s: %s\n", i+1, pr.Name, n, pr.Takes.Round(time.Second), cool, pr.What)
	}
}
