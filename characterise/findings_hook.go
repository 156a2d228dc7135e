package characterise

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// The callback rules (the callback probes decide them).
const (
	RuleHookSchedule     = "callbacks.retry_schedule"       // fixed, exponential, none
	RuleHookFirstDelay   = "callbacks.retry_first_delay"    // seconds before the first retry
	RuleHookFactor       = "callbacks.retry_factor"         // each wait over the one before (1: fixed)
	RuleHookCap          = "callbacks.retry_cap"            // seconds: the longest wait, once reached
	RuleHookAttempts     = "callbacks.attempts"             // tries of a refused call before the sender gives up
	RuleHookGivesUpAfter = "callbacks.gives_up_after"       // seconds from the first try to the last
	RuleHookRetryAfter   = "callbacks.retry_after_honoured" // yes, no
	RuleHookDuplicates   = "callbacks.duplicate_rate"       // share of accepted messages whose callback came twice unasked
	RuleHookOutOfOrder   = "callbacks.out_of_order_rate"    // share of callbacks arriving after one the service says is later
	RuleHookSignature    = "callbacks.signature"            // standard-webhooks-v1, none
	RuleHookSkew         = "callbacks.signature_skew"       // seconds: the sink's receipt less the signature's timestamp
	scheduleFixed        = "fixed"
	scheduleExponential  = "exponential"
	scheduleNone         = "none"
)

// hookRules are the callback rules, in the order of the contract.
func hookRules() []string {
	return []string{RuleHookSchedule, RuleHookFirstDelay, RuleHookFactor, RuleHookCap, RuleHookAttempts, RuleHookGivesUpAfter,
		RuleHookRetryAfter, RuleHookDuplicates, RuleHookOutOfOrder, RuleHookSignature, RuleHookSkew}
}

// Tolerances of the schedule's reading: a wait seen at the sink is the
// sender's wait plus its own overheads (the answer, the next connection),
// never less; two waits are alike within sameRatio.
const (
	waitSlack    = 100 * time.Millisecond
	waitSlackPct = 0.25
	sameRatio    = 1.33
)

// hookSeries is the arrivals of one call (a message's state) at the sink,
// in arrival order.
type hookSeries struct {
	key      string
	chosen   bool // its first arrival was refused on purpose
	at       []time.Time
	dup      bool // a control that came again unasked
	eventsAt []time.Time
}

// hookData is what a callback probe's run left at the sink.
type hookData struct {
	series   []*hookSeries
	accepted int64     // messages the service accepted (2xx)
	waitEnd  time.Time // when the probe's wait ended
	// order: controls' first arrivals with the service's own time of each
	// (updatedAt), in arrival order
	order []time.Time
	// sigs: every call's signature as the sink read it (nil: unsigned)
	sigs []*rundir.Signature
}

// readHookData reads a callback probe's events and run.json.
func readHookData(pd *probeData) (*hookData, error) {
	h := &hookData{waitEnd: hookWaitEnd(pd.dir)}
	seqs := map[int64]bool{}
	for _, a := range pd.attempts {
		if a.Code >= 200 && a.Code < 300 {
			seqs[a.Seq] = true
		}
	}
	h.accepted = int64(len(seqs))
	by := map[string]*hookSeries{}
	err := pd.eachEvent(func(e rundir.Event) error {
		if e.Corr == nil || !e.Corr.Matched || e.Kind != rundir.KindCallback && e.Kind != rundir.KindWebhook {
			return nil
		}
		k := e.Corr.Key + "\x00" + e.Corr.State
		s := by[k]
		if s == nil {
			s = &hookSeries{key: e.Corr.Key, chosen: e.Answered != 0 || e.Delayed > 0}
			by[k] = s
			h.series = append(h.series, s)
			if !s.chosen {
				h.order = append(h.order, updatedAt(e.Payload))
			}
		}
		s.at = append(s.at, e.ReceivedAt)
		s.dup = s.dup || e.Corr.Duplicate
		h.sigs = append(h.sigs, e.Sig)
		return nil
	})
	return h, err
}

