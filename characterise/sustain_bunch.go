package characterise

import (
	"fmt"
	"time"

	"github.com/msgload/msgload/rundir"
)

// bunchSlack is how many more sends than planned one window may hold
// before a level counts as bunched: one, a send a hair either side of a
// window's edge.
const bunchSlack = 1

// bunch is the most sends of the probe the limiter may have seen in one
// window of w, ending at one of the level's sends, beyond what the pacer
// planned in that same window (by the sends' intended times); at is where.
type bunch struct {
	excess, seen, planned int
	at                    time.Time
}

// bunched measures the level's bunch against every first send of the probe
// (all: the sends before the level count in the limiter's window too).
// A generator that falls behind sends its late requests together: they
// hold the limiter's slots past where the plan freed them, and it refuses
// the level's next sends — a share at a rate nobody planned. The limiter
// decides a request anywhere from its send to its answer (a busy embedded
// simulator reads its clock late): a send counts in a window its decision
// may fall in.
func bunched(all, level []rundir.Attempt, w time.Duration) bunch {
	var first []rundir.Attempt
	for _, a := range all {
		if a.Attempt == 1 && !a.Sent.IsZero() && !a.Intended.IsZero() {
			first = append(first, a)
		}
	}
	var b bunch
	for _, x := range level {
		if x.Sent.IsZero() {
			continue
		}
		to := answeredAt(x)
		from := to.Add(-w)
		seen, planned := 0, 0
		for _, y := range first {
			if !y.Sent.After(to) && answeredAt(y).After(from) {
				seen++
			}
			if y.Intended.After(from) && !y.Intended.After(to) {
				planned++
			}
		}
		if seen-planned > b.excess {
			b = bunch{excess: seen - planned, seen: seen, planned: planned, at: to}
		}
	}
	return b
}

// answeredAt is when the send's answer came: the latest the service may
// have decided it.
func answeredAt(a rundir.Attempt) time.Time {
	return a.Sent.Add(time.Duration(a.Latency * float64(time.Second)))
}

// why is why a bunched level cannot be told, "" when it held.
func (b bunch) why(w time.Duration) string {
	if b.excess <= bunchSlack {
		return ""
	}
	return fmt.Sprintf("the level's sends bunched: %d may have reached the limiter within one %s window where the plan put %d (late sends went out together: a busy generator), so its refusals are a bunch's, not the level's rate's", b.seen, shortDur(w), b.planned)
}

// bunchWhy is the first bunched level's reason, named by its level, ""
// when every level held its rate.
func (sp sustainPlan) bunchWhy(as []rundir.Attempt) string {
	from := int64(0)
	for i, n := range sp.levels {
		from += sp.drain
		if why := bunched(as, levelSends(as, from, from+n), sp.w).why(sp.w); why != "" {
			return fmt.Sprintf("at %g ×: %s", sustainLevels[i], why)
		}
		from += n
	}
	return ""
}

// bunchedWhy is the reason the sustained probe's run must not pass ("" when
// none): a level's sends bunched, so its share is cannot tell — against any
// target, the bunch being the generator's, never the service's.
func (st *state) bunchedWhy() string {
	pd := st.data[probeSustain]
	if pd == nil {
		return ""
	}
	sp, ok := st.sustainOf()
	if !ok {
		return ""
	}
	if why := sp.bunchWhy(pd.attempts); why != "" {
		return "the plan was not held: " + why
	}
	return ""
}
