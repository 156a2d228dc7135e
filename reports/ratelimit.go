package reports

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Limiter verdicts.
const (
	AlgoSliding     = "sliding window"
	AlgoFixed       = "fixed window"
	AlgoTokenBucket = "token bucket"
	AlgoUnknown     = "cannot tell"
)

// contradictionShare is the share of decisions a model may get wrong (clock
// skew between the attacker and the service) and still be said to fit.
const contradictionShare = 0.01

func (a *analyzer) rateLimit() {
	rl := &a.s.RateLimit
	W := a.meta.Limit.Window.D().Nanoseconds()
	L := a.meta.Limit.Requests
	ids := make([]string, 0, len(a.clients))
	for id := range a.clients {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	rl.Clients = []ClientLimit{}
	for _, id := range ids {
		rs := a.clients[id]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].t < rs[j].t })
		c := ClientLimit{ClientID: id}
		acc := make([]int64, 0, len(rs))
		var accLat []int64
		for _, r := range rs {
			c.Sent++
			if is2xx(int(r.code)) {
				c.Accepted++
				acc = append(acc, r.t)
				accLat = append(accLat, r.lat)
			}
			if r.code == 429 {
				c.Rejected429++
				if c.First429At == "" {
					t := time.Unix(0, r.t).UTC()
					c.First429At = ts(t)
					if !a.start.IsZero() {
						c.First429AfterS = round6(t.Sub(a.start).Seconds())
					}
				}
			}
		}
		if W > 0 {
			c.MaxAccepted, c.ExcessAccepted = surelyInWindow(acc, accLat, W, L)
		}
		a.retryAfter(rs)
		rl.Rejected429 += c.Rejected429
		rl.ExcessAccepted += c.ExcessAccepted
		rl.MaxAccepted = max(rl.MaxAccepted, c.MaxAccepted)
		rl.Clients = append(rl.Clients, c)
		a.ch.limit(id, acc, W)
	}
	if a.meta.Limit.Mode == "respect" {
		rl.Findings429 = rl.Rejected429
	}
	rl.Algorithm = classify(a.clients, ids, W, L)
	checkPolicy(rl)
}

// parsePolicy reads the quota and window of an IETF draft RateLimit-Policy
// field: `"default";q=100;w=60` (draft 8 and later) or `100;w=60` (earlier).
func parsePolicy(v string) (q int, w float64) {
	item, _, _ := strings.Cut(v, ",") // the first policy
	for i, part := range strings.Split(item, ";") {
		part = strings.TrimSpace(part)
		k, val, ok := strings.Cut(part, "=")
		switch {
		case !ok && i == 0:
			if n, err := strconv.Atoi(part); err == nil {
				q = n
			}
		case k == "q":
			q, _ = strconv.Atoi(val)
		case k == "w":
			w, _ = strconv.ParseFloat(val, 64)
		}
	}
	return max(q, 0), max(w, 0)
}

// checkPolicy says whether the announced policy is the limit the service
// enforced: the same window, and the fitted limit when a window limiter was
// named (otherwise no window held more than the quota).
func checkPolicy(rl *RateLimit) {
	h := &rl.Headers
	if h.RateLimitPolicy == 0 {
		return
	}
	if h.PolicyLimit == 0 || h.PolicyWindow == 0 {
		h.PolicyVerdict = "the RateLimit-Policy field could not be read"
		return
	}
	switch v := rl.Algorithm.Verdict; {
	case rl.Window > 0 && h.PolicyWindow != rl.Window:
		h.PolicyVerdict = fmt.Sprintf("announced window %gs, the scenario's is %gs", h.PolicyWindow, rl.Window)
	case (v == AlgoSliding || v == AlgoFixed) && int(rl.Algorithm.Limit) != h.PolicyLimit:
		h.PolicyVerdict = fmt.Sprintf("announced %d per window, the service enforced %g", h.PolicyLimit, rl.Algorithm.Limit)
	case v != AlgoSliding && v != AlgoFixed && rl.MaxAccepted > h.PolicyLimit && v != AlgoTokenBucket:
		h.PolicyVerdict = fmt.Sprintf("announced %d per window, a window held %d accepted", h.PolicyLimit, rl.MaxAccepted)
	default:
		h.PolicyAgrees = true
		h.PolicyVerdict = "the announced policy matches what was observed"
	}
}

