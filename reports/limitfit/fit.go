package limitfit

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Limiter verdicts (Result.Verdict).
const (
	Sliding     = "sliding window"
	Fixed       = "fixed window"
	TokenBucket = "token bucket"
	CannotTell  = "cannot tell"
	// NotExercised: no 429 came and none was possible (no limit configured,
	// or no client had more acceptances in a window than the limit).
	NotExercised = "not exercised"
)

// Request is one rate-limit decision of the service for a client: compact on
// purpose (24 bytes), since the analysis keeps one for every request.
type Request struct {
	Sent int64 // unix ns sent
	Code int16 // HTTP status; 0 or less: no answer
	// RetryAfter is the answer's Retry-After in seconds, -1 absent, -2
	// unreadable: carried for the caller's check of it, the fit reads none.
	RetryAfter float32
	Latency    int64 // ns from send to answer: the service saw the request in [Sent, Sent+Latency]
}

// accepted is a 2xx: the limiter let the request through.
func (r Request) accepted() bool { return r.Code >= 200 && r.Code < 300 }

// Result is the verdict on which limiter the service behaves like, as
// summary.json's rate_limit.algorithm holds it (see there for each field).
type Result struct {
	Verdict  string  // Sliding, Fixed, TokenBucket, CannotTell or NotExercised
	Limit    float64 // requests per Window; a bucket's refill per Window
	Capacity float64 // a token bucket's burst size
	Evidence []string
	// Contradictions per model tried: decisions (accept or 429) its best
	// candidate would not have made.
	Contradictions map[string]int64
	Decisions      int64   // 2xx and 429 answers fitted
	Window         float64 // seconds (a bucket: the time to refill Capacity)
	// DiffersFromScenario: the limit or window the service enforced is not
	// the scenario's.
	DiffersFromScenario bool
	// FailuresUseQuota and RefusalsUseQuota: whether failed answers (5xx,
	// none) and 429s used quota, by the fit: QuotaYes, QuotaNo, QuotaUnknown;
	// empty when none came or nothing was fitted.
	FailuresUseQuota, RefusalsUseQuota string
}

// contradictionShare is the share of decisions a model may get wrong (clock
// skew between the attacker and the service) and still be said to fit.
const contradictionShare = 0.01

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

// SurelyInWindow is slidingMax for the service's clock (t and lat: accepted
// requests' send times, sorted, and latencies in ns; w the window): the service saw
// request k at some moment in [t[k], t[k]+lat[k]], not at its send time, so a
// group of accepted requests surely shared one of its windows only when the
// last of them to arrive could not have come a full window after the first:
// t[i] + max(lat[j..i]) − t[j] < w. Counting by send times alone would call a
// service that keeps its limit exactly a violator whenever one request of a
// pair was slowed on the way and the other not (a loaded machine, a queue);
// the price is that an excess smaller than the answer times goes unseen.
// maxN is the largest such group; excess counts the accepted requests that
// end a group of more than limit (0 when limit is 0).
func SurelyInWindow(t, lat []int64, w int64, limit int) (maxN int, excess int64) {
	surelyGroups(t, lat, w, func(_, n int) {
		maxN = max(maxN, n)
		if limit > 0 && n > limit {
			excess++
		}
	})
	return maxN, excess
}

// surelyGroups calls fn, for each request i in turn, with i and the size of
// the largest group ending at i that surely shared one window (see
// SurelyInWindow).
func surelyGroups(t, lat []int64, w int64, fn func(i, n int)) {
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
		fn(i, i-j+1)
	}
}

// decisions is one client's accepted and refused requests as the service may
// have seen them: request k reached it at some moment in [t, e] (its send and
// its answer). Every model below is checked against that interval, never the
// send time alone: a decision contradicts a model only when no moment of every
// interval involved agrees with it.
type decisions struct {
	at, ae, alat []int64 // counted (used quota): send, answer, answer − send; by send time
	aq           []int64 // alat rounded up to 5% steps (the token bucket's sweep)
	aeSorted     []int64 // answer times of the counted, sorted
	acc          []bool  // per counted: an acceptance (not a refusal counted by the hypothesis)
	accT, accE   []int64 // acceptances alone: sends, and answers sorted (rateFloor)
	selfCounted  bool    // the refusals are among the counted: each check of one leaves it out
	// clear, per acceptance (when the refusals are counted): every refusal
	// sent before it was answered before it was sent, so each was decided
	// before it and its check may count them (fill).
	clear  []bool
	rt, re []int64 // refused: send and answer, by send time
	// recoveries: for each acceptance that follows refusals, the last refused
	// send, the acceptance's send and answer, and its index in accT.
	recov []recovery
	// onsets: sends of the first refusal after acceptances.
	onsets []int64
	burst  int   // accepted before the first refusal
	first  int64 // first send
	last   int64 // last send

	sHint, aHint int  // where sentBefore and answeredBefore last answered
	exact        bool // the send times alone: no slack at all, not even bucketRounding

	parts []part    // the token bucket's view of the refusals (bucketRefusals)
	h     []float64 // bucketRefusals' buffer
}

// part is a stretch of the time a refusal could have reached the service:
// from its start, the acceptances answered before it, and those sent after
// its end.
type part struct {
	from            int64
	answered, later int
	last            bool // the refusal's last part
	self            bool // the refusal itself is among the counted that could lie before the part's end
}

type recovery struct {
	ref, t, e int64
	k         int
	// clear: every refusal sent before the acceptance was answered before
	// it was sent, so each was decided before it (fixedPhases).
	clear bool
}

// clockGrain is the service clock's granularity: a service that keeps time
// in milliseconds (nginx) may date a request up to that much before it
// arrived, so a request's moment at the service is in [sent − grain, answer].
const clockGrain = int64(time.Millisecond)

// hypothesis says which answers used quota besides the accepted (2xx): the
// failed ones (5xx, none) and the refused (429).
type hypothesis struct {
	failed, refused bool
}

