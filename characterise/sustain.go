package characterise

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// probeSustain holds the fitted limit's rate at 0.9, 1.0 and 1.1 times,
// one window each, and counts what each level had refused: a limiter that
// keeps its limit refuses about nothing under it and at it, and about
// 1 − 1/1.1 (9 %) over it.
const probeSustain = "sustained"

// sustainLevels are the levels, in the order sent, as multiples of the
// fitted limit's rate.
var sustainLevels = []float64{0.9, 1.0, 1.1}

// The rules of the levels: the share of each level's requests refused 429.
const (
	RuleSustained09 = "rate_limit.refused_at_0.9"
	RuleSustained10 = "rate_limit.refused_at_1.0"
	RuleSustained11 = "rate_limit.refused_at_1.1"
)

var sustainRules = []string{RuleSustained09, RuleSustained10, RuleSustained11}

// sustainPlanned is the probe as planned, before the limiter is known: a
// window of the longest for each level. Its requests are what the probes
// before it leave (sized at run time from the fitted limit).
func sustainPlanned(o Options, cool time.Duration) Probe {
	return Probe{Name: probeSustain, Takes: sustainTakes(o.MaxWindow, 0, o.BurstRate), CoolDown: cool,
		What: "one client at 0.9, 1.0 and 1.1 times the fitted limit's rate, a window each (what the probes before leave of the budget)"}
}

// sustainTakes is the levels' time, a bucket's drains (drain requests each,
// at rate) included.
func sustainTakes(w time.Duration, drain int64, rate float64) time.Duration {
	return time.Duration(len(sustainLevels))*(w+burstFor(drain, rate)) + probeGrace
}

// sustainPlan is the probe's requests: per level, the drain before it (a
// bucket's capacity and a tenth: its level then starts empty, where a
// full bucket would absorb a level's excess) and the level's own.
type sustainPlan struct {
	w            time.Duration
	drain        int64
	levels       []int64
	limit, burst float64
}

// sustainOf is the plan from the burst probe's fit; ok false when it named
// no limiter.
func (st *state) sustainOf() (sp sustainPlan, ok bool) {
	v, limit, w, ok := st.fittedWindow()
	if !ok {
		return sp, false
	}
	sp = sustainPlan{w: w, limit: limit, burst: st.plan.BurstRate}
	if v == "token bucket" {
		c := st.fittedCapacity()
		sp.drain = int64(math.Ceil(c * 1.1))
	}
	for _, l := range sustainLevels {
		sp.levels = append(sp.levels, int64(math.Round(l*limit)))
	}
	return sp, true
}

func (sp sustainPlan) requests() int64 {
	n := int64(len(sp.levels)) * sp.drain
	for _, l := range sp.levels {
		n += l
	}
	return n
}

// sizeSustain fits the probe to the fitted limit: every level whole, or
// nothing (a shorter level tells nothing of the steady state).
func (st *state) sizeSustain(pr Probe, left int64) Probe {
	sp, ok := st.sustainOf()
	if !ok || sp.requests() > left {
		pr.Requests = 0
		return pr
	}
	pr.Requests = sp.requests()
	pr.Takes = sustainTakes(sp.w, sp.drain, sp.burst)
	pr.What = fmt.Sprintf("one client at 0.9, 1.0 and 1.1 × %g per %s, %s each (%d, %d, %d requests)", sp.limit, shortDur(sp.w), shortDur(sp.w), sp.levels[0], sp.levels[1], sp.levels[2])
	if sp.drain > 0 {
		pr.What += fmt.Sprintf(", each after a drain of %d at %g/s (the bucket empty)", sp.drain, sp.burst)
	}
	return pr
}

// sustainSteps is the probe's load: each level, after its drain.
func (st *state) sustainSteps() []scenarios.Step {
	sp, _ := st.sustainOf()
	var steps []scenarios.Step
	for _, n := range sp.levels {
		if sp.drain > 0 {
			steps = append(steps, scenarios.Step{Rate: rateOf(sp.burst, time.Second), Duration: dur(burstFor(sp.drain, sp.burst))})
		}
		steps = append(steps, scenarios.Step{Rate: rateOf(float64(n), sp.w), Duration: dur(sp.w)})
	}
	return steps
}