// slidingMax returns the largest number of accepted requests in any window of
// length w (times sorted), and how many accepted requests found more than limit
// accepted in the window ending at them (0 when limit is 0: no limit known).
func slidingMax(acc []int64, w int64, limit int) (maxN int, excess int64) {
	j := 0
	for i, t := range acc {
		for j < i && acc[j] <= t-w {
			j++
		}
		n := i - j + 1
		maxN = max(maxN, n)
		if limit > 0 && n > limit {
			excess++
		}
	}
	return maxN, excess
}

// surelyInWindow is slidingMax for the service's clock: the service saw
// request k at some moment in [t[k], t[k]+lat[k]], not at its send time, so a
// group of accepted requests surely shared one of its windows only when the
// last of them to arrive could not have come a full window after the first:
// t[i] + max(lat[j..i]) − t[j] < w. Counting by send times alone would call a
// service that keeps its limit exactly a violator whenever one request of a
// pair was slowed on the way and the other not (a loaded machine, a queue);
// the price is that an excess smaller than the answer times goes unseen.
// maxN is the largest such group; excess counts the accepted requests that
// end a group of more than limit (0 when limit is 0).
func surelyInWindow(t, lat []int64, w int64, limit int) (maxN int, excess int64) {
	j := 0
	var dq []int // indexes of j..i, latencies decreasing: dq[0] holds the window's largest
	for i := range t {
		for len(dq) > 0 && lat[dq[len(dq)-1]] <= lat[i] {
			dq = dq[:len(dq)-1]
		}
		dq = append(dq, i)
		for j < i && t[i]+lat[dq[0]]-t[j] >= w {
			j++
			for dq[0] < j {
				dq = dq[1:]
			}
		}
		n := i - j + 1
		maxN = max(maxN, n)
		if limit > 0 && n > limit {
			excess++
		}
	}
	return maxN, excess
}

// retryAfter checks each 429's Retry-After against what the client saw next,
// with a second of slack either way for whole-second rounding.
func (a *analyzer) retryAfter(rs []rec) {
	ra := &a.s.RateLimit.RetryAfter
	const slack = int64(time.Second)
	for i, r := range rs {
		if r.code != 429 {
			continue
		}
		switch {
		case r.ra == -1:
			ra.Missing++
			continue
		case r.ra < 0:
			ra.Present++
			ra.Invalid++
			continue
		}
		ra.Present++
		until := r.t + int64(float64(r.ra)*1e9)
		// The first acceptance after the 429 tells: well before until, the value was
		// too long; within a second of it, right; later (or never) while requests in
		// that second were refused, too short. A request the client did not send
		// cannot judge it, so no request in that second is no verdict either way.
		first := len(rs)
		for j := i + 1; j < len(rs); j++ {
			if is2xx(int(rs[j].code)) {
				first = j
				break
			}
		}
		long := first < len(rs) && rs[first].t < until-slack
		short := false
		if !long && (first == len(rs) || rs[first].t > until+slack) {
			for k := sort.Search(len(rs), func(k int) bool { return rs[k].t >= until }); k < len(rs) && rs[k].t <= until+slack; k++ {
				short = short || rs[k].code == 429
			}
		}
		switch {
		case long:
			ra.TooLong++
		case short:
			ra.TooShort++
		default:
			ra.Correct++
		}
	}
}

// model is a candidate limiter replayed over a client's decisions.
type model interface {
	// decide returns whether the limiter would have accepted a request at t, with
	// some slack for clock differences; ok is false when it cannot say.
	decide(t int64) (accept bool, sure bool)
	// record tells the model what the service really did.
	record(t int64, accepted bool)
}