// newDecisions keeps the accepted (2xx, and the failed answers when
// h.failed) and refused (429) requests of one client, by send time, each
// over the interval the service may have seen it in; the counted ones (at,
// ae, …) are the accepted, and the refused too when h.refused. tight keeps
// the send time alone (no latency, no grain): the decisions the fits are
// ranked by when they tie (see fitter.tight).
func newDecisions(rs []Request, h hypothesis, tight bool) *decisions {
	d := &decisions{first: math.MaxInt64, last: math.MinInt64, exact: tight}
	refused := false
	lastRef, lastAcc := int64(math.MinInt64), int64(math.MinInt64)
	lastRefE := int64(math.MinInt64) // the latest answer to a refusal so far
	for _, r := range rs {
		ok := r.accepted() || h.failed && failedAnswer(r.Code)
		if !ok && r.Code != 429 {
			continue
		}
		t, e := r.Sent-clockGrain, r.Sent+max(r.Latency, 0)
		if tight {
			t, e = r.Sent, r.Sent
		}
		d.first, d.last = min(d.first, t), max(d.last, t)
		if !ok {
			if len(d.rt) == 0 || lastAcc > lastRef {
				d.onsets = append(d.onsets, t)
			}
			d.rt, d.re = append(d.rt, t), append(d.re, e)
			refused, lastRef, lastRefE = true, t, max(lastRefE, e)
			if h.refused {
				d.count(t, e, false)
			}
			continue
		}
		if !refused {
			d.burst++
		}
		if refused && (len(d.recov) == 0 || d.recov[len(d.recov)-1].ref != lastRef) {
			d.recov = append(d.recov, recovery{ref: lastRef, t: t, e: e, k: len(d.accT), clear: lastRefE < r.Sent})
		}
		lastAcc = t
		d.accT, d.accE = append(d.accT, t), append(d.accE, e)
		if h.refused {
			d.clear = append(d.clear, lastRefE < t)
		}
		d.count(t, e, true)
	}
	d.selfCounted = h.refused
	d.aeSorted = append([]int64(nil), d.ae...)
	slices.Sort(d.aeSorted)
	if h.refused {
		slices.Sort(d.accE)
	} else {
		d.accE = d.aeSorted
	}
	return d
}

// count adds a request that used quota, seen in [t, e]; acc: an acceptance
// (the checks bound the limit from below only at those).
func (d *decisions) count(t, e int64, acc bool) {
	d.at, d.ae, d.alat, d.aq = append(d.at, t), append(d.ae, e), append(d.alat, e-t), append(d.aq, quantUp(e-t))
	d.acc = append(d.acc, acc)
}

// quantUp rounds a latency up to the next step of a 5% geometric ladder, so that
// the token bucket's sweep keeps at most a few hundred distinct latencies; a
// longer latency only makes the check more lenient.
func quantUp(lat int64) int64 {
	if lat <= 1000 {
		return 1000
	}
	return int64(math.Pow(1.05, math.Ceil(math.Log(float64(lat))/math.Log(1.05)))) + 1
}

// sentBefore is the number of accepted requests sent before x.
func (d *decisions) sentBefore(x int64) int {
	d.sHint = searchFrom(d.at, x, d.sHint)
	return d.sHint
}

// answeredBefore is the number of accepted requests answered before x.
func (d *decisions) answeredBefore(x int64) int {
	d.aHint = searchFrom(d.aeSorted, x, d.aHint)
	return d.aHint
}

// searchFrom returns the first index of sorted a holding x or more, searching
// outward from hint: the checks ask in nearly increasing order, so most
// questions cost a step or two instead of a full binary search.
func searchFrom(a []int64, x int64, hint int) int {
	n := len(a)
	hint = min(max(hint, 0), n)
	lo, hi := 0, n
	if hint < n && a[hint] < x { // after hint
		lo = hint + 1
		for step := 1; hint+step < n; step *= 2 {
			if a[hint+step] >= x {
				hi = hint + step
				break
			}
			lo = hint + step + 1
		}
	} else { // at or before hint
		hi = hint
		for step := 1; hint-step >= 0; step *= 2 {
			if a[hint-step] < x {
				lo = hint - step + 1
				break
			}
			hi = hint - step
		}
	}
	i, _ := slices.BinarySearch(a[lo:hi], x)
	return lo + i
}

// slidingBounds adds what a sliding log of window w needs of its limit L:
// acceptance i contradicts it when L < low (it ends a group of low
// acceptances that surely shared one window, see SurelyInWindow), refusal j
// when L ≥ up (at every moment s the service could have seen it, fewer than
// up acceptances could have been in (s−w, s)).
func (d *decisions) slidingBounds(w int64, low, up []int) ([]int, []int) {
	surelyGroups(d.at, d.alat, w, func(i, n int) {
		if d.acc[i] {
			low = append(low, n)
		}
	})
	for i := range d.rt {
		up = append(up, d.slidingPossible(d.rt[i], d.re[i], w)+1)
	}
	return low, up
}

// slidingPossible is the most acceptances that could have been in the window
// (s−w, s) for some s in [t, e]: those sent before s and not surely answered by
// s−w. The count only falls when one leaves (at e_j + w), so it peaks at e and
// just before each such moment in [t, e]; past 8 of those, the union bound.
func (d *decisions) slidingPossible(t, e, w int64) int {
	self := func(s int64) int { // the refusal itself, when counted and sent before s
		if d.selfCounted && t < s {
			return 1
		}
		return 0
	}
	cnt := func(s int64) int { return d.sentBefore(s) - d.answeredBefore(s-w+1) - self(s) }
	best := cnt(e)
	lo := d.answeredBefore(t - w + 1) // the first with e_j + w > t
	for k := lo; k < len(d.aeSorted) && d.aeSorted[k]+w <= e; k++ {
		if k-lo >= 8 {
			return d.sentBefore(e) - d.answeredBefore(t-w+1) - self(e)
		}
		best = max(best, cnt(d.aeSorted[k]+w-1))
	}
	return best
}

