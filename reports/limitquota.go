package reports

// The limiter fit under each hypothesis of what used quota (see README,
// "How the limiter is named": What used quota).

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// classify names the limiter the service behaves like, with its limit and
// window read off the answers (see README, "How the limiter is named"). A
// failed answer (5xx, or none) may or may not have used quota, and so may a
// refusal: the fit is made under each hypothesis (failed answers only when
// some came) and the evidence decides (weigh).
func classify(clients map[string][]rec, ids []string, w int64, limit int) algorithm {
	alg := algorithm{Verdict: algoUnknown, Evidence: []string{}}
	// Without a 429 there is nothing to classify: count the decisions (what
	// newDecisions keeps: 2xx and 429) and say why, without building every
	// client's decisions (40 bytes an accepted request).
	refused429 := false
	var failed int64
	for _, id := range ids {
		for _, r := range clients[id] {
			switch {
			case is2xx(int(r.code)) || r.code == 429:
				alg.Decisions++
				refused429 = refused429 || r.code == 429
			case failedAnswer(r.code):
				failed++
			}
		}
	}
	if !refused429 {
		return notReached(alg, clients, ids, w, limit)
	}
	var fits []hypothesisFit
	spared := false // the 429s' hypothesis was not tried (a long run fitted perfectly without it)
	for _, h := range []hypothesis{{}, {refused: true}, {failed: true}, {failed: true, refused: true}} {
		if h.failed && failed == 0 {
			continue
		}
		if h.refused && alg.Decisions >= quotaTrialMax && perfect(fits[len(fits)-1].score) {
			// It could refute the 429s' counting ("no"), at the price of a
			// whole fit again: spared past quotaTrialMax decisions.
			spared = true
			continue
		}
		a, sc := fitClients(clients, ids, w, limit, h)
		fits = append(fits, hypothesisFit{h, a, sc})
	}
	alg = weigh(fits, failed)
	if spared {
		alg.RefusalsUseQuota = quotaUnknown
	}
	return alg
}

// quotaTrialMax is the most decisions the hypothesis that 429s used quota
// is always tried for; past it, only when the fit without it contradicts
// some decision (it could refute counting them, at the price of a whole fit
// again: 2–3 times the fit's time and memory on 100,000 decisions).
const quotaTrialMax = 50_000

// perfect reports whether a fit contradicts no decision with a round or the
// scenario's window.
func perfect(sc fitScore) bool { return sc.bad == 0 && sc.top.rank == 0 }

// hypothesisFit is the fit under one hypothesis.
type hypothesisFit struct {
	h     hypothesis
	alg   algorithm
	score fitScore
}

// failedAnswer is an answer that says nothing of the limiter's decision but
// may have used quota: a 5xx, or none (a reset, a timeout). A service whose
// limiter decides before the failure counts it as accepted; one that skips
// failed requests, or fails before its limiter, does not.
func failedAnswer(code int16) bool { return code >= 500 || code <= 0 }

// fitScore is how well a fit went: the contradictions of its best candidate
// (math.MaxInt64 when nothing was fitted) and that candidate.
type fitScore struct {
	bad int64
	top candidate
}

// fitClients fits the three limiters to every client's decisions under h.
func fitClients(clients map[string][]rec, ids []string, w int64, limit int, h hypothesis) (algorithm, fitScore) {
	alg := algorithm{Verdict: algoUnknown, Evidence: []string{}}
	f := &fitter{w: w, limit: limit, best: map[string]candidate{}}
	var refused int64
	recovered := false
	for _, id := range ids {
		acc := hypothesis{failed: h.failed} // the acceptances' checks never count refusals (fill)
		d := newDecisions(clients[id], acc, false)
		if len(d.at)+len(d.rt) == 0 {
			continue
		}
		f.all = append(f.all, d)
		f.tight = append(f.tight, newDecisions(clients[id], acc, true))
		if h.refused {
			f.cnt = append(f.cnt, newDecisions(clients[id], h, false))
			f.tcnt = append(f.tcnt, newDecisions(clients[id], h, true))
		}
		alg.Decisions += int64(len(d.at) + len(d.rt))
		refused += int64(len(d.rt))
		f.span = max(f.span, d.last-d.first)
		recovered = recovered || len(d.recov) > 0
	}
	none := fitScore{bad: math.MaxInt64}
	if refused == 0 {
		return notReached(alg, clients, ids, w, limit), none
	}
	if !recovered {
		burst := 0
		for _, d := range f.all {
			burst = max(burst, d.burst)
		}
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("no request was accepted after a 429 (the first came after %d accepted): "+
			"the window is longer than the rest of the run, or the service stopped accepting", burst))
		return alg, none
	}
	f.fitWindows(f.windows())
	f.fitBuckets()
	alg = f.verdict(alg)
	return alg, fitScore{bad: f.topBad, top: f.top}
}

