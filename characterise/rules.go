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

// The rules of the contract, as contract.json, junit.xml and expect: name them.
const (
	RuleBurst            = "rate_limit.burst"              // requests accepted at once from cold
	RuleLimit            = "rate_limit.limit"              // N/window the limiter allows
	RuleCapacity         = "rate_limit.capacity"           // requests a full limiter admits at once (a bucket's capacity; a window's limit)
	RuleAlgorithm        = "rate_limit.algorithm"          // sliding window, fixed window, token bucket, none
	RuleRefusalsUseQuota = "rate_limit.refusals_use_quota" // yes, no
	RuleIsolated         = "rate_limit.isolated"           // yes: each client has its own quota
	RuleRetryAfter       = "rate_limit.retry_after"        // present, absent
	RuleRetryAfterRight  = "rate_limit.retry_after_accurate"
	RuleFailuresUseQuota = "rate_limit.failures_use_quota"  // yes, no: a request answered 5xx (or not at all) used quota
	RuleStraddle         = "rate_limit.boundary_straddle"   // yes: more than the limit accepted within one window (a fixed window across its boundary)
	RuleRetrySameID      = "idempotency.retry_same_id"      // a resend after the answer: the same notificationId
	RuleCopiesSameID     = "idempotency.concurrent_same_id" // copies sent at once after the answer: the same notificationId
	RuleOneDelivery      = "idempotency.one_delivery"       // no externalId delivered twice
	RuleCopiesAnswer     = "idempotency.concurrent_answer"  // the codes the copies got (e.g. 200, 409)
	algoNone             = "none"                           // no 429 came
	yes, no              = "yes", "no"
)

// Rules lists the rules expect: may name.
func Rules() []string {
	return []string{RuleBurst, RuleLimit, RuleCapacity, RuleAlgorithm, RuleRefusalsUseQuota, RuleIsolated, RuleRetryAfter, RuleRetryAfterRight,
		RuleFailuresUseQuota, RuleStraddle, RuleSustained09, RuleSustained10, RuleSustained11,
		RuleIETFFields, RuleIETFConsistent, RuleRetrySameID, RuleCopiesSameID, RuleOneDelivery, RuleCopiesAnswer,
		RuleHookSchedule, RuleHookFirstDelay, RuleHookFactor, RuleHookCap, RuleHookAttempts, RuleHookGivesUpAfter, RuleHookRetryAfter, RuleHookDuplicates, RuleHookOutOfOrder,
		RuleHookSignature, RuleHookSkew,
		RuleHookGoneStops, RuleHookSenderTimeout, RuleFailoverAfterTTL, RuleStatusAgrees,
		RuleInFlightOneEffect, RuleInFlightAnswer, RuleChangedBody, RuleRetry5xxOneEffect, RuleRetryResetOne, RuleWindow,
		RuleTokenExpiresIn, RuleTokenLifetime, RuleTokenAsAnnounced, RuleTokenRefresh, RuleTokenExpired, RuleTokenForbidden, RuleMsgSecondTx, RuleMsgSecondDelivery}
}

// algorithms are the words of rate_limit.algorithm (the fitter's verdicts).
var algorithms = []string{"sliding window", "fixed window", "token bucket", algoNone}

// checkExpected says what is wrong with an expected value ("" when nothing).
func checkExpected(rule, v string) string {
	if msg, ok := checkTokenExpected(rule, v); ok {
		return msg
	}
	switch rule {
	case RuleBurst, RuleCapacity:
		if n, err := strconv.Atoi(v); err != nil || n < 0 {
			return "want a count of requests"
		}
	case RuleHookSchedule:
		if !slices.Contains([]string{scheduleFixed, scheduleExponential, scheduleNone}, v) {
			return "want fixed, exponential or none"
		}
	case RuleHookFirstDelay, RuleHookFactor, RuleHookCap, RuleHookAttempts, RuleHookGivesUpAfter, RuleHookDuplicates, RuleHookOutOfOrder:
		if n, err := strconv.ParseFloat(v, 64); err != nil || n < 0 {
			return "want a number (seconds, a factor, a count or a share 0..1)"
		}
	case RuleHookSenderTimeout:
		if n, err := strconv.ParseFloat(v, 64); err != nil || n < 0 {
			return "want seconds"
		}
	case RuleHookSkew, RuleFailoverAfterTTL:
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "want seconds"
		}
	case RuleHookSignature:
		if v != rundir.SignatureStandardWebhooks && v != "none" {
			return "want " + rundir.SignatureStandardWebhooks + " or none"
		}
	case RuleLimit:
		if _, _, err := rundir.ParseRate(v); err != nil {
			return "want a rate N/window such as 100/1m"
		}
	case RuleAlgorithm:
		if !slices.Contains(algorithms, v) {
			return "want one of " + strings.Join(algorithms, ", ")
		}
	case RuleSustained09, RuleSustained10, RuleSustained11:
		if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 || f > 1 {
			return "want a share of requests, 0 to 1 (0.09 for 9 %)"
		}
	case RuleRetryAfter, RuleIETFFields:
		if v != "present" && v != "absent" {
			return "want present or absent"
		}
	case RuleChangedBody:
		return checkAnswers(v, changedFirst, changedNew)
	case RuleWindow:
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			return "want a duration, e.g. 24h or 90s"
		}
	case RuleCopiesAnswer, RuleInFlightAnswer:
		return checkAnswers(v)
	default:
		if v != yes && v != no {
			return "want yes or no"
		}
	}
	return ""
}