// fixedBounds is slidingBounds for a fixed window of w starting at ph + k·w:
// among the acceptances surely inside one window, the n-th needs L ≥ n; a
// refusal needs L below the most acceptances that could have come before it
// in a window the service could have seen it in.
func (d *decisions) fixedBounds(w, ph int64, low, up []int) ([]int, []int) {
	cur, n := int64(math.MinInt64), 0
	for k := range d.at {
		wi := floorDiv(d.at[k]-ph, w)
		if wi != floorDiv(d.ae[k]-ph, w) {
			if d.acc[k] {
				low = append(low, 0) // no bound, but one entry per acceptance (fill)
			}
			continue
		}
		if wi != cur {
			cur, n = wi, 0
		}
		n++
		if d.acc[k] {
			low = append(low, n)
		}
	}
	for i := range d.rt {
		k0, k1 := floorDiv(d.rt[i]-ph, w), floorDiv(d.re[i]-ph, w)
		if k1-k0 > 2 {
			continue // answered windows later: anything is possible
		}
		most := 0
		for k := k0; k <= k1; k++ {
			start := ph + k*w
			hi := min(d.re[i], start+w-1)
			n := d.sentBefore(hi+1) - d.answeredBefore(start)
			if d.selfCounted {
				n-- // the refusal itself: sent before hi, answered after start
			}
			most = max(most, n)
		}
		up = append(up, most+1)
	}
	return low, up
}

// bucketBounds is slidingBounds for a token bucket refilled at rate (tokens
// per ns) with capacity L (see bucketNeed and bucketRefusal).
func (d *decisions) bucketBounds(rate float64, need []float64, low, up []int) ([]float64, []int, []int) {
	need = d.bucketNeed(rate, need)
	for i, v := range need {
		if d.acc[i] {
			low = append(low, int(math.Ceil(v-1e-9)))
		}
	}
	return need, low, d.bucketRefusals(rate, up)
}

// bucketRounding is the share of a token a bucket may be off per acceptance
// in its own accounting: nginx keeps the bucket in thousandths of a request
// and drains it by rate·ms/1000 rounded down at each acceptance, so after n
// acceptances it may hold up to n/1000 of a token less than exact
// arithmetic says (30 ms of refill after 30 acceptances at 30r/m, beyond any
// latency slack). The bucket checks take each acceptance as 1 ± this much,
// whichever side lets the decision stand.
const bucketRounding = 0.001

// bucketNeed returns, per acceptance i, the largest (acceptances in a group
// j..i) − rate·(the group's longest possible span at the service,
// t_i + max latency − t_j) over the groups ending at i: a bucket of capacity
// c contradicts acceptance i exactly when need[i] > c. The maximum over j
// is kept with a stack of latency segments, each holding its best r·t_j − j.
func (d *decisions) bucketNeed(rate float64, need []float64) []float64 {
	type seg struct {
		lat int64
		g   float64
	}
	var st []seg
	need = need[:0]
	w := 1 - bucketRounding // each acceptance takes at least this much
	if d.exact {
		w = 1
	}
	for i := range d.at {
		ti := float64(d.at[i] - d.first)
		g := rate*ti - w*float64(i)
		for len(st) > 0 && st[len(st)-1].lat <= d.aq[i] {
			g = max(g, st[len(st)-1].g)
			st = st[:len(st)-1]
		}
		st = append(st, seg{d.aq[i], g})
		best := math.Inf(-1)
		for _, s := range st {
			best = max(best, s.g-rate*float64(s.lat))
		}
		need = append(need, w*float64(i+1)-rate*ti+best)
	}
	return need
}

// bucketRefusals adds, per refusal, the least capacity at which a bucket
// refilled at rate (tokens per ns, full at the start) surely held a token
// then. Its tokens at s are c − max over a ≤ s of (acceptances in [a, s) −
// rate·(s − a)). The moment s is somewhere in [t, e]: that span is cut into
// up to 4 parts, and in each the deficit is bounded from above by counting
// every acceptance that could lie in [a, the part's end) against the refill
// up to the part's start. A refusal contradicts the bucket only when every
// part leaves it a token.
func (d *decisions) bucketRefusals(rate float64, up []int) []int {
	if d.parts == nil { // the same for every rate
		for i := range d.rt {
			t, e := d.rt[i], d.re[i]
			n := int64(min(4, 1+d.sentBefore(e)-d.sentBefore(t)))
			for k := int64(0); k < n; k++ {
				from, to := t+(e-t)*k/n, t+(e-t)*(k+1)/n
				d.parts = append(d.parts, part{from: from, answered: d.answeredBefore(from),
					later: len(d.at) - d.sentBefore(to), last: k == n-1, self: d.selfCounted && t < to})
			}
		}
	}
	nE := len(d.aeSorted)
	w := 1 + bucketRounding // each acceptance takes at most this much
	if d.exact {
		w = 1
	}
	d.h = slices.Grow(d.h[:0], nE)[:nE]
	h := d.h // prefix maxima of rate·E[m] + w·(nE − m)
	for m, e := range d.aeSorted {
		h[m] = rate*float64(e-d.first) + w*float64(nE-m)
		if m > 0 {
			h[m] = max(h[m], h[m-1])
		}
	}
	most := 0.0 // the bucket surely held a token only if c ≥ 1 + every part's deficit
	for _, pt := range d.parts {
		// max over a of (acceptances possibly in [a, to)) − rate·(from − a)⁺
		n := w * float64(nE-pt.answered)
		if pt.answered > 0 {
			n = max(n, h[pt.answered-1]-rate*float64(pt.from-d.first))
		}
		self := 0.0
		if pt.self {
			self = w
		}
		most = max(most, n-w*float64(pt.later)-self)
		if pt.last {
			up = append(up, int(math.Ceil(1+most-1e-9)))
			most = 0
		}
	}
	return up
}

