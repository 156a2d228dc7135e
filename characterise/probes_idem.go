package characterise

import (
	"fmt"
	"time"

	"github.com/msgload/msgload/scenarios"
)

// The idempotency probe's sends per notification besides the first and its
// resend and copies after the answer: copies in flight with the first, one
// resend with another body, and one retry of a 500, 503 or reset.
const (
	idemInFlight = 2
	idemChanged  = 1
	idemRetries  = 1
	idemExtra    = idemInFlight + idemChanged + idemRetries
	// idemBackoff is the wait before the retry of a 500, 503 or reset.
	idemBackoff = 200 * time.Millisecond
)

// idemWhat is the idempotency probe as the plan prints it.
func idemWhat(n int64) string {
	return fmt.Sprintf("%d notifications at 1/s, each with %d copies in flight (same externalId, sent with it), resent once after its answer, %d times at once, once with another text; a 500, 503 or reset retried once",
		n, idemInFlight, idemCopies)
}

// idemScenario makes s the idempotency probe's: every notification probed
// (resends and copies after its answer, copies in flight, another body),
// and a 500, 503 or reset retried once with the same externalId (the seed
// says it is safe: the retry must make no second notification).
func idemScenario(s *scenarios.Scenario) {
	s.Idempotency = scenarios.Idempotency{Probes: scenarios.Percent{Raw: "100%", F: 1}, Concurrent: idemCopies, InFlight: idemInFlight, ChangedBody: idemChanged > 0}
	s.Retry.Max, s.Retry.On = idemRetries, []string{"500", "503", "reset"}
	s.Retry.Backoff, s.Retry.Jitter = dur(idemBackoff), scenarios.Percent{Raw: "0%"}
}
