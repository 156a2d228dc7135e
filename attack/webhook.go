package attack

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
)

// registerWebhooks registers WebhookURL for every client before the load.
func (e *engine) registerWebhooks() error {
	body := []byte(`{"url":` + strconv.Quote(e.o.WebhookURL) + `}`)
	u := strings.TrimRight(e.o.BaseURL, "/") + rundir.RouteWebhooks
	for _, c := range e.clients {
		m := &message{client: c}
		authRetried, retries := false, 0
		for n := 1; ; n++ {
			a := e.attempt(m, opWebhook, n)
			a.Intended = time.Now()
			e.exchange(e.halt, c, a, http.MethodPost, u, body)
			e.write(c, a)
			if a.Outcome == rundir.OutcomeOK {
				break
			}
			// Retried like a send: a refused token once, the policy's codes and
			// timeouts. The registration is set-up, not load, and one webhook
			// per client makes it idempotent: 500, 503 and no answer (the codes
			// the seed says are safe to retry) are tried setupRetries times
			// even when the scenario retries nothing, so a fault meant for the
			// sends does not stop the run before its first one.
			var wait time.Duration
			if a.Code == http.StatusUnauthorized && !authRetried {
				authRetried = true
			} else if e.retryable(a) && retries < e.o.Retry.Max {
				retries++
				wait = e.backoff(retries)
			} else if setupRetryable(a) && retries < setupRetries {
				retries++
				wait = time.Duration(retries) * setupBackoff
			} else {
				return fmt.Errorf("%w: client %q: %s", errWebhook, c.ID, a.Error)
			}
			if e.pause(e.halt, wait, gaveUpBackoff) != "" {
				return fmt.Errorf("%w: client %q: %s", errWebhook, c.ID, a.Error)
			}
		}
	}
	return nil
}

// setupRetries and setupBackoff bound the tries of a webhook registration
// beyond the scenario's retry policy.
const (
	setupRetries = 3
	setupBackoff = 200 * time.Millisecond
)

// setupRetryable reports whether a set-up call's failure is one the seed says
// may be retried: 500, 503, or no answer.
func setupRetryable(a *rundir.Attempt) bool {
	return a.Code == http.StatusInternalServerError || a.Code == http.StatusServiceUnavailable ||
		a.Code == 0 && (a.Outcome == rundir.OutcomeUnknown || a.Class == rundir.ClassTimeout || a.Class == rundir.ClassReset)
}