// rateFloor is a sure lower bound on a token bucket's refill rate (per ns):
// between two refusals the bucket held less than a token at both, so N
// acceptances surely between them need rate > (N−1)/span. Pairs at
// power-of-two distances.
func (d *decisions) rateFloor() float64 {
	best := 0.0
	for i := range d.rt {
		for step := 1; i+step < len(d.rt); step *= 2 {
			k := i + step
			a, _ := slices.BinarySearch(d.accE, d.rt[k])
			b, _ := slices.BinarySearch(d.accT, d.re[i]+1)
			n := a - b
			span := d.re[k] - d.rt[i]
			if n >= 2 && span > 0 {
				best = max(best, float64(n-1)/float64(span))
			}
		}
	}
	return best
}

// commonWindows are the windows services use: tried as candidates besides the
// scenario's and those the 429s suggest.
var commonWindows = []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second,
	10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute,
	5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour}

// candidate is one fitted model.
type candidate struct {
	algo     string
	bad      int64
	tight    int64    // contradictions at the send times alone (fitter.tight)
	tset     []uint64 // which decisions those are, a bit each (a short trace's windows; see discordant)
	limit    int
	capacity float64
	window   int64 // ns; token bucket: capacity / rate
	rank     int   // 0: the scenario's or a common window; 1: one read off the 429s
	scenario bool  // the scenario's window
	desc     string
}

// better orders candidates: fewer contradictions, then a round or the
// scenario's window, then the scenario's window, then fewer contradictions at
// the send times alone, then the smaller window (more windows seen). Send
// times only break ties between models that are neither the scenario's nor
// read off the 429s (those are fitted to the very decisions, and two rates a
// hair apart trade edge decisions by chance).
func (c candidate) better(o candidate) bool {
	switch {
	case c.bad != o.bad:
		return c.bad < o.bad
	case c.rank != o.rank:
		return c.rank < o.rank
	case c.scenario != o.scenario:
		return c.scenario
	case c.tight != o.tight:
		return c.tight < o.tight
	}
	return c.window < o.window
}

// fitter fits the three limiters to the decisions of every client: the best
// candidate of each Result, kept as the fits are tried.
type fitter struct {
	all []*decisions
	// tight: the same decisions at their send times alone. Within the slack a
	// model that keeps every decision on its edge (at a steady 1/s, "1 per
	// 1s" explains the 429s of a bucket refilled 0.5/s, each by a millisecond
	// of latency) fits as well as the true one; at the send times the true
	// model contradicts only where the jitter fell the other way, the edge
	// model about half of everything. Ties on contradictions go to the fewer
	// there.
	tight     []*decisions
	tlow, tup []int
	tneed     []float64
	// cnt, tcnt: when the refusals used quota, all's and tight's decisions
	// with them counted, for the refusals' checks (fill); nil otherwise.
	cnt, tcnt []*decisions
	scratch   []int
	w         int64 // the scenario's window (0: none)
	limit     int   // the scenario's limit (0: none)
	span      int64 // the longest time a client's decisions span
	low, up   []int // bounds of the limit, reused across fits
	best      map[string]candidate
	tried     []candidate // every candidate fitted: top's rivals (unseparated)
	topBad    int64       // the contradictions of the best candidate (verdict)
	top       candidate   // the best candidate (verdict)
}

// keep keeps c when it is the best of its Result so far.
func (f *fitter) keep(c candidate) {
	f.tried = append(f.tried, c)
	if b, ok := f.best[c.algo]; !ok || c.better(b) {
		f.best[c.algo] = c
	}
}

// candidateWindow is a window to try, ranked 0 when it is the scenario's or a
// common one, 1 when read off the 429s.
type candidateWindow struct {
	w    int64
	rank int
}

// windows lists the candidate windows: the scenario's, the common ones, and
// some read off the 429s: the three most frequent spacings of recoveries and
// of 429 onsets (a fixed window reopens and fills every w) and, for the burst
// size b, the shortest time between an acceptance after refusals and the
// acceptance b before it (a sliding log reopens w after the acceptance that
// leaves it).
func (f *fitter) windows() []candidateWindow {
	var wins []candidateWindow
	seenW := map[int64]bool{}
	addW := func(x int64, rank int) {
		x = (x + int64(time.Millisecond)/2) / int64(time.Millisecond) * int64(time.Millisecond)
		if x < int64(10*time.Millisecond) || seenW[x] || (x > f.span && x != f.w) {
			return
		}
		seenW[x] = true
		wins = append(wins, candidateWindow{x, rank})
	}
	if f.w > 0 {
		addW(f.w, 0)
	}
	for _, c := range commonWindows {
		addW(c.Nanoseconds(), 0)
	}
	gaps := map[int64]int{}
	burst := math.MaxInt
	for _, d := range f.all {
		for i := 1; i < len(d.recov); i++ {
			gaps[(d.recov[i].t-d.recov[i-1].t+5e6)/1e7*1e7]++
		}
		for i := 1; i < len(d.onsets); i++ {
			gaps[(d.onsets[i]-d.onsets[i-1]+5e6)/1e7*1e7]++
		}
		if len(d.rt) > 0 && d.burst > 0 {
			burst = min(burst, d.burst)
		}
	}
	for _, g := range topKeys(gaps, 3) {
		addW(g, 1)
	}
	if burst != math.MaxInt {
		minGap := int64(math.MaxInt64)
		for _, d := range f.all {
			for _, r := range d.recov {
				if r.k >= burst {
					minGap = min(minGap, r.t-d.accT[r.k-burst])
				}
			}
		}
		if minGap != math.MaxInt64 {
			addW(minGap, 1)
		}
	}
	return wins
}