// classify names the limiter the service behaves like: every candidate is
// replayed over every client's accepted and refused requests, and a model fits
// when it contradicts at most contradictionShare of them.
func classify(clients map[string][]rec, ids []string, w int64, limit int) Algorithm {
	alg := Algorithm{Verdict: AlgoUnknown, Evidence: []string{}}
	if w <= 0 {
		alg.Evidence = append(alg.Evidence, "run.json gives no rate-limit window")
		return alg
	}
	var refused, decisions int64
	maxSliding := 0
	all := make([]series, 0, len(ids))
	for _, id := range ids {
		var s series
		var acc []int64
		for _, r := range clients[id] {
			if r.code == 429 || is2xx(int(r.code)) {
				s.t = append(s.t, r.t)
				s.ok = append(s.ok, r.code != 429)
				if r.code == 429 {
					refused++
				} else {
					acc = append(acc, r.t)
				}
			}
		}
		decisions += int64(len(s.t))
		n, _ := slidingMax(acc, w, 0)
		maxSliding = max(maxSliding, n)
		all = append(all, s)
	}
	alg.Decisions = decisions
	if refused == 0 {
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("the limit was never reached: no 429 in %d decisions", decisions))
		return alg
	}
	slack := max(w/100, int64(50*time.Millisecond))
	run := func(mk func() model) int64 {
		var bad int64
		for _, s := range all {
			m := mk()
			for i, t := range s.t {
				if acc, sure := m.decide(t); sure && acc != s.ok[i] {
					bad++
				}
				m.record(t, s.ok[i])
			}
		}
		return bad
	}
	alg.Contradictions = map[string]int64{}
	type fit struct {
		name  string
		bad   int64
		limit float64
		cap   float64
	}
	var fits []fit
	// Sliding window, with the largest count seen in any window as its limit.
	sl := float64(maxSliding)
	bad := run(func() model { return &slidingModel{w: w, limit: maxSliding, slack: slack} })
	alg.Contradictions[AlgoSliding] = bad
	fits = append(fits, fit{AlgoSliding, bad, sl, 0})
	// Fixed window: try the epoch and every boundary the data suggests (the first
	// acceptance after a run of 429s), keep the best.
	best := fit{name: AlgoFixed, bad: math.MaxInt64}
	for _, off := range fixedOffsets(all, w) {
		lim := 0
		for _, s := range all {
			lim = max(lim, maxAligned(s.t, s.ok, w, off))
		}
		b := run(func() model { return &fixedModel{w: w, off: off, limit: lim, slack: slack} })
		if b < best.bad {
			best = fit{AlgoFixed, b, float64(lim), 0}
		}
	}
	alg.Contradictions[AlgoFixed] = best.bad
	fits = append(fits, best)
	// Token bucket refilled at the scenario's limit per window (or the largest
	// count seen), with the smallest burst that explains every acceptance.
	rateLim := float64(limit)
	if rateLim <= 0 {
		rateLim = sl
	}
	rate := rateLim / float64(w) // tokens per ns
	capacity := 1.0
	for _, s := range all {
		capacity = max(capacity, minCapacity(s.t, s.ok, rate))
	}
	capacity = math.Ceil(capacity - 1e-9)
	bad = run(func() model { return &bucketModel{rate: rate, capacity: capacity, slack: slack} })
	alg.Contradictions[AlgoTokenBucket] = bad
	fits = append(fits, fit{AlgoTokenBucket, bad, rateLim, capacity})

	allowed := int64(math.Floor(contradictionShare * float64(decisions)))
	var ok []fit
	for _, f := range fits {
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("%s (limit %g%s): %d of %d decisions contradict it",
			f.name, f.limit, capText(f.cap), f.bad, decisions))
		if f.bad <= allowed {
			ok = append(ok, f)
		}
	}
	sort.SliceStable(ok, func(i, j int) bool { return ok[i].bad < ok[j].bad })
	switch {
	case len(ok) == 0:
		alg.Evidence = append(alg.Evidence, "no candidate fits the 429s seen")
	case len(ok) > 1 && ok[1].bad <= ok[0].bad:
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("%s and %s fit equally well: the traffic did not tell them apart", ok[0].name, ok[1].name))
	default:
		alg.Verdict, alg.Limit, alg.Capacity = ok[0].name, ok[0].limit, ok[0].cap
		if limit > 0 && ok[0].name != AlgoTokenBucket && int(ok[0].limit) != limit {
			alg.Evidence = append(alg.Evidence, fmt.Sprintf("the service's limit (%g) differs from the scenario's (%d)", ok[0].limit, limit))
		}
	}
	return alg
}

func capText(c float64) string {
	if c == 0 {
		return ""
	}
	return fmt.Sprintf(", burst %g", c)
}

