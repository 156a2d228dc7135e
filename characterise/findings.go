package characterise

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// findings is one finding per rule the probes decide, each judged against
// its expectation; a rule expected but not probed (the API has no such
// probe, or it did not run) is a finding that cannot be told.
func (st *state) findings(expect []Expectation) []reports.Finding {
	var fs []reports.Finding
	fs = append(fs, st.rateLimitFindings()...)
	fs = append(fs, st.failuresFinding(), st.straddleFinding())
	fs = append(fs, st.sustainFindings()...)
	fs = append(fs, st.ietfFindings()...)
	fs = append(fs, st.isolationFinding())
	if st.base.API == rundir.APINotify {
		fs = append(fs, st.idempotencyFindings()...)
		fs = append(fs, st.windowFinding())
		fs = append(fs, st.tokenFindings()...)
	} else {
		fs = append(fs, st.msgRetryFindings()...)
	}
	fs = append(fs, st.hookFindings()...)
	fs = append(fs, st.goneFindings()...)
	if st.base.API == rundir.APIMessaging {
		fs = append(fs, st.failoverFinding(), st.statusFinding())
	}
	want := map[string]string{}
	for _, e := range expect {
		want[e.Rule] = e.Value
	}
	for i := range fs {
		judge(&fs[i], want[fs[i].Rule])
		delete(want, fs[i].Rule)
	}
	for _, r := range Rules() { // expected, never probed
		if e, ok := want[r]; ok {
			f := cannot(r, "", "no probe of this characterisation decides it (the "+st.base.API+" API)")
			judge(&f, e)
			fs = append(fs, f)
		}
	}
	return fs
}

// distrusted: a probe whose run disagreed with its ground truth (or lost a
// raw file) tells nothing: what msgload measured there is known wrong.
const distrusted = "the probe's run ended error (msgload disagreed with its ground truth, or a raw file is missing): nothing it measured is claimed"

// cannot is a finding that cannot be told, because of why.
func cannot(rule, probe, why string, evidence ...string) reports.Finding {
	return reports.Finding{Rule: rule, Value: reports.CannotTell, Because: why, Probe: probe, Evidence: append([]string{}, evidence...)}
}

func found(rule, probe, v string, evidence ...string) reports.Finding {
	return reports.Finding{Rule: rule, Value: v, Probe: probe, Evidence: append([]string{}, evidence...)}
}

// interval is a finding of a number within [lo, hi], its ends written to
// a thousandth outward (the lower down, the upper up): rounding to the
// nearest could leave out the very value the measurement allows.
func interval(rule, probe string, lo, hi float64, evidence ...string) reports.Finding {
	// + 0: an end a hair below zero rounds up to 0, not -0
	lo, hi = math.Floor(lo*1000)/1000+0, math.Ceil(hi*1000)/1000+0
	f := found(rule, probe, strconv.FormatFloat(lo, 'f', -1, 64), evidence...)
	f.Low, f.High = &lo, &hi
	return f
}

// pointIn sets an interval finding's point value to x to a hundredth,
// kept within the interval its own rounding could step out of.
func pointIn(f *reports.Finding, x float64) {
	v := min(max(math.Round(x*100)/100, *f.Low), *f.High)
	f.Value = fmt.Sprintf("%g", v+0)
}

// burstFound is the cold burst: low accepted before the first 429 (by send
// time), high accepted in the whole burst; refused whether a 429 came in it.
type burstFound struct {
	low, high, sent int64
	refused         bool
}

// burstSize reads the cold burst off the burst probe's first n sends.
func burstSize(as []rundir.Attempt, n int64) burstFound {
	var b []rundir.Attempt
	for _, a := range as {
		if a.Seq >= 1 && a.Seq <= n && a.Attempt == 1 {
			b = append(b, a)
		}
	}
	slices.SortStableFunc(b, func(x, y rundir.Attempt) int { return x.Sent.Compare(y.Sent) })
	var f burstFound
	f.sent = int64(len(b))
	for _, a := range b {
		ok := a.Code >= 200 && a.Code < 300
		if a.Code == 429 {
			f.refused = true
		}
		if ok {
			f.high++
			if !f.refused {
				f.low++
			}
		}
	}
	if !f.refused {
		f.low = 0
	}
	return f
}