// fitWindows fits a sliding log and fixed windows of every candidate window.
func (f *fitter) fitWindows(wins []candidateWindow) {
	type fixedWin struct {
		w, lo, hi int64
		rank      int
		bad       int64
	}
	var fixedWins []fixedWin
	// A short trace's window is phased across the whole arc, not at its
	// middle alone: one recovery of a slow trace leaves an arc as wide as the
	// trace's spacing, the boundary anywhere in it, and only the best window
	// is refined below — a true window missed at the middle lost to a wrong
	// one refined (a real 20 per 2 s named 51 per 10 s).
	short := f.decisions() < shortTrace
	for _, cw := range wins {
		x := cw.w
		// Sliding log.
		sliding := func(d *decisions, low, up []int) ([]int, []int) { return d.slidingBounds(x, low, up) }
		f.low, f.up = f.fill(f.all, f.cnt, f.low, f.up, sliding)
		l, bad := bestLimit(f.low, f.up)
		tight := f.tightBad(l, sliding)
		f.keep(candidate{algo: Sliding, bad: bad, tight: tight, tset: f.tightSet(l), limit: l, window: x, rank: cw.rank, scenario: x == f.w,
			desc: fmt.Sprintf("%d per %s", l, fmtWindow(x))})
		// Fixed window: aligned where the refusals end, at the first decision, or at the epoch.
		phases, lo, hi := fixedPhases(f.all, x)
		if short && hi > lo {
			phases = append(phases, arcEighths(lo, hi)...)
		}
		fw := fixedWin{w: x, rank: cw.rank, lo: lo, hi: hi, bad: math.MaxInt64}
		for _, ph := range phases {
			c := f.fixedFit(x, ph, cw.rank)
			f.keep(c)
			fw.bad = min(fw.bad, c.bad)
		}
		fixedWins = append(fixedWins, fw)
	}
	// The middle of the recoveries' arc is only a start: which side of a
	// boundary each acceptance falls decides the rest. For the best fixed
	// window, sample the arc in eighths, then twice more around the best.
	slices.SortStableFunc(fixedWins, func(a, b fixedWin) int { return cmp.Or(cmp.Compare(a.bad, b.bad), cmp.Compare(a.rank, b.rank)) })
	for _, fw := range fixedWins[:min(1, len(fixedWins))] {
		if fw.bad == 0 || fw.hi <= fw.lo {
			continue
		}
		lo, hi := fw.lo, fw.hi
		for range 3 {
			step := max((hi-lo)/8, 1)
			bestPh, bestBad := lo, int64(math.MaxInt64)
			for ph := lo; ph <= hi; ph += step {
				c := f.fixedFit(fw.w, ph, fw.rank)
				f.keep(c)
				if c.bad < bestBad {
					bestPh, bestBad = ph, c.bad
				}
			}
			if bestBad == 0 || step == 1 {
				break
			}
			lo, hi = bestPh-step, bestPh+step
		}
	}
}

// arcEighths is the arc [lo, hi] in eighths, its ends included (the middle
// is fixedPhases' own).
func arcEighths(lo, hi int64) []int64 {
	var out []int64
	for k := int64(0); k <= 8; k++ {
		if k != 4 {
			out = append(out, lo+(hi-lo)*k/8)
		}
	}
	return out
}

// fitBuckets fits token buckets: refill rates at and just above the sure
// lower bound, the scenario's, and the round ones (an integer per common
// window) within reach; for each the capacity with the fewest contradictions.
func (f *fitter) fitBuckets() {
	w, limit := f.w, f.limit
	floor := 0.0
	for _, d := range f.all {
		floor = max(floor, d.rateFloor())
	}
	var rates []float64
	if limit > 0 && w > 0 {
		rates = append(rates, float64(limit)/float64(w))
	}
	if floor > 0 {
		for _, c := range commonWindows {
			cw := float64(c.Nanoseconds())
			n := math.Ceil(floor * cw * 1.0001)
			rates = append(rates, n/cw, (n+1)/cw)
		}
		for _, k := range []float64{1.001, 1.01, 1.02, 1.05} {
			rates = append(rates, floor*k)
		}
	}
	if f.decisions() < shortTrace {
		rates = append(rates, f.recoveryRates()...)
	}
	var need []float64
	for i, rate := range rates {
		if rate <= 0 || slices.ContainsFunc(rates[:i], func(r float64) bool { return math.Abs(r-rate) <= 1e-4*rate }) {
			continue // rates within 0.01% tell nothing apart; the scenario's and the round ones come first
		}
		f.low, f.up = f.fill(f.all, f.cnt, f.low, f.up, func(d *decisions, low, up []int) ([]int, []int) {
			need, low, up = d.bucketBounds(rate, need, low, up)
			return low, up
		})
		f.tlow, f.tup = f.fill(f.tight, f.tcnt, f.tlow, f.tup, func(d *decisions, low, up []int) ([]int, []int) {
			f.tneed, low, up = d.bucketBounds(rate, f.tneed, low, up)
			return low, up
		})
		c, bad, tight := bestCapacity(f.low, f.up, f.tlow, f.tup)
		n, x, rank := bucketWindow(rate, c, w, limit)
		f.keep(candidate{algo: TokenBucket, bad: bad, tight: tight, limit: n, capacity: float64(c), window: x, rank: rank, scenario: x == w,
			desc: fmt.Sprintf("%d per %s, capacity %d", n, fmtWindow(x), c)})
	}
}

// shortTrace is the most decisions the bucket is also tried at the
// recoveries' rates for: a longer run's rate floor bounds the rate, and each
// rate tried costs a pass over every decision.
const shortTrace = 10_000

// decisions is how many decisions the fit has.
func (f *fitter) decisions() int {
	n := 0
	for _, d := range f.all {
		n += len(d.at) + len(d.rt)
	}
	return n
}