// weigh takes the fit with the fewest contradictions among the hypotheses,
// then the one whose best candidate has a round or the scenario's window
// over one read off the 429s. Whether failed answers and refusals used quota
// is told when every fit as good by those two agrees on it. Counting
// the refusals makes every model more pliable (the 429s fill the window
// themselves, and it wins on the finer ties, like the send times), so among
// fits that tie so far the ones that leave them out decide the verdict; when
// those name different limiters, limits or windows, the verdict is cannot
// tell.
func weigh(fits []hypothesisFit, failed int64) algorithm {
	key := func(f hypothesisFit) [2]int64 { return [2]int64{f.score.bad, int64(f.score.top.rank)} }
	less := func(a, b [2]int64) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }
	best := fits[0]
	for _, f := range fits[1:] {
		if less(key(f), key(best)) {
			best = f
		}
	}
	var deciding []hypothesisFit // as good by contradictions and window: they tell what used quota
	for _, f := range fits {
		if key(f) == key(best) {
			deciding = append(deciding, f)
		}
	}
	ties := slices.Clone(deciding)
	rival, close := nearRival(fits, ties)
	if close && rival.h.refused == false {
		deciding = append(deciding, rival) // the refusals' hypothesis won, by too little to trust its name alone
	}
	if slices.ContainsFunc(deciding, func(f hypothesisFit) bool { return !f.h.refused }) && !close {
		deciding = slices.DeleteFunc(deciding, func(f hypothesisFit) bool { return f.h.refused })
	}
	best = deciding[0]
	agree := true
	for _, f := range deciding[1:] {
		agree = agree && f.alg.Verdict == best.alg.Verdict && f.alg.Limit == best.alg.Limit &&
			f.alg.Window == best.alg.Window && f.alg.Capacity == best.alg.Capacity
	}
	alg := best.alg
	if !agree {
		alg = algorithm{Verdict: algoUnknown, Decisions: best.alg.Decisions, Contradictions: best.alg.Contradictions,
			Evidence: slices.Clone(best.alg.Evidence)}
		var named []string
		for _, f := range deciding {
			named = append(named, fmt.Sprintf("%s: %s", f.h, f.alg.Verdict))
		}
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("the answers fit as well or nearly (at best %s) under hypotheses that name different limiters: %s",
			Plural(best.score.bad, "contradiction"), strings.Join(named, "; ")))
	}
	told := func(of func(hypothesis) bool) string {
		v := of(ties[0].h)
		for _, f := range ties[1:] {
			if of(f.h) != v {
				return quotaUnknown
			}
		}
		return map[bool]string{true: quotaYes, false: quotaNo}[v]
	}
	score := func(of func(hypothesis) bool, v bool) string {
		n := int64(math.MaxInt64)
		for _, f := range fits {
			if of(f.h) == v {
				n = min(n, f.score.bad)
			}
		}
		if n == math.MaxInt64 {
			return "nothing fitted"
		}
		return Plural(n, "contradiction")
	}
	if best.score.bad == math.MaxInt64 {
		return alg // nothing fitted under any hypothesis: nothing to tell
	}
	isRefused := func(h hypothesis) bool { return h.refused }
	isFailed := func(h hypothesis) bool { return h.failed }
	alg.RefusalsUseQuota = told(isRefused)
	if score(isRefused, true) == score(isRefused, false) {
		// As few contradictions either way (a tie broken only by a window
		// read off the 429s): neither is refuted.
		alg.RefusalsUseQuota = quotaUnknown
	}
	if close {
		alg.RefusalsUseQuota = quotaUnknown
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("429 answers used quota: cannot tell (at best %s with them counted, %s without: no more apart than %s)",
			score(isRefused, true), score(isRefused, false), Plural(quotaMargin(best.alg.Decisions), "contradiction")))
	}
	if !allNamed(ties) {
		// The fits that tell are not trusted to name the limiter (the trace
		// could not tell them apart): what they say of the 429s is no surer.
		alg.RefusalsUseQuota = quotaUnknown
	}
	if alg.RefusalsUseQuota != quotaUnknown { // mostly it cannot be told: said only when it can
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("429 answers used quota: %s (at best %s with them counted, %s without)",
			alg.RefusalsUseQuota, score(isRefused, true), score(isRefused, false)))
	}
	if failed > 0 {
		alg.FailuresUseQuota = told(isFailed)
		alg.Evidence = append(alg.Evidence, fmt.Sprintf("%s (5xx or none) used quota: %s (at best %s with them counted as accepted, %s left out)",
			Plural(failed, "failed answer"), alg.FailuresUseQuota, score(isFailed, true), score(isFailed, false)))
	}
	return alg
}