// updatedAt is the service's own time of a callback (its updatedAt), the
// zero time when it has none.
func updatedAt(payload json.RawMessage) time.Time {
	var p struct {
		UpdatedAt string `json:"updatedAt"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, p.UpdatedAt)
	return t
}

// schedule is the retry schedule read off the refused calls.
type schedule struct {
	series                int
	kind                  string // "" when it cannot be told (why says)
	why                   string
	firstDelay            float64 // the shortest first wait seen, seconds
	factorLo, factor, fHi float64
	capS                  float64 // 0: no cap seen
	attLo, attHi          int
	spanLo, spanHi        float64
	gaveUp                bool
	stillWhy              string
	delays                [][]float64 // every refused call's waits
	prof                  []float64   // each wait's shortest over the calls
}

// readSchedule reads the schedule off the series the sink refused.
func readSchedule(h *hookData) *schedule {
	sc := &schedule{attLo: math.MaxInt}
	for _, s := range h.series {
		if !s.chosen {
			continue
		}
		sc.series++
		var d []float64
		for i := 1; i < len(s.at); i++ {
			d = append(d, s.at[i].Sub(s.at[i-1]).Seconds())
		}
		sc.delays = append(sc.delays, d)
		sc.attLo, sc.attHi = min(sc.attLo, len(s.at)), max(sc.attHi, len(s.at))
		span := s.at[len(s.at)-1].Sub(s.at[0]).Seconds()
		if sc.series == 1 || span < sc.spanLo {
			sc.spanLo = span
		}
		sc.spanHi = max(sc.spanHi, span)
	}
	if sc.series == 0 {
		sc.why = "no callback of a refused message came"
		return sc
	}
	sc.classify()
	sc.gaveUp, sc.stillWhy = sc.givenUp(h)
	return sc
}

// classify names the schedule from its profile — each wait's shortest over
// the refused calls, the one overheads added least to: none (no retry),
// fixed (every wait alike), exponential (each wait a factor of the one
// before, up to a cap where they become alike); anything else cannot be told.
func (sc *schedule) classify() {
	prof := profile(sc.delays)
	sc.prof = prof
	if len(prof) == 0 {
		sc.kind = scheduleNone
		return
	}
	sc.firstDelay = prof[0]
	g, f, ok := splitGrowth(prof)
	switch {
	case !ok:
		sc.why = fmt.Sprintf("the waits %s grow neither alike nor by a steady factor", fmtDelays(prof))
	case len(prof) == 1:
		sc.why = "each refused call was retried once: one wait tells no schedule"
	case len(g) == 0:
		sc.kind, sc.factorLo, sc.factor, sc.fHi = scheduleFixed, 1, 1, 1
	default:
		sc.kind = scheduleExponential
		n := len(g)
		if len(f) > 0 && n > 1 {
			n-- // the last step into the plateau may be cut by the cap
		}
		sc.factorLo, sc.fHi = math.Inf(1), 0
		for k := 0; k < n; k++ {
			// overheads only add to a wait: the factor is between the
			// ratio of the later wait less its slack and of the earlier less its
			sc.factorLo = min(sc.factorLo, max(prof[k+1]-slack(prof[k+1]), 0)/prof[k])
			sc.fHi = max(sc.fHi, prof[k+1]/max(prof[k]-slack(prof[k]), 1e-3))
		}
		sc.factor = g[0]
		if len(f) > 0 {
			sc.capS = f[0]
			for _, x := range f {
				sc.capS = min(sc.capS, x)
			}
		}
	}
}

// profile is each wait's shortest over the calls that waited it.
func profile(delays [][]float64) []float64 {
	var p []float64
	for _, d := range delays {
		for k, x := range d {
			if k == len(p) {
				p = append(p, x)
			}
			p[k] = min(p[k], x)
		}
	}
	return p
}

// slack is what overheads may have added to a wait seen at the sink.
func slack(seen float64) float64 { return waitSlack.Seconds() + waitSlackPct*seen }

// splitGrowth cuts waits into the ratios of a growth (each at least
// sameRatio) and the waits of a plateau after it (alike); ok is false for
// anything else. A schedule that never grows is all plateau.
func splitGrowth(d []float64) (grow, flat []float64, ok bool) {
	i := 1
	for ; i < len(d) && d[i] >= sameRatio*d[i-1]; i++ {
		grow = append(grow, d[i]/d[i-1])
	}
	for j := i; j < len(d); j++ {
		if r := d[j] / d[j-1]; r > sameRatio || r < 1/sameRatio {
			return nil, nil, false
		}
		flat = append(flat, d[j])
	}
	return grow, flat, true
}

// givenUp: every refused call fell silent for longer than twice the wait
// its schedule would have made next (and a second), before the wait ended.
func (sc *schedule) givenUp(h *hookData) (bool, string) {
	if h.waitEnd.IsZero() {
		return false, "the probe's run.json does not say when its wait ended"
	}
	i := 0
	for _, s := range h.series {
		if !s.chosen {
			continue
		}
		d := sc.delays[i]
		i++
		next := sc.firstDelay
		if n := len(d); n > 0 {
			next = d[n-1] * max(sc.factor, 1)
			if sc.capS > 0 {
				next = min(next, sc.capS)
			}
		}
		if silence := h.waitEnd.Sub(s.at[len(s.at)-1]).Seconds(); silence < 2*next+1 {
			return false, fmt.Sprintf("a refused call was still being retried when the wait ended (%d tries, the last %.1f s before the end, the next expected about %.1f s after it): a longer --hook-wait tells more", len(s.at), silence, next)
		}
	}
	return true, ""
}

// hookFindings are the callback rules, from the two callback probes.
func (st *state) hookFindings() []reports.Finding {
	if st.plan.hookWhy != "" {
		return allCannot(hookRules(), probeHookRetry, "not planned: "+st.plan.hookWhy)
	}
	pd := st.data[probeHookRetry]
	switch {
	case pd == nil || pd.sum == nil:
		return allCannot(hookRules(), probeHookRetry, "the callback probe did not run or wrote no report")
	case pd.verdict == reports.VerdictError:
		return allCannot(hookRules(), probeHookRetry, distrusted)
	}
	h, err := readHookData(pd)
	if err != nil {
		return allCannot(hookRules(), probeHookRetry, "its events.jsonl cannot be read: "+err.Error())
	}
	fs := scheduleFindings(readSchedule(h))
	st.doubtHook(fs)
	fs = append(fs, st.retryAfterHonoured())
	return append(fs, duplicateFinding(h), orderFinding(h), signatureFinding(h), skewFinding(h))
}

// signatureFinding: the scheme every call was signed with, or none when no
// call was; a mix, or headers that do not parse, cannot be told.
func signatureFinding(h *hookData) reports.Finding {
	var signed, bad, verified, wrong int
	for _, g := range h.sigs {
		switch {
		case g == nil:
		case g.Problem != "":
			bad++
		default:
			signed++
			verified += map[bool]int{true: 1}[g.Verified == yes]
			wrong += map[bool]int{true: 1}[g.Verified == no]
		}
	}
	ev := fmt.Sprintf("%d calls: %d signed (Standard Webhooks v1), %d with headers that do not parse; verified by the sink's secret %d, not %d", len(h.sigs), signed, bad, verified, wrong)
	switch {
	case len(h.sigs) == 0:
		return cannot(RuleHookSignature, probeHookRetry, "no callback came", ev)
	case signed == 0 && bad == 0:
		return found(RuleHookSignature, probeHookRetry, "none", ev)
	case signed == len(h.sigs):
		return found(RuleHookSignature, probeHookRetry, rundir.SignatureStandardWebhooks, ev)
	}
	return cannot(RuleHookSignature, probeHookRetry, "some calls were signed and some not, or their headers do not parse", ev)
}

// skewFinding: the sink's receipt less the signature's timestamp over
// every signed call (the sender's clock against the sink's, plus the
// call's way; the timestamp is whole seconds, so it reads up to 1 s more).
func skewFinding(h *hookData) reports.Finding {
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, g := range h.sigs {
		if g == nil || g.Problem != "" {
			continue
		}
		n++
		lo, hi = min(lo, g.Skew), max(hi, g.Skew)
	}
	if n == 0 {
		return cannot(RuleHookSkew, probeHookRetry, "no call was signed")
	}
	return interval(RuleHookSkew, probeHookRetry, lo, hi, fmt.Sprintf("%d signed calls", n))
}

// scheduleFindings: the schedule, its first wait, factor and cap, and when
// the sender gives up.
func scheduleFindings(sc *schedule) []reports.Finding {
	ev := fmt.Sprintf("%d refused calls; each wait's shortest (s): %s; every call's: %s", sc.series, fmtDelays(sc.prof), fmtSeries(sc.delays))
	if sc.series == 0 {
		return allCannot(hookRules()[:6], probeHookRetry, sc.why)
	}
	var fs []reports.Finding
	if sc.kind == "" {
		fs = append(fs, cannot(RuleHookSchedule, probeHookRetry, sc.why, ev), cannot(RuleHookFactor, probeHookRetry, sc.why, ev))
	} else {
		fs = append(fs, found(RuleHookSchedule, probeHookRetry, sc.kind, ev))
	}
	switch sc.kind {
	case scheduleNone:
		fs = append(fs, cannot(RuleHookFirstDelay, probeHookRetry, "the sender does not retry", ev))
	default:
		// overheads only add to a wait: the sender's is at most the shortest seen
		fs = append(fs, waitFinding(RuleHookFirstDelay, sc.firstDelay, ev))
	}
	switch sc.kind {
	case scheduleFixed, scheduleExponential:
		f := interval(RuleHookFactor, probeHookRetry, sc.factorLo, sc.fHi, ev)
		pointIn(&f, sc.factor)
		fs = append(fs, f)
	case scheduleNone:
		fs = append(fs, cannot(RuleHookFactor, probeHookRetry, "the sender does not retry", ev))
	}
	switch {
	case sc.capS > 0:
		fs = append(fs, waitFinding(RuleHookCap, sc.capS, ev))
	case sc.kind == scheduleExponential:
		fs = append(fs, cannot(RuleHookCap, probeHookRetry, "the waits grew up to the last try: no cap reached", ev))
	default:
		fs = append(fs, cannot(RuleHookCap, probeHookRetry, "no growing schedule to cap", ev))
	}
	if !sc.gaveUp {
		return append(fs, cannot(RuleHookAttempts, probeHookRetry, sc.stillWhy, ev), cannot(RuleHookGivesUpAfter, probeHookRetry, sc.stillWhy, ev))
	}
	att := interval(RuleHookAttempts, probeHookRetry, float64(sc.attLo), float64(sc.attHi), ev)
	// the span holds the overheads of every try: the sender's own is at
	// least the shortest less its slack
	span := interval(RuleHookGivesUpAfter, probeHookRetry, max(sc.spanLo-slack(sc.spanLo), 0), sc.spanHi, ev)
	pointIn(&span, sc.spanLo)
	return append(fs, att, span)
}

// waitFinding is a wait of the sender's: the shortest seen, and an interval
// down to what overheads may have added to it.
func waitFinding(rule string, seen float64, ev string) reports.Finding {
	lo := max(0, seen-slack(seen))
	f := interval(rule, probeHookRetry, lo, seen, ev)
	pointIn(&f, seen)
	return f
}

// retryAfterHonoured: the second probe's refused calls, each answered 429
// with a Retry-After of R: the sender honours it when its first wait is at
// least 0.9 R, not when it is under 0.75 R (its own schedule's, a third of R
// at most); every call must agree.
func (st *state) retryAfterHonoured() reports.Finding {
	const rule = RuleHookRetryAfter
	pd := st.data[probeHookRetryAfter]
	switch {
	case st.hook == nil || st.hook.kind == scheduleNone:
		return cannot(rule, probeHookRetryAfter, "the sender was not seen to retry")
	case pd == nil || pd.sum == nil:
		return cannot(rule, probeHookRetryAfter, "the Retry-After probe did not run or wrote no report")
	case pd.verdict == reports.VerdictError:
		return cannot(rule, probeHookRetryAfter, distrusted)
	}
	h, err := readHookData(pd)
	if err != nil {
		return cannot(rule, probeHookRetryAfter, "its events.jsonl cannot be read: "+err.Error())
	}
	ra := st.retryAfterFor().Seconds()
	var yes2, no2, n int
	var waits []float64
	for _, s := range h.series {
		if !s.chosen || len(s.at) < 2 {
			continue
		}
		n++
		w := s.at[1].Sub(s.at[0]).Seconds()
		waits = append(waits, round3(w))
		switch {
		case w >= 0.9*ra:
			yes2++
		case w < 0.75*ra:
			no2++
		}
	}
	ev := fmt.Sprintf("429 with Retry-After %g s; the first waits after it (s): %v", ra, waits)
	switch {
	case n == 0:
		return cannot(rule, probeHookRetryAfter, "no refused call was retried after a 429", ev)
	case yes2 == n:
		return found(rule, probeHookRetryAfter, yes, ev)
	case no2 == n:
		return found(rule, probeHookRetryAfter, no, ev)
	}
	return cannot(rule, probeHookRetryAfter, "the waits disagree, or are neither about the Retry-After nor well under it", ev)
}

// duplicateFinding: of the accepted messages the sink did not refuse (the
// controls), the share whose callback came again unasked. A control whose
// callback never came is counted as missing: the rate is an interval from
// "none of them was a duplicate" to "all were".
func duplicateFinding(h *hookData) reports.Finding {
	chosen, ctrl, dup := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, s := range h.series {
		if s.chosen {
			chosen[s.key] = true
			continue
		}
		ctrl[s.key] = true
		if s.dup {
			dup[s.key] = true
		}
	}
	missing := max(h.accepted-int64(len(chosen))-int64(len(ctrl)), 0)
	return rateFinding(RuleHookDuplicates, int64(len(dup)), int64(len(ctrl))+missing, missing,
		fmt.Sprintf("%d messages accepted, %d refused on purpose, %d controls whose callbacks came, %d of them again unasked, %d never came", h.accepted, len(chosen), len(ctrl), len(dup), missing))
}

// orderFinding: of the controls' first callbacks, the share that arrived
// after one whose updatedAt (the service's own time) is later than theirs.
func orderFinding(h *hookData) reports.Finding {
	var late int64
	var latest time.Time
	for _, t := range h.order {
		if t.IsZero() {
			return cannot(RuleHookOutOfOrder, probeHookRetry, "a callback has no updatedAt to order it by")
		}
		if t.Before(latest) {
			late++
		}
		latest = maxTime(latest, t)
	}
	return rateFinding(RuleHookOutOfOrder, late, int64(len(h.order)), 0,
		fmt.Sprintf("%d controls' callbacks, %d arrived after one the service dated later", len(h.order), late))
}

// rateFinding is k of n, with missing of the n unknown: the interval from
// none of the missing counting to all of them.
func rateFinding(rule string, k, n, missing int64, ev string) reports.Finding {
	if n == 0 {
		return cannot(rule, probeHookRetry, "no control message's callback to count", ev)
	}
	lo, hi := float64(k)/float64(n), float64(k+missing)/float64(n)
	return interval(rule, probeHookRetry, lo, hi, ev)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func fmtDelays(d []float64) string {
	out := make([]float64, len(d))
	for i, x := range d {
		out[i] = round3(x)
	}
	return fmt.Sprint(out)
}

func fmtSeries(ds [][]float64) string {
	s := ""
	for i, d := range ds {
		if i > 0 {
			s += " "
		}
		s += fmtDelays(d)
	}
	return s
}