// rateLimitFindings: the burst, limit, algorithm, whether refusals use
// quota, and Retry-After, from the burst probe (its burst counted here, the
// rest by the reports' limiter fitter on its whole run).
func (st *state) rateLimitFindings() []reports.Finding {
	rules := []string{RuleBurst, RuleLimit, RuleCapacity, RuleAlgorithm, RuleRefusalsUseQuota, RuleRetryAfter, RuleRetryAfterRight}
	pd := st.data[probeBurst]
	if pd == nil || pd.sum == nil {
		return allCannot(rules, probeBurst, "the burst probe wrote no report")
	}
	if pd.verdict == reports.VerdictError {
		return allCannot(rules, probeBurst, distrusted)
	}
	pr := st.ran[probeBurst]
	b := burstSize(pd.attempts, min(pr.burst, pr.Requests))
	rl := pd.sum.RateLimit
	if rl.Rejected429 == 0 {
		why := fmt.Sprintf("no 429 came in %d requests (a burst of %d at %g/s, then a trace): no limit at or under that was seen; a larger --budget probes further", len(pd.attempts), b.sent, st.plan.BurstRate)
		fs := allCannot([]string{RuleBurst, RuleLimit, RuleCapacity, RuleRefusalsUseQuota, RuleRetryAfter, RuleRetryAfterRight}, probeBurst, why)
		return append(fs[:3], append([]reports.Finding{found(RuleAlgorithm, probeBurst, algoNone, why)}, fs[3:]...)...)
	}
	var fs []reports.Finding
	ev := fmt.Sprintf("%d accepted before the first 429 of a cold burst of %d at %g/s; %d accepted in the whole burst", b.low, b.sent, st.plan.BurstRate, b.high)
	if b.refused {
		fs = append(fs, interval(RuleBurst, probeBurst, float64(b.low), float64(b.high), ev))
	} else {
		fs = append(fs, cannot(RuleBurst, probeBurst, fmt.Sprintf("the burst of %d was all accepted (the first 429 came in the trace after it)", b.sent), ev))
	}
	alg := rl.Algorithm
	evidence := append([]string{fmt.Sprintf("the limiter fit over %d decisions of one client", alg.Decisions)}, alg.Evidence...)
	switch alg.Verdict {
	case "sliding window", "fixed window", "token bucket":
		fs = append(fs, st.doubtedFit(alg.Verdict, alg.Limit, alg.Window, alg.Capacity, evidence)...)
	default:
		why := "the limiter fit named none: " + alg.Verdict
		fs = append(fs, cannot(RuleLimit, probeBurst, why, evidence...), cannot(RuleCapacity, probeBurst, why, evidence...), cannot(RuleAlgorithm, probeBurst, why, evidence...))
	}
	switch q := alg.RefusalsUseQuota; q {
	case yes, no:
		fs = append(fs, found(RuleRefusalsUseQuota, probeBurst, q, evidence...))
	default:
		fs = append(fs, cannot(RuleRefusalsUseQuota, probeBurst, "the limiter fit could not tell whether 429s used quota ("+cmpOr(q, "no verdict")+")", evidence...))
	}
	return append(fs, retryAfterFindings(rl.RetryAfter.Present, rl.RetryAfter.Missing, rl.RetryAfter.Invalid, rl.RetryAfter.Correct, rl.RetryAfter.TooShort, rl.RetryAfter.TooLong,
		alg.RefusalsUseQuota == yes)...)
}

// limitFinding is the limit the fitter named, as N/window.
// A bucket has a refill rate, not a window: its limit is said per minute
// (5 per 10 s is 30/1m), so that it compares with what was expected.
func limitFinding(verdict string, limit, windowS, capacity float64, evidence []string) reports.Finding {
	if perMin := limit * 60 / windowS; verdict == "token bucket" && windowS > 0 && math.Abs(perMin-math.Round(perMin)) < 1e-9 {
		limit, windowS = math.Round(perMin), 60
	}
	w := time.Duration(math.Round(windowS*1000)) * time.Millisecond
	v := strconv.FormatFloat(limit, 'f', -1, 64) + "/" + shortDur(w)
	if capacity > 0 {
		evidence = append([]string{fmt.Sprintf("capacity (burst) %g", capacity)}, evidence...)
	}
	f := found(RuleLimit, probeBurst, v, evidence...)
	f.Low, f.High = &limit, &limit
	if verdict == "token bucket" && windowS > 0 {
		r := limit / windowS
		f.PerSecond = &r
	}
	return f
}

// capacityFinding is what the limiter admits at once: a bucket's capacity
// as the fit read it, a window's limit.
func capacityFinding(verdict string, limit, capacity float64, evidence []string) reports.Finding {
	c := limit
	if verdict == "token bucket" {
		c = capacity
	} else {
		evidence = append([]string{"a " + verdict + " admits its limit at once"}, evidence...)
	}
	f := found(RuleCapacity, probeBurst, strconv.FormatFloat(c, 'f', -1, 64), evidence...)
	f.Low, f.High = &c, &c
	return f
}