// recoveryRates are refill rates read off the recoveries: an exhausted
// bucket accepts one request every 1/rate, so the most frequent spacings of
// acceptances after 429s, each as is and as the whole number per a common
// window nearest it; and the mean rate of the acceptances after the first
// 429. A short trace gives the floor (rateFloor) nothing to
// bound (no two 429s with two acceptances between them), and without these
// the bucket would be tried only at rates it cannot fit while a window read
// off the same 429s fits everything.
func (f *fitter) recoveryRates() []float64 {
	gaps := map[int64]int{}
	for _, d := range f.all {
		for i := 1; i < len(d.recov); i++ {
			if g := (d.recov[i].t - d.recov[i-1].t + 5e6) / 1e7 * 1e7; g > 0 {
				gaps[g]++
			}
		}
	}
	var est []float64 // per ns
	for _, g := range topKeys(gaps, 3) {
		est = append(est, 1/float64(g))
	}
	// And the mean: the acceptances after the first 429 over their span (the
	// spacings of a bucket refilled between sends alternate, 2 and 3 sends).
	for _, d := range f.all[:min(len(f.all), 4)] {
		if n := len(d.accT) - d.burst; d.burst > 0 && n >= 3 {
			if span := d.accT[len(d.accT)-1] - d.accT[d.burst]; span > 0 {
				est = append(est, float64(n-1)/float64(span))
			}
		}
	}
	var rates []float64
	for _, r := range est {
		rates = append(rates, r)
		for _, c := range commonWindows {
			cw := float64(c.Nanoseconds())
			if n := math.Round(cw * r); n >= 1 {
				rates = append(rates, n/cw)
			}
		}
	}
	return rates
}

// oneLimiter drops the sliding log from fits when it keeps 1 per w and a
// token bucket of capacity 1 refilled once per w fits as well: the two are
// one limiter (a request passes when the last acceptance is w old), named by
// the bucket, the general form (nginx's limit_req without a burst, GCRA).
func (f *fitter) oneLimiter(fits []candidate, alg *Result) []candidate {
	s, ok1 := f.best[Sliding]
	b, ok2 := f.best[TokenBucket]
	if !ok1 || !ok2 || s.limit != 1 || b.capacity != 1 || b.bad > s.bad {
		return fits
	}
	bucketRate, slidingRate := float64(b.limit)/float64(b.window), 1/float64(s.window)
	if math.Abs(bucketRate-slidingRate) > 0.005*slidingRate {
		return fits
	}
	alg.Evidence = append(alg.Evidence, fmt.Sprintf("a sliding window of 1 per %s is a token bucket of capacity 1 refilled 1 per %s (a request passes once the last acceptance is %s old): named as the bucket",
		fmtWindow(s.window), fmtWindow(s.window), fmtWindow(s.window)))
	return slices.DeleteFunc(fits, func(c candidate) bool { return c.algo == Sliding })
}

// bucketWindow writes a refill rate (per ns) as n per window x: the
// scenario's limit and window when the rate is theirs, else the common window
// nearest the time to refill capacity c where the rate is a whole number
// (within 0.5%: rank 0); otherwise c per that time (rank 1).
func bucketWindow(rate float64, c int, scenarioW int64, scenarioL int) (n int, x int64, rank int) {
	whole := func(w int64) (int, bool) {
		v := rate * float64(w)
		r := math.Round(v)
		return int(r), r >= 1 && math.Abs(v-r) <= 0.005*v
	}
	if scenarioW > 0 {
		if n, ok := whole(scenarioW); ok && n == scenarioL {
			return n, scenarioW, 0
		}
	}
	refill := float64(c) / rate
	found := false
	for _, cw := range commonWindows {
		v, ok := whole(cw.Nanoseconds())
		if ok && (!found || math.Abs(math.Log(float64(cw.Nanoseconds())/refill)) < math.Abs(math.Log(float64(x)/refill))) {
			n, x, found = v, cw.Nanoseconds(), true
		}
	}
	if found {
		return n, x, 0
	}
	return c, int64(math.Round(refill/1e6)) * int64(time.Millisecond), 1
}

// verdict names the Result that fits best, with its limit and window, or
// says why none is named.
func (f *fitter) verdict(alg Result) Result {
	alg.Contradictions = map[string]int64{}
	var fits []candidate
	for _, a := range []string{Sliding, Fixed, TokenBucket} {
		c, ok := f.best[a]
		if !ok {
			continue
		}
		alg.Contradictions[a] = c.bad
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("%s (%s): %d of %d decisions contradict it", a, c.desc, c.bad, alg.Decisions))
		fits = append(fits, c)
	}
	if len(fits) == 0 {
		f.topBad = math.MaxInt64
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("no window to try: the decisions span %s, no common window fits in it and run.json gives none",
			fmtWindow(f.span)))
		return alg
	}
	fits = f.oneLimiter(fits, &alg)
	sort.SliceStable(fits, func(i, j int) bool { return fits[i].better(fits[j]) })
	allowed := int64(math.Floor(contradictionShare * float64(alg.Decisions)))
	top := fits[0]
	f.topBad, f.top = top.bad, top
	if untried := f.untried(); len(untried) > 0 {
		// A limiter not tried was not ruled out: the best of the others
		// fits only because nothing it could be compared with was tried (a
		// short trace: a window read off its own 429s fits its every
		// decision). A wrong name is worse than none.
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("%s (%s) fits, but %s could not be tried: %s",
			top.algo, top.desc, strings.Join(untried, " and "), f.whyUntried(untried)))
		return alg
	}
	limit, w := f.limit, f.w
	setLimit := func(c candidate) {
		alg.Limit, alg.Window = float64(c.limit), math.Round(float64(c.window)/1e9*1e6)/1e6 // six decimals, as summary.json keeps
		if c.algo == TokenBucket {
			alg.Capacity = c.capacity
		}
		if limit > 0 && w > 0 && (c.limit != limit || c.window != w) {
			alg.DiffersFromScenario = true
			what := fmt.Sprintf("refused at %d per %s", c.limit, fmtWindow(c.window))
			if c.algo == TokenBucket {
				what = fmt.Sprintf("holds a burst of %g, refilled %d per %s", c.capacity, c.limit, fmtWindow(c.window))
			}
			alg.Evidence = append(alg.Evidence, fmt.Sprintf("the service %s; the scenario states %d per %s", what, limit, fmtWindow(w)))
		}
	}
	switch {
	case top.bad > allowed:
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("no candidate fits: the best, %s (%s), contradicts %d decisions, more than %g%%",
			top.algo, top.desc, top.bad, 100*contradictionShare))
	case len(fits) > 1 && fits[1].bad == top.bad && fits[1].tight == top.tight && fits[1].rank == top.rank:
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("%s and %s fit equally well (%d contradictions each): no decision was made differently by the two, so the traffic did not tell them apart",
			top.algo, fits[1].algo, top.bad))
		if fits[1].limit == top.limit && fits[1].window == top.window {
			setLimit(top) // both agree on the limit and the window
		}
	case f.unseparated(top, fits, &alg):
	default:
		alg.Verdict = top.algo
		switch {
		case len(fits) < 2 || fits[1].bad != top.bad:
		case fits[1].tight != top.tight:
			alg.Evidence = append(alg.Evidence, fmt.Sprintf("%s (%s) fits as well within the answer times, but only with its decisions on its edges: at the send times alone it contradicts %d, %s %d",
				fits[1].algo, fits[1].desc, fits[1].tight, top.algo, top.tight))
		default:
			alg.Evidence = append(alg.Evidence, fmt.Sprintf("%s fits as well only with a window read off the 429s (%s); %s is a common or the scenario's window",
				fits[1].algo, fmtWindow(fits[1].window), fmtWindow(top.window)))
		}
		setLimit(top)
	}
	return alg
}