// checkAnswers says what is wrong with a list of HTTP codes and words.
func checkAnswers(v string, words ...string) string {
	for c := range strings.SplitSeq(v, ",") {
		if slices.Contains(words, strings.TrimSpace(c)) {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSpace(c)); err != nil || n < 100 || n > 599 {
			if len(words) > 0 {
				return "want " + strings.Join(words, ", ") + " or HTTP codes, e.g. " + words[0] + " or 422"
			}
			return "want HTTP codes, e.g. 200 or 200, 409"
		}
	}
	return ""
}

// judge sets f's verdict against the expected value e ("" for none): a
// value that cannot be told against an expectation is incomplete, never pass.
func judge(f *reports.Finding, e string) {
	f.Expected = e
	switch {
	case e == "":
		f.Verdict = reports.VerdictPass
	case f.Value == reports.CannotTell:
		f.Verdict, f.Reason = reports.VerdictIncomplete, fmt.Sprintf("expected %s, cannot tell, because %s", e, f.Because)
	case matches(f, e):
		f.Verdict = reports.VerdictPass
	default:
		f.Verdict, f.Reason = "fail", fmt.Sprintf("expected %s, found %s", e, f.Value)
	}
}

// matches is whether f's value agrees with the expected e: a number within
// the finding's interval, a rate of the same window whose count is within it,
// a list of codes as a set, a word as written.
func matches(f *reports.Finding, e string) bool {
	if ok, handled := matchesToken(f, e); handled {
		return ok
	}
	switch f.Rule {
	case RuleBurst, RuleCapacity, RuleSustained09, RuleSustained10, RuleSustained11, RuleHookSkew, RuleHookFirstDelay, RuleHookFactor, RuleHookCap, RuleHookAttempts, RuleHookGivesUpAfter, RuleHookDuplicates, RuleHookOutOfOrder:
		n, _ := strconv.ParseFloat(e, 64)
		return within(f, n)
	case RuleHookSenderTimeout, RuleFailoverAfterTTL:
		n, _ := strconv.ParseFloat(e, 64)
		return within(f, n)
	case RuleLimit:
		c, w, _ := rundir.ParseRate(e)
		if f.PerSecond != nil { // a bucket: its rate, whatever the window it is written in
			return math.Abs(c/w.Seconds()-*f.PerSecond) <= 0.01*(*f.PerSecond)
		}
		fc, fw, err := rundir.ParseRate(f.Value)
		if err != nil || fw <= 0 {
			return false
		}
		// the same rate over the same window: 100/1m is 100/60s, not 50/30s
		return math.Abs(w.Seconds()-fw.Seconds()) <= 0.05*w.Seconds() && (within(f, c) || c == fc)
	case RuleCopiesAnswer, RuleInFlightAnswer, RuleChangedBody:
		return codeSet(e) == codeSet(f.Value)
	case RuleWindow: // within the interval
		d, _ := time.ParseDuration(e)
		return f.Low != nil && f.High != nil && d.Seconds() >= *f.Low && d.Seconds() <= *f.High
	}
	return f.Value == e
}

func within(f *reports.Finding, x float64) bool {
	if f.Low == nil || f.High == nil {
		v, err := strconv.ParseFloat(f.Value, 64)
		return err == nil && v == x
	}
	return x >= *f.Low && x <= *f.High
}

// codeSet is a list of codes sorted, without repeats: "409, 200" → "200,409".
func codeSet(s string) string {
	var cs []string
	for c := range strings.SplitSeq(s, ",") {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(cs, c) {
			cs = append(cs, c)
		}
	}
	slices.Sort(cs)
	return strings.Join(cs, ",")
}
