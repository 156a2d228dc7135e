package reports

// The rate_limit section of summary.json: each client's counts, the
// accepted past the scenario's limit in one window, Retry-After, the
// announced policy. Which limiter the service behaves like is
// reports/limitfit's fit, mapped here onto rate_limit.algorithm.

import (
	"fmt"
	"sort"
	"time"

	"github.com/msgload/msgload/internal/ratelimitfield"
	"github.com/msgload/msgload/reports/limitfit"
)

// rec is one rate-limit decision of the service for a client, as the fit
// reads it (limitfit.Request: compact on purpose, 24 bytes).
type rec = limitfit.Request

// Limiter verdicts and what used quota, as the fit names them.
const (
	algoSliding      = limitfit.Sliding
	algoFixed        = limitfit.Fixed
	algoTokenBucket  = limitfit.TokenBucket
	algoUnknown      = limitfit.CannotTell
	algoNotExercised = limitfit.NotExercised
	quotaYes         = limitfit.QuotaYes
	quotaNo          = limitfit.QuotaNo
	quotaUnknown     = limitfit.QuotaUnknown
)

// rateLimit fills summary.json's rate_limit from the decisions kept (or
// only counted), with the limiter the fit names.
func (a *analyzer) rateLimit() {
	rl := &a.s.RateLimit
	W := a.meta.Limit.Window.D().Nanoseconds()
	L := a.meta.Limit.Requests
	ids := make([]string, 0, len(a.clients))
	for id := range a.clients {
		ids = append(ids, id)
	}
	if !a.keepRecs {
		// Only counted (no window, no truth, no 429): the same figures from
		// the counts — nothing in a window, nothing refused, no limiter to name.
		for id := range a.counts {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		rl.Clients = []clientLimit{}
		var decisions int64
		for _, id := range ids {
			n := a.counts[id]
			rl.Clients = append(rl.Clients, clientLimit{ClientID: id, Sent: n[0], Accepted: n[1]})
			decisions += n[1]
		}
		rl.Algorithm = algorithmOf(limitfit.NotReached(decisions, nil, ids, time.Duration(W), L))
		checkPolicy(rl)
		return
	}
	sort.Strings(ids)
	rl.Clients = []clientLimit{}
	for _, id := range ids {
		rs := a.clients[id]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Sent < rs[j].Sent })
		c := clientLimit{ClientID: id}
		acc := make([]int64, 0, len(rs))
		var accLat []int64
		for _, r := range rs {
			c.Sent++
			if is2xx(int(r.Code)) {
				c.Accepted++
				acc = append(acc, r.Sent)
				accLat = append(accLat, r.Latency)
			}
			if r.Code == 429 {
				c.Rejected429++
				if c.First429At == "" {
					t := time.Unix(0, r.Sent).UTC()
					c.First429At = ts(t)
					if !a.start.IsZero() {
						c.First429AfterS = round6(t.Sub(a.start).Seconds())
					}
				}
			}
		}
		if W > 0 {
			c.MaxAccepted, c.ExcessAccepted = limitfit.SurelyInWindow(acc, accLat, W, L)
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
	rl.Algorithm = algorithmOf(limitfit.Classify(a.clients, ids, time.Duration(W), L))
	checkPolicy(rl)
}

// algorithmOf is the fit's verdict as summary.json's rate_limit.algorithm.
func algorithmOf(r limitfit.Result) algorithm {
	return algorithm{Verdict: r.Verdict, Limit: r.Limit, Capacity: r.Capacity, Evidence: r.Evidence,
		Contradictions: r.Contradictions, Decisions: r.Decisions, Window: r.Window,
		DiffersFromScenario: r.DiffersFromScenario, FailuresUseQuota: r.FailuresUseQuota, RefusalsUseQuota: r.RefusalsUseQuota}
}

// readPolicy reads the first RateLimit-Policy seen into h: its first
// policy's quota and window, or, when the field is not well formed (read
// strictly, by internal/ratelimitfield: the reader characterise checks the
// fields with), the verdict that says so and nothing else — no quota or
// window read off part of a malformed field.
func readPolicy(h *headers, v string) {
	ps, err := ratelimitfield.ParsePolicy(v)
	if err != nil {
		h.PolicyVerdict = "malformed, not read: " + err.Error()
		return
	}
	h.PolicyLimit, h.PolicyWindow = int(ps[0].Q), float64(ps[0].W)
}

// checkPolicy says whether the announced policy is the limit the service
// enforced: the same window, and the fitted limit when a window limiter was
// named (otherwise no window held more than the quota).
func checkPolicy(rl *rateLimit) {
	h := &rl.Headers
	if h.RateLimitPolicy == 0 || h.PolicyVerdict != "" { // none, or malformed (readPolicy)
		return
	}
	if h.PolicyWindow == 0 {
		h.PolicyVerdict = "the RateLimit-Policy field announces no window (w): nothing to check it against"
		return
	}
	w, whose := rl.Window, "the scenario's"
	if rl.Algorithm.Window > 0 {
		w, whose = rl.Algorithm.Window, "the service's"
	}
	switch v := rl.Algorithm.Verdict; {
	case w > 0 && h.PolicyWindow != w:
		h.PolicyVerdict = fmt.Sprintf("announced window %gs, %s is %gs", h.PolicyWindow, whose, w)
	case (v == algoSliding || v == algoFixed) && int(rl.Algorithm.Limit) != h.PolicyLimit:
		h.PolicyVerdict = fmt.Sprintf("announced %d per window, the service enforced %g", h.PolicyLimit, rl.Algorithm.Limit)
	case v != algoSliding && v != algoFixed && rl.MaxAccepted > h.PolicyLimit && v != algoTokenBucket:
		h.PolicyVerdict = fmt.Sprintf("announced %d per window, a window held %d accepted", h.PolicyLimit, rl.MaxAccepted)
	default:
		h.PolicyAgrees = true
		h.PolicyVerdict = "the announced policy matches what was observed"
	}
}

// retryAfter checks each 429's Retry-After against what the client saw next,
// with a second of slack either way for whole-second rounding. The service
// decided the 429 between its send and its answer, and the delay counts from
// the answer (RFC 9110: after the response is received): the first
// acceptance that judges it is the first sent after that answer — one sent
// while the 429 was on its way may have been decided before it (it took the
// slot the refusal missed) and says nothing of the delay. Too long only when
// that acceptance surely came before the delay from the 429's send (its
// answer did); too short when requests sent within a second after the delay
// from the 429's answer were refused and none accepted.
func (a *analyzer) retryAfter(rs []rec) {
	ra := &a.s.RateLimit.RetryAfter
	const slack = int64(time.Second)
	for i, r := range rs {
		if r.Code != 429 {
			continue
		}
		switch {
		case r.RetryAfter == -1:
			ra.Missing++
			continue
		case r.RetryAfter < 0:
			ra.Present++
			ra.Invalid++
			continue
		}
		ra.Present++
		delay, answered := int64(float64(r.RetryAfter)*1e9), r.Sent+max(r.Latency, 0)
		first := firstAcceptedFrom(rs, i+1, answered)
		long := first < len(rs) && rs[first].Sent+max(rs[first].Latency, 0) < r.Sent+delay-slack
		short := false
		if until := answered + delay; !long && (first == len(rs) || rs[first].Sent > until+slack) {
			for k := sort.Search(len(rs), func(k int) bool { return rs[k].Sent >= until }); k < len(rs) && rs[k].Sent <= until+slack; k++ {
				short = short || rs[k].Code == 429
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

// firstAcceptedFrom is the index of the first 2xx in rs (by send time) from
// index from on that was sent at or after the instant at, len(rs) if none.
func firstAcceptedFrom(rs []rec, from int, at int64) int {
	for j := from; j < len(rs); j++ {
		if rs[j].Sent >= at && is2xx(int(rs[j].Code)) {
			return j
		}
	}
	return len(rs)
}