// untried lists the limiters no candidate of which was fitted (a token
// bucket without a rate to try, windows without a window).
func (f *fitter) untried() []string {
	var out []string
	for _, a := range []string{Sliding, Fixed, TokenBucket} {
		if _, ok := f.best[a]; !ok {
			out = append(out, a)
		}
	}
	return out
}

// whyUntried says why the limiters in untried were not tried.
func (f *fitter) whyUntried(untried []string) string {
	if slices.Contains(untried, TokenBucket) {
		return "no refill rate to try (the scenario states no limit, and no two 429s had acceptances between them to bound one): the trace is too short to tell the limiters apart"
	}
	return fmt.Sprintf("no window to try (the decisions span %s)", fmtWindow(f.span))
}

// fixedFit fits the limit of a fixed window of w aligned at ph.
func (f *fitter) fixedFit(w, ph int64, rank int) candidate {
	fixed := func(d *decisions, low, up []int) ([]int, []int) { return d.fixedBounds(w, ph, low, up) }
	f.low, f.up = f.fill(f.all, f.cnt, f.low, f.up, fixed)
	l, bad := bestLimit(f.low, f.up)
	tight := f.tightBad(l, fixed)
	return candidate{algo: Fixed, bad: bad, tight: tight, tset: f.tightSet(l), limit: l, window: w, rank: rank, scenario: w == f.w,
		desc: fmt.Sprintf("%d per %s", l, fmtWindow(w))}
}

// notReached is the verdict when nothing was refused: "not exercised" when no
// limit is configured or no client had more acceptances in any window than
// the limit (no 429 was possible), otherwise "cannot tell", saying that the
// service accepted past the scenario's limit.
func notReached(alg Result, clients map[string][]Request, ids []string, w int64, limit int) Result {
	if w <= 0 || limit <= 0 {
		alg.Verdict = NotExercised
		alg.Evidence = append(alg.Evidence, "no rate limit is configured and no 429 came")
		return alg
	}
	most, sure, who := 0, 0, ""
	for _, id := range ids {
		var acc, lat []int64
		for _, r := range clients[id] {
			if r.accepted() {
				acc, lat = append(acc, r.Sent), append(lat, max(r.Latency, 0))
			}
		}
		n, _ := slidingMax(acc, w, 0)
		most = max(most, n)
		if n, _ := SurelyInWindow(acc, lat, w, 0); n > sure {
			sure, who = n, id
		}
	}
	switch {
	case most <= limit:
		alg.Verdict = NotExercised
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("no 429 came and no client had more than %d accepted within %s (at most %d): the limit could not be reached",
			limit, fmtWindow(w), most))
	case sure <= limit:
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("no 429 came; up to %d accepted were sent within %s, but at most %d surely reached the service within one: the scenario's %d was passed only within the answer times",
			most, fmtWindow(w), sure, limit))
	default:
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("no 429 in %d decisions, although client %s had %d accepted within %s, above the scenario's %d: no limit was enforced at this rate",
			alg.Decisions, who, sure, fmtWindow(w), limit))
	}
	return alg
}

// bestCapacity is bestLimit for a bucket's capacity, whose checks allow
// bucketRounding: capacities with as few contradictions go by the fewest at
// the send times alone in exact arithmetic (tlow, tup), then the largest. The
// rounding slack grows with the acceptances since the bucket was last full,
// and under random traffic it can let one more token fit as well.
func bestCapacity(low, up, tlow, tup []int) (c int, bad, tight int64) {
	top, bad := bestLimit(low, up)
	bads, tights := badByLimit(low, up, top), badByLimit(tlow, tup, top)
	c, tight = top, tights[top]
	for l := top - 1; l >= 1; l-- {
		if bads[l] == bad && tights[l] < tight {
			c, tight = l, tights[l]
		}
	}
	return c, bad, tight
}

// badByLimit returns, for each limit L in 0..top, how many decisions
// contradict it: acceptances with low > L and refusals with up ≤ L.
func badByLimit(low, up []int, top int) []int64 {
	nLow, nUp := make([]int64, top+2), make([]int64, top+2)
	for _, v := range low {
		nLow[min(max(v, 0), top+1)]++
	}
	for _, v := range up {
		nUp[min(max(v, 0), top+1)]++
	}
	out := make([]int64, top+1)
	var above, under int64
	for _, n := range nLow {
		above += n
	}
	for l := 0; l <= top; l++ {
		above -= nLow[l]
		under += nUp[l]
		out[l] = above + under
	}
	return out
}