// sustainFindings is the refused share of each level, with its 95 %
// interval (Wilson), over the level's requests that left.
func (st *state) sustainFindings() []reports.Finding {
	pd := st.data[probeSustain]
	sp, ok := st.sustainOf()
	switch {
	case !ok:
		return allCannot(sustainRules, probeSustain, "the limiter fit named no limit to hold")
	case !st.plan.has(probeSustain):
		return allCannot(sustainRules, probeSustain, fmt.Sprintf("the plan had no time for the sustained probe within --max-time %s", st.plan.MaxTime))
	case pd == nil || pd.sum == nil:
		return allCannot(sustainRules, probeSustain, fmt.Sprintf("the sustained probe did not run: it needs %d requests of the budget after the others (or was interrupted, or wrote no report)", sp.requests()))
	case pd.verdict == reports.VerdictError:
		return allCannot(sustainRules, probeSustain, distrusted)
	case pd.verdict == reports.VerdictIncomplete:
		// a level sent slower than asked is another level: its share would
		// be judged at a rate nobody planned
		return allCannot(sustainRules, probeSustain, "the sustained probe's run did not hold its plan (incomplete): the levels were not sent at their rates")
	}
	return sp.levelFindings(pd.attempts)
}

// levelFindings is each level's finding from the probe's attempts.
func (sp sustainPlan) levelFindings(as []rundir.Attempt) []reports.Finding {
	fs := make([]reports.Finding, 0, len(sp.levels))
	from := int64(0)
	for i, n := range sp.levels {
		from += sp.drain
		sends := levelSends(as, from, from+n)
		f := levelFinding(sustainRules[i], sustainLevels[i], sp, n, sends)
		if why := bunched(as, sends, sp.w).why(sp.w); why != "" && f.Value != reports.CannotTell {
			f = cannot(f.Rule, probeSustain, why+" (the share: "+f.Value+")", f.Evidence...)
		}
		fs = append(fs, f)
		from += n
	}
	return fs
}

// levelSends are the first attempts of sequences (from, to].
func levelSends(as []rundir.Attempt, from, to int64) []rundir.Attempt {
	var out []rundir.Attempt
	for _, a := range as {
		if a.Attempt == 1 && a.Seq > from && a.Seq <= to {
			out = append(out, a)
		}
	}
	return out
}

// levelFinding is the share of the level's planned requests refused 429,
// told only when every planned request left: a share over the survivors of
// a level cut short would be a share at another rate.
func levelFinding(rule string, level float64, sp sustainPlan, planned int64, as []rundir.Attempt) reports.Finding {
	var refused, failed int64
	for _, a := range as {
		switch {
		case a.Code == 429:
			refused++
		case a.Code < 200 || a.Code >= 300:
			failed++
		}
	}
	n := int64(len(as))
	ev := fmt.Sprintf("%d sent at %.3g/s (%g × %g per %s) for %s: %d refused 429, %d failed otherwise", n, level*sp.limit/sp.w.Seconds(), level, sp.limit, shortDur(sp.w), shortDur(sp.w), refused, failed)
	if n == 0 || n < planned {
		return cannot(rule, probeSustain, fmt.Sprintf("%d of the level's %d planned requests left", n, planned), ev)
	}
	p := float64(refused) / float64(n)
	lo, hi := wilson(refused, n)
	f := found(rule, probeSustain, strconv.FormatFloat(math.Round(p*1000)/1000, 'f', -1, 64), ev)
	f.Low, f.High = &lo, &hi
	return f
}

// wilson is the 95 % Wilson score interval of k in n, rounded outwards to
// a thousandth.
func wilson(k, n int64) (lo, hi float64) {
	const z = 1.96
	p, fn := float64(k)/float64(n), float64(n)
	c := (p + z*z/(2*fn)) / (1 + z*z/fn)
	h := z / (1 + z*z/fn) * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))
	return math.Max(0, math.Floor((c-h)*1000)/1000), math.Min(1, math.Ceil((c+h)*1000)/1000)
}

// has reports whether the plan has the probe.
func (p *Plan) has(name string) bool {
	return slices.ContainsFunc(p.Probes, func(pr Probe) bool { return pr.Name == name })
}