// shortDur is 1m for a minute, 10s, 1.5s: what rundir.ParseRate reads back.
func shortDur(d time.Duration) string {
	switch {
	case d > 0 && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d > 0 && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// retryAfterFindings: whether 429s carry Retry-After, and whether it was
// right against the first request sent after its answer and accepted (the
// reports' check).
// counted: the 429s used quota. The probe does not wait out a Retry-After
// (it keeps sending), and a limiter whose refusals use quota is pushed
// further out by every one of them: a value judged too short was a promise
// to a client that waits, which this one was not, so it is not evidence
// against the value.
func retryAfterFindings(present, missing, invalid, correct, short, long int64, counted bool) []reports.Finding {
	ev := fmt.Sprintf("429s with Retry-After %d, without %d; invalid %d, right %d, too short %d, too long %d (against the first request sent after its answer and accepted, ±1 s)", present, missing, invalid, correct, short, long)
	var fs []reports.Finding
	switch {
	case present > 0 && missing == 0:
		fs = append(fs, found(RuleRetryAfter, probeBurst, "present", ev))
	case present == 0:
		fs = append(fs, found(RuleRetryAfter, probeBurst, "absent", ev))
	default:
		fs = append(fs, cannot(RuleRetryAfter, probeBurst, "some 429s carried it and some did not", ev))
	}
	// One judged wrong among many can be the judge's timing (a send and its
	// answer bound the service's decision; a slot freed goes to one request
	// of many): "no" needs 2 and 5 % of those checked, invalid ones always.
	wrong := short + long
	switch {
	case invalid == 0 && counted && short > 0:
		fs = append(fs, cannot(RuleRetryAfterRight, probeBurst, fmt.Sprintf("%d judged too short, but the 429s used quota and the probe kept sending while it waited: its own refusals pushed the limiter's answer out", short), ev))
	case invalid > 0 || wrong >= 2 && float64(wrong) >= 0.05*float64(present):
		fs = append(fs, found(RuleRetryAfterRight, probeBurst, no, ev))
	case wrong > 0:
		fs = append(fs, cannot(RuleRetryAfterRight, probeBurst, fmt.Sprintf("%d of %d judged wrong: within the judge's timing uncertainty", wrong, present), ev))
	case correct > 0:
		fs = append(fs, found(RuleRetryAfterRight, probeBurst, yes, ev))
	default:
		fs = append(fs, cannot(RuleRetryAfterRight, probeBurst, "no Retry-After could be checked against a later acceptance", ev))
	}
	return fs
}

// isolationFinding: two clients each sent past the burst at once; each
// with its own quota accepts about the burst each, a shared one about the
// burst in all — or the limiter's fitted capacity when it is less than
// the burst.
func (st *state) isolationFinding() reports.Finding {
	pd := st.data[probeIsolation]
	switch {
	case len(st.base.Creds) < 2:
		return cannot(RuleIsolated, probeIsolation, "the file has one client: isolation needs clients: 2 or more")
	case st.burst == 0:
		return cannot(RuleIsolated, probeIsolation, "no cold burst was found to send past")
	case pd == nil || pd.sum == nil:
		return cannot(RuleIsolated, probeIsolation, "the isolation probe wrote no report")
	case pd.verdict == reports.VerdictError:
		return cannot(RuleIsolated, probeIsolation, distrusted)
	}
	var acc, least int64 = 0, math.MaxInt64
	var ev []string
	for _, c := range pd.sum.RateLimit.Clients {
		acc += c.Accepted
		least = min(least, c.Accepted)
		ev = append(ev, fmt.Sprintf("client %s: %d sent, %d accepted, %d refused 429", c.ClientID, c.Sent, c.Accepted, c.Rejected429))
	}
	ev = append(ev, fmt.Sprintf("the cold burst of one client alone: %d", st.burst))
	b := float64(st.burst)
	if c := st.fittedCapacity(); c > 0 && c < b {
		// The cold burst took what refilled while it went; a limiter whose
		// 429s use quota gives that to the refusals of a longer burst.
		b = c
		ev = append(ev, fmt.Sprintf("the limiter's capacity as fitted: %g", c))
	}
	switch {
	case len(pd.sum.RateLimit.Clients) < 2:
		return cannot(RuleIsolated, probeIsolation, "fewer than two clients sent", ev...)
	case float64(least) >= 0.9*b:
		return found(RuleIsolated, probeIsolation, yes, ev...)
	case float64(acc) <= 1.2*b+1:
		return found(RuleIsolated, probeIsolation, no, ev...)
	}
	return cannot(RuleIsolated, probeIsolation, fmt.Sprintf("%d accepted in all, neither about %g each nor about %g together", acc, b, b), ev...)
}

// fittedCapacity is what the burst probe's limiter fit says the limiter
// admits at once (a bucket's capacity, a window's limit), 0 when it named
// none or its run is not trusted.
func (st *state) fittedCapacity() float64 {
	pd := st.data[probeBurst]
	if pd == nil || pd.sum == nil || pd.verdict == reports.VerdictError {
		return 0
	}
	switch alg := pd.sum.RateLimit.Algorithm; alg.Verdict {
	case "token bucket":
		return alg.Capacity
	case "sliding window", "fixed window":
		return alg.Limit
	}
	return 0
}

// idempotencyFindings: resends and copies of notifications after their
// answer — the notificationId answered, the codes, and the deliveries.
func (st *state) idempotencyFindings() []reports.Finding {
	rules := append([]string{RuleRetrySameID, RuleCopiesSameID, RuleCopiesAnswer, RuleOneDelivery}, idemRules...)
	pd := st.data[probeIdempotency]
	if pd == nil || pd.sum == nil {
		return allCannot(rules, probeIdempotency, "the idempotency probe did not run or wrote no report")
	}
	if pd.verdict == reports.VerdictError {
		return allCannot(rules, probeIdempotency, distrusted)
	}
	seq, seqEv := sameID(pd.attempts, "sequential")
	conc, concEv := sameID(pd.attempts, "concurrent")
	fs := []reports.Finding{idFinding(RuleRetrySameID, seq, seqEv), idFinding(RuleCopiesSameID, conc, concEv)}
	doubt := resendDoubts(pd.attempts)
	doubt.doubtIDs(fs)
	codes := codesOf(pd.attempts, "concurrent")
	if codes == "" {
		fs = append(fs, cannot(RuleCopiesAnswer, probeIdempotency, "no copy was answered", concEv))
	} else {
		fs = append(fs, found(RuleCopiesAnswer, probeIdempotency, codes, concEv))
	}
	d := pd.sum.Delivery
	dev := fmt.Sprintf("%d notifications and their %d resends: %d webhooks received, %d delivered under a second id", pd.sum.Requests.Total, pd.sum.Idempotency.Probes, d.Received, pd.sum.Idempotency.DuplicateDeliveries)
	switch {
	case !d.Measured || d.Received == 0:
		fs = append(fs, cannot(RuleOneDelivery, probeIdempotency, "no delivery was observed (delivery via "+d.Via+")", dev))
	case pd.sum.Idempotency.DuplicateDeliveries > 0 && doubt.late > 0:
		// the second id may be the late resend's: a new key to the service
		fs = append(fs, cannot(RuleOneDelivery, probeIdempotency, doubt.lateWhy()+" (the deliveries': no)", dev))
	case pd.sum.Idempotency.DuplicateDeliveries > 0:
		fs = append(fs, found(RuleOneDelivery, probeIdempotency, no, dev))
	default:
		fs = append(fs, found(RuleOneDelivery, probeIdempotency, yes, dev))
	}
	fs = append(fs, st.idemMoreFindings(pd)...)
	doubt.noteUnanswered(fs)
	return fs
}

// sameID counts the probes of kind answered 2xx and those answered with
// another notificationId than their message's.
func sameID(as []rundir.Attempt, kind string) (counts [2]int, ev string) {
	n := 0
	for _, a := range as {
		if a.Probe != kind {
			continue
		}
		n++
		if a.Code >= 200 && a.Code < 300 {
			counts[0]++
			if a.Mismatch {
				counts[1]++
			}
		}
	}
	return counts, fmt.Sprintf("%d %s resends, %d answered 2xx, %d of them with another notificationId", n, kind, counts[0], counts[1])
}

func idFinding(rule string, c [2]int, ev string) reports.Finding {
	switch {
	case c[1] > 0:
		return found(rule, probeIdempotency, no, ev)
	case c[0] > 0:
		return found(rule, probeIdempotency, yes, ev)
	}
	return cannot(rule, probeIdempotency, "no resend was answered 2xx", ev)
}

// codesOf is the set of codes the probes of kind got ("200,409").
func codesOf(as []rundir.Attempt, kind string) string {
	var cs []string
	for _, a := range as {
		if a.Probe == kind && a.Code > 0 {
			cs = append(cs, strconv.Itoa(a.Code))
		}
	}
	return codeSet(strings.Join(cs, ","))
}

func allCannot(rules []string, probe, why string) []reports.Finding {
	fs := make([]reports.Finding, 0, len(rules))
	for _, r := range rules {
		fs = append(fs, cannot(r, probe, why))
	}
	return fs
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
