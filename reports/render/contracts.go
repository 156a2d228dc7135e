package reports

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/msgload/msgload/rundir"
)

// The contract panels of the reports: the rate limit (per client accepted,
// 429 and the limit, Retry-After honoured, the limiter named or "cannot
// tell" with why) and idempotency (probes → the same id, one delivery).

// limiterName names the limiter the service behaves like, with the limit it
// was seen to enforce: "fixed window, about 5 per 10 s"; "cannot tell" says
// why in its evidence.
func (s *Summary) limiterName() string {
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
func (s *Summary) limitText() string {
	rl := s.RateLimit
	if rl.Limit <= 0 {
		return "none"
	}
	return fmt.Sprintf("%d per %s", rl.Limit, secondsLimit(rl.Window))
}

// clientCells are the rate-limit table's rows: client, sent, accepted, 429,
// the limit, the most accepted in one window, the excess, and the first 429
// as a time people read (with how long after the start).
func (s *Summary) clientCells() [][]string {
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
func (s *Summary) retryAfterText() string {
	ra, n := s.RateLimit.RetryAfter, s.RateLimit.Rejected429
	return fmt.Sprintf("Retry-After honoured on %d of %s: %d without the header, %d unreadable, %d too short (refused again after waiting it), %d too long (accepted before it expired).",
		ra.Correct, plural(n, "429 answer"), ra.Missing, ra.Invalid, ra.TooShort, ra.TooLong)
}

// idempotencyText is the idempotency contract in words: the probes sent again
// with a message's key answered the same id, and each message was delivered
// once; "" when the run sent no probe and made no retry.
func (s *Summary) idempotencyText() string {
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

// maxListed bounds the lists of lost and late messages in summary.json.
const maxListed = 20

// noteLost lists a lost message (and a late one) among the first maxListed.
func noteLost(d *Delivery, seq int64, late bool) {
	keepSmallest(&d.LostSeqs, seq)
	if late {
		keepSmallest(&d.LateSeqs, seq)
	}
}

// keepSmallest keeps the maxListed smallest sequence numbers, in order.
func keepSmallest(list *[]int64, seq int64) {
	i, found := slices.BinarySearch(*list, seq)
	if found || i >= maxListed {
		return
	}
	*list = slices.Insert(*list, i, seq)
	if len(*list) > maxListed {
		*list = (*list)[:maxListed]
	}
}

// lostText says which messages were lost and late — the first 20 by sequence
// number — and the jq line that gives their ids from attempts.jsonl; "" when
// none was.
func (s *Summary) lostText() string {
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

// lostJQ is the jq command, run in the run directory, that lists the ids the
// service gave every lost message (late ones flagged): rundir.LostFile, the
// analysis's own list, joined by sequence with the sends of attempts.jsonl —
// no second reading of the rule in jq (no path in it: the reports are the
// same wherever the run directory is read from).
func (s *Summary) lostJQ() string {
	if !s.Delivery.Measured || len(s.Delivery.LostSeqs) == 0 {
		return ""
	}
	return fmt.Sprintf(`jq -nc --slurpfile lost %s '(reduce $lost[] as $l ({}; .[$l.seq | tostring] = $l.late)) as $late | inputs | select(.op == "send" and $late[.seq | tostring] != null) | {seq, late: $late[.seq | tostring], attempt, code, tx_id, notification_id}' %s`,
		rundir.LostFile, rundir.AttemptsFile)
}

// seqList is "3, 17, 42".
func seqList(seqs []int64) string {
	out := make([]string, len(seqs))
	for i, q := range seqs {
		out[i] = strconv.FormatInt(q, 10)
	}
	return strings.Join(out, ", ")
}
