package render

import (
	"fmt"
	"strconv"
	"strings"
)

// The contract panels of the reports: the rate limit (per client accepted,
// 429 and the limit, Retry-After honoured, the limiter named or "cannot
// tell" with why) and idempotency (probes → the same id, one delivery).

// limiterName names the limiter the service behaves like, with the limit it
// was seen to enforce: "fixed window, about 5 per 10 s"; "cannot tell" says
// why in its evidence.
func (s view) limiterName() string {
	a := s.RateLimit.Algorithm
	name := a.Verdict
	if name == "" {
		name = "cannot tell"
	}
	if a.Limit > 0 && a.Window > 0 && name != "cannot tell" && name != "not exercised" {
		name += fmt.Sprintf(", about %s per %s", twoDecimals(a.Limit), secondsLimit(a.Window))
	}
	if name == "cannot tell" && len(a.Evidence) == 0 {
		name += " (no decision of the service's was read)"
	}
	return name
}

// limitText is the scenario's limit per client: "5 per 10 s", or "none".
func (s view) limitText() string {
	rl := s.RateLimit
	if rl.Limit <= 0 {
		return "none"
	}
	return fmt.Sprintf("%d per %s", rl.Limit, secondsLimit(rl.Window))
}

// clientCells are the rate-limit table's rows: client, sent, accepted, 429,
// the limit, the most accepted in one window, the excess, and the first 429
// as a time people read (with how long after the start).
func (s view) clientCells() [][]string {
	var out [][]string
	for _, c := range s.RateLimit.Clients {
		out = append(out, []string{c.ClientID, strconv.FormatInt(c.Sent, 10), strconv.FormatInt(c.Accepted, 10),
			strconv.FormatInt(c.Rejected429, 10), s.limitText(), strconv.Itoa(c.MaxAccepted), strconv.FormatInt(c.ExcessAccepted, 10), first429(c)})
	}
	return out
}

// first429 is a client's first 429 for people: "02:00:12 UTC (+12.00 s)", or "–".
func first429(c clientLimit) string {
	if c.First429At == "" {
		return "–"
	}
	t := showTime(c.First429At)
	if c.First429AfterS > 0 {
		t += " (+" + spacedDur(c.First429AfterS) + ")"
	}
	return t
}

// retryAfterText says whether the 429s' Retry-After was honoured: present,
// readable, and neither too short (the next request was refused again) nor
// too long (one was accepted before it expired).
func (s view) retryAfterText() string {
	ra, n := s.RateLimit.RetryAfter, s.RateLimit.Rejected429
	return fmt.Sprintf("Retry-After honoured on %d of %s: %d without the header, %d unreadable, %d too short (refused again after waiting it), %d too long (accepted before it expired).",
		ra.Correct, plural(n, "429 answer"), ra.Missing, ra.Invalid, ra.TooShort, ra.TooLong)
}

// idempotencyText is the idempotency contract in words: the probes sent again
// with a message's key answered the same id, and each message was delivered
// once; "" when the run sent no probe and made no retry.
func (s view) idempotencyText() string {
	i := s.Idempotency
	if i.Probes == 0 && i.Retries == 0 {
		return ""
	}
	same := i.Probes - i.Mismatches
	text := fmt.Sprintf("%s sent again with a message's key: %d answered the same id, %d another.", plural(i.Probes, "probe"), max(same, 0), i.Mismatches)
	if i.Retries > 0 {
		text += fmt.Sprintf(" Retries after an unknown outcome: %d.", i.Retries)
	}
	if s.Delivery.Measured {
		text += fmt.Sprintf(" Messages delivered twice (ended under a second id): %d.", i.DuplicateDeliveries)
	} else {
		text += " Deliveries were not measured, so one delivery per message is not checked."
	}
	return text
}

// lostText says which messages were lost and late — the first 20 by sequence
// number — and the jq line that gives their ids from attempts.jsonl; "" when
// none was.
func (s view) lostText() string {
	d := s.Delivery
	if !d.Measured || len(d.LostSeqs) == 0 {
		return ""
	}
	text := fmt.Sprintf("Lost (no final status by the deadline): %d, the first by sequence: %s.", d.Lost, seqList(d.LostSeqs))
	if len(d.LateSeqs) > 0 {
		text += fmt.Sprintf(" Late (a final status after it): %d, the first: %s.", d.Late, seqList(d.LateSeqs))
	}
	return text
}

// seqList is "3, 17, 42".
func seqList(seqs []int64) string {
	out := make([]string, len(seqs))
	for i, q := range seqs {
		out[i] = strconv.FormatInt(q, 10)
	}
	return strings.Join(out, ", ")
}