// fill sets low and up to the bounds that bounds adds for every client: from
// all alone, or, when the refusals used quota (cnt, one per client), the
// refusals' from cnt and the acceptances' from all, raised to cnt's where
// the acceptance is clear. A refusal sent before an acceptance may have been
// decided after it, so in general only the acceptances' own invariant (no
// window holds more than the limit of them) is sure; but when every refusal
// sent before an acceptance was answered before it was sent, they were all
// decided before it and used quota it had to find left: an acceptance
// impossible with them counted refutes the hypothesis (otherwise counting
// the refusals could only ever fit as well or better, and "429s used quota:
// no" could never be said).
func (f *fitter) fill(all, cnt []*decisions, low, up []int, bounds func(d *decisions, low, up []int) ([]int, []int)) ([]int, []int) {
	low, up = low[:0], up[:0]
	for i, d := range all {
		if cnt == nil {
			low, up = bounds(d, low, up)
			continue
		}
		from := len(low)
		low, f.scratch = bounds(d, low, f.scratch[:0])
		var lowC []int
		lowC, up = bounds(cnt[i], f.scratch[:0], up)
		if own := low[from:]; len(own) == len(lowC) && len(lowC) == len(cnt[i].clear) {
			for k, v := range lowC {
				if cnt[i].clear[k] {
					own[k] = max(own[k], v)
				}
			}
		}
		f.scratch = lowC
	}
	return low, up
}

// tightBad counts the decisions at their send times alone (f.tight) that
// contradict limit l of the model whose bounds bounds adds.
func (f *fitter) tightBad(l int, bounds func(d *decisions, low, up []int) ([]int, []int)) int64 {
	f.tlow, f.tup = f.fill(f.tight, f.tcnt, f.tlow, f.tup, bounds)
	var bad int64
	for _, v := range f.tlow {
		if v > l {
			bad++
		}
	}
	for _, v := range f.tup {
		if v <= l {
			bad++
		}
	}
	return bad
}

// bestLimit returns the limit L ≥ 1 with the fewest contradictions, where
// acceptance i contradicts L when L < low[i] and refusal j when L ≥ up[j],
// and their number. Contradictions only change at those values, so only they
// are tried. Ties go to the largest L: latency hides acceptances that shared
// a window (low comes out short), while the refusals that bound L from above
// are many and each needs only one tight moment.
func bestLimit(low, up []int) (int, int64) {
	// Past the largest low, acceptances contradict nothing and refusals only
	// add up: the answer is at most the first up above it, less one.
	top := 1
	for _, v := range low {
		top = max(top, v)
	}
	next := math.MaxInt
	for _, v := range up {
		if v > top {
			next = min(next, v)
		}
	}
	if next != math.MaxInt {
		top = next - 1
	}
	// nLow[v]: acceptances needing L ≥ v; nUp[v]: refusals needing L < v.
	nLow, nUp := make([]int64, top+2), make([]int64, top+2)
	for _, v := range low {
		nLow[max(v, 0)]++
	}
	for _, v := range up {
		nUp[min(max(v, 0), top+1)]++
	}
	var above, under int64 // low > L, up ≤ L
	for _, n := range nLow[2:] {
		above += n
	}
	under = nUp[0] + nUp[1]
	bestL, bestBad := 1, above+under
	for l := 2; l <= top; l++ {
		above -= nLow[l]
		under += nUp[l]
		if bad := above + under; bad <= bestBad {
			bestL, bestBad = l, bad
		}
	}
	return bestL, bestBad
}

// topKeys returns up to n keys with the highest counts (ties: the smaller key).
func topKeys[K int | int64](m map[K]int, n int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b K) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return cmp.Compare(a, b)
	})
	return keys[:min(n, len(keys))]
}

// fixedPhases returns window alignments to try for window w: the epoch, the
// first decision, and the middle of the arc [lo, hi) where most recoveries
// could have met a boundary (a fixed window reopens at one: somewhere between
// the last refused send and the answer to the acceptance after it). Only the
// clear recoveries are counted when there are any: an acceptance sent before
// a refusal's answer may have been decided before it (a burst whose answers
// came back out of order), and such false recoveries, agreeing with each
// other, outvoted the one true one and hid the true phase from the fit (a
// fixed window of 20 per 2 s then lost to a sliding log of 20 per 1 s).
func fixedPhases(all []*decisions, w int64) (phases []int64, lo, hi int64) {
	type ev struct {
		x int64
		d int
	}
	var evs []ev
	first := int64(math.MaxInt64)
	anyClear := false
	for _, d := range all {
		anyClear = anyClear || slices.ContainsFunc(d.recov, func(r recovery) bool { return r.clear })
	}
	for _, d := range all {
		first = min(first, d.first)
		for _, r := range d.recov {
			if r.e-r.ref >= w || anyClear && !r.clear {
				continue
			}
			a, b := ((r.ref+1)%w+w)%w, ((r.e)%w+w)%w
			if a <= b {
				evs = append(evs, ev{a, 1}, ev{b + 1, -1})
			} else {
				evs = append(evs, ev{a, 1}, ev{w, -1}, ev{0, 1}, ev{b + 1, -1})
			}
		}
	}
	out := []int64{0}
	if f := ((first % w) + w) % w; f != 0 {
		out = append(out, f)
	}
	if len(evs) == 0 {
		return out, 0, 0
	}
	slices.SortFunc(evs, func(p, q ev) int {
		if p.x != q.x {
			return cmp.Compare(p.x, q.x)
		}
		return q.d - p.d // starts first
	})
	n, most := 0, 0
	for i, e := range evs {
		n += e.d
		if n > most && i+1 < len(evs) {
			most, lo, hi = n, e.x, evs[i+1].x
		}
	}
	return append(out, lo+(hi-lo)/2), lo, hi
}

// fmtWindow writes a window as the scenario would: 5s, 1m, 1h, 2.5s.
func fmtWindow(ns int64) string {
	d := time.Duration(ns).Round(time.Millisecond)
	switch {
	case d > 0 && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d > 0 && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}