// series is one client's decisions in time order: accepted (ok) or refused.
type series struct {
	t  []int64
	ok []bool
}

// fixedOffsets returns window alignments to try: the epoch, and for each place
// where acceptance resumed after refusals (where a fixed window would have
// opened, somewhere after the last refused request and no later than the first
// accepted one) both ends and the middle; at most 48 in all.
func fixedOffsets(all []series, w int64) []int64 {
	offs := []int64{0}
	seen := map[int64]bool{0: true}
	add := func(t int64) {
		o := ((t % w) + w) % w
		if !seen[o] {
			seen[o] = true
			offs = append(offs, o)
		}
	}
	for _, x := range all {
		for i := 1; i < len(x.t) && len(offs) < 46; i++ {
			if x.ok[i] && !x.ok[i-1] {
				add(x.t[i-1] + 1)
				add(x.t[i-1] + (x.t[i]-x.t[i-1])/2)
				add(x.t[i])
			}
		}
	}
	return offs
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// maxAligned is the most acceptances in one window aligned at off.
func maxAligned(t []int64, ok []bool, w, off int64) int {
	best, n := 0, 0
	cur := int64(math.MinInt64)
	for i := range t {
		k := floorDiv(t[i]-off, w)
		if k != cur {
			cur, n = k, 0
		}
		if ok[i] {
			n++
			best = max(best, n)
		}
	}
	return best
}

// minCapacity is the smallest bucket that allows every acceptance at the given
// refill rate: the largest (acceptances in [t_i, t_j]) − rate·(t_j − t_i).
func minCapacity(t []int64, ok []bool, rate float64) float64 {
	best := 0.0
	bestStart := math.Inf(-1) // max over i of (rate·t_i − i)
	k := 0
	for i := range t {
		if !ok[i] {
			continue
		}
		bestStart = max(bestStart, rate*float64(t[i]-t[0])-float64(k))
		best = max(best, float64(k+1)-rate*float64(t[i]-t[0])+bestStart)
		k++
	}
	return best
}

type slidingModel struct {
	w, slack int64
	limit    int
	acc      []int64
	head     int
}

func (m *slidingModel) decide(t int64) (bool, bool) {
	for m.head < len(m.acc) && m.acc[m.head] <= t-m.w-m.slack {
		m.head++
	}
	n := len(m.acc) - m.head // in (t-w-slack, t]
	rest := m.acc[m.head:]
	inner := len(rest) - sort.Search(len(rest), func(i int) bool { return rest[i] > t-m.w+m.slack }) // in (t-w+slack, t]
	switch {
	case n < m.limit:
		return true, true
	case inner >= m.limit:
		return false, true
	}
	return false, false
}

func (m *slidingModel) record(t int64, accepted bool) {
	if accepted {
		m.acc = append(m.acc, t)
	}
}

type fixedModel struct {
	w, off, slack int64
	limit         int
	cur           int64
	n             int
	started       bool
}

func (m *fixedModel) decide(t int64) (bool, bool) {
	k := floorDiv(t-m.off, m.w)
	if !m.started || k != m.cur {
		m.started, m.cur, m.n = true, k, 0
	}
	pos := t - m.off - k*m.w
	if pos < m.slack || pos > m.w-m.slack {
		return false, false // too near a boundary to be sure which window the service saw
	}
	return m.n < m.limit, true
}

func (m *fixedModel) record(t int64, accepted bool) {
	if accepted {
		m.n++
	}
}

type bucketModel struct {
	rate, capacity, tokens float64
	slack, last            int64
	started                bool
}

func (m *bucketModel) fill(t int64) {
	if !m.started {
		m.started, m.tokens, m.last = true, m.capacity, t
	}
	m.tokens = min(m.capacity, m.tokens+m.rate*float64(t-m.last))
	m.last = t
}

func (m *bucketModel) decide(t int64) (bool, bool) {
	m.fill(t)
	margin := m.rate * float64(m.slack)
	switch {
	case m.tokens >= 1+margin:
		return true, true
	case m.tokens < 1-margin:
		return false, true
	}
	return false, false
}

func (m *bucketModel) record(t int64, accepted bool) {
	if accepted {
		m.tokens = max(0, m.tokens-1)
	}
}
