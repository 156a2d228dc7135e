package attack

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/msgload/msgload/rundir"
)

// notSent fills a for a request that was not made because of a GaveUp reason.
func (e *engine) notSent(a *rundir.Attempt, why string) {
	a.Sent = time.Now()
	a.Outcome, a.Class, a.GaveUp = rundir.OutcomeFail, rundir.ClassOther, why
	a.Error = "not sent: " + gaveUpText[why]
}

var gaveUpText = map[string]string{
	gaveUpRetryAfter: "Retry-After past the run's end",
	gaveUpBackoff:    "backoff past the run's end",
	gaveUpLimit:      "rate limit window past the run's end",
	gaveUpStopped:    "run interrupted",
}

// retryable says whether the policy retries after a: its code, or no answer
// (timeout, reset) when OnTimeout. A 2xx whose body is not the API's answer
// (bad_answer, outcome unknown) is retried with OnTimeout for notify when the
// message has an externalId (the service answers a repeat with the same
// notificationId and sends nothing twice); never for messaging, where a
// resend is a new message.
func (e *engine) retryable(a *rundir.Attempt) bool {
	if a.Class == rundir.ClassBadAnswer {
		return e.o.Retry.OnTimeout && a.API == rundir.APINotify && a.ExternalID != ""
	}
	if e.retryOn[a.Code] {
		return true
	}
	if a.Code != 0 || !e.o.Retry.OnTimeout {
		return false
	}
	// No answer: an unknown outcome, or a token request that timed out or was
	// reset (the attempt itself was never sent).
	return a.Outcome == rundir.OutcomeUnknown || a.Class == rundir.ClassTimeout || a.Class == rundir.ClassReset
}

// backoff is the wait before retry n: Backoff·2^(n-1) with jitter (a random
// share up to Jitter added or removed), at most MaxWait.
func (e *engine) backoff(n int) time.Duration {
	b := float64(e.o.Retry.Backoff) * math.Pow(2, float64(n-1))
	if j := e.o.Retry.Jitter; j > 0 {
		b *= 1 - j + 2*j*rand.Float64()
	}
	return min(time.Duration(b), e.retryCap)
}

// retryAfterWait is the wait for a Retry-After of d: d plus a random share up
// to Jitter of it (never less than d: the service asked for d), not past the
// run's end when d itself is not. MaxWait does not cut it.
func (e *engine) retryAfterWait(d time.Duration) time.Duration {
	j := e.o.Retry.Jitter
	if j <= 0 {
		return d
	}
	hi := d + time.Duration(j*float64(d))
	if end, _ := e.end.get(); !end.IsZero() {
		if left := time.Until(end); left >= d && left < hi {
			hi = left
		}
	}
	return d + time.Duration(rand.Float64()*float64(hi-d))
}

// sleep waits d unless the run is aborted; it reports whether it slept fully.
// Polls use it: they go on after the first signal, until the second.
func (e *engine) sleep(d time.Duration) bool {
	if d <= 0 {
		return e.abort.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-e.abort.Done():
		return false
	}
}