// quotaMargin is how many contradictions more the losing hypothesis of
// whether 429s used quota must have before the other is told: the share of
// decisions a model may get wrong, and at least 3. A short trace (a probe of
// a few dozen requests, every latency longer than the spacing of sends) is
// fitted all but perfectly under either, by different limiters, and one
// decision either way is chance.
func quotaMargin(decisions int64) int64 {
	return max(int64(math.Floor(contradictionShare*float64(decisions))), 3)
}

// nearRival is the best fit under the other hypothesis of the refusals than
// the tied best ones (ties, all alike in that, and in failed answers for
// the rival), when it is within quotaMargin of them and they won with a
// window read off the 429s: close, nothing of the 429s is told, and when
// the rival leaves them out it names the limiter too.
func nearRival(fits, ties []hypothesisFit) (rival hypothesisFit, close bool) {
	ref := ties[0].h.refused
	if slices.ContainsFunc(ties, func(f hypothesisFit) bool { return f.h.refused != ref }) {
		return rival, false // both tie: told as cannot tell already
	}
	found := false
	for _, f := range fits {
		if f.h.refused != ref && f.h.failed == ties[0].h.failed && (!found || f.score.bad < rival.score.bad) {
			rival, found = f, true
		}
	}
	best := ties[0].score.bad
	if !found || best == math.MaxInt64 || rival.score.bad == math.MaxInt64 {
		return rival, false
	}
	// Only a window read off the 429s themselves is pliable enough to need
	// the margin: one of the scenario's or the common ones was not fitted
	// to these decisions.
	return rival, ties[0].score.top.rank > 0 && rival.score.bad-best <= quotaMargin(ties[0].alg.Decisions)
}

// allNamed reports whether every fit named a limiter.
func allNamed(fits []hypothesisFit) bool {
	for _, f := range fits {
		if v := f.alg.Verdict; v != algoSliding && v != algoFixed && v != algoTokenBucket {
			return false
		}
	}
	return true
}

// String names a hypothesis for the evidence.
func (h hypothesis) String() string {
	switch {
	case h.failed && h.refused:
		return "failed answers and 429s used quota"
	case h.failed:
		return "failed answers used quota"
	case h.refused:
		return "429s used quota"
	}
	return "only the accepted used quota"
}

// Whether failed answers or refusals used quota (algorithm.FailuresUseQuota,
// RefusalsUseQuota).
const (
	quotaYes     = "yes"
	quotaNo      = "no"
	quotaUnknown = "cannot tell"
)
