package rundir

import (
	"slices"
	"strings"
)

// Status-record states of messaging-api.md.
const (
	StateDelivered    = "DELIVERED"
	StateNotDelivered = "NOT_DELIVERED"
	StateSeen         = "SEEN"
	StateExpired      = "EXPIRED"
	StateFailed       = "FAILED"
)

// finalState reports whether state is one of the status record's states (every
// one of them is final for the channel it is on).
func finalState(state string) bool { return slices.Contains(statusStates[:], state) }

// shortOfDelivery reports whether state is final without a delivery.
func shortOfDelivery(state string) bool {
	return state == StateNotDelivered || state == StateFailed || state == StateExpired
}

// Link is one item of a message's scenario as the end-of-message rule needs
// it: the channel, and the condition_status its failover awaits (DELIVERED or
// SEEN), or "" when the item has no failover.
type Link struct {
	Channel string
	Until   string
}

// String encodes l as it travels in run.json and in the trackData tag:
// "viber:SEEN", "viber:DELIVERED", or "sms" for an item without failover.
func (l Link) String() string {
	if l.Until == "" {
		return l.Channel
	}
	return l.Channel + ":" + l.Until
}

// Chain is a message's scenario in order: the failover cascade.
//
// The end of a message, one rule for the attacker (when to stop polling), the
// sink (a callback's Terminal and failover steps), the reports and the truth
// comparison, per messaging-api.md:
//   - an item with failover that is not the last ends the message when it
//     reaches its condition_status (SEEN also satisfies DELIVERED; DELIVERED
//     does not satisfy SEEN); any final state short of delivery on it
//     (NOT_DELIVERED, FAILED, EXPIRED) is a failover step to the next item, and
//     DELIVERED under a SEEN condition is neither: the service still waits;
//   - an item without failover, and the last item, end the message with any
//     final state;
//   - with no chain known (an untagged callback, a message of another tool),
//     or on a channel the chain does not name, any final state ends the
//     message.
type Chain []Link

// ParseChain decodes the strings String writes. An empty or malformed item
// (no channel, an unknown condition) makes the whole chain unknown (nil): a
// wrong chain would misjudge every message, no chain judges by state alone.
func ParseChain(items []string) Chain {
	if len(items) == 0 {
		return nil
	}
	c := make(Chain, 0, len(items))
	for _, it := range items {
		ch, until, _ := strings.Cut(it, ":")
		if ch == "" || until != "" && until != StateDelivered && until != StateSeen {
			return nil
		}
		c = append(c, Link{Channel: ch, Until: until})
	}
	return c
}

// Strings encodes the chain for run.json and the tag.
func (c Chain) Strings() []string {
	if len(c) == 0 {
		return nil
	}
	out := make([]string, len(c))
	for i, l := range c {
		out[i] = l.String()
	}
	return out
}

// Channels returns the channel names in order.
func (c Chain) Channels() []string {
	out := make([]string, len(c))
	for i, l := range c {
		out[i] = l.Channel
	}
	return out
}

// Index returns the position of channel in the chain, -1 when it is not in it.
func (c Chain) Index(channel string) int {
	for i, l := range c {
		if l.Channel == channel {
			return i
		}
	}
	return -1
}

// waits reports whether item i awaits a condition before the next item.
func (c Chain) waits(i int) bool {
	return i >= 0 && i < len(c)-1 && c[i].Until != ""
}

// FailsOver reports whether a status record of state on item i sends the
// message on to item i+1.
func (c Chain) FailsOver(state string, i int) bool {
	return c.waits(i) && shortOfDelivery(state)
}

// Ends reports whether a status record of state on item i ends the message
// (i < 0: a channel the chain does not name; judged by state alone, as
// without a chain).
func (c Chain) Ends(state string, i int) bool {
	if !finalState(state) {
		return false
	}
	if !c.waits(i) {
		return true
	}
	return state == StateSeen || state == StateDelivered && c[i].Until == StateDelivered
}

// Item returns the item a status record belongs to: the chain index of its
// channel, or, for a record without a channel (FAILED and EXPIRED may omit
// it, and vkok is not in the record's enum), cur — the item the message is
// on, which the caller tracks: 0 at first, i+1 after FailsOver on item i.
func (c Chain) Item(channel string, cur int) int {
	if channel != "" {
		return c.Index(channel)
	}
	if cur < 0 || cur >= len(c) {
		return -1
	}
	return cur
}

// Place returns the item a status record belongs to, as Item does, and for a
// record without a channel uses what the record's state says of where it can
// be: DELIVERED, NOT_DELIVERED and SEEN always name a channel of the record's
// enum, so without one they are on the first item from cur whose channel is
// not in it (vkok); FAILED and EXPIRED may omit any channel and stay on cur,
// and so does a state that is no status record's (ACCEPTED: a poll's read
// of the send's answer, which names no channel wherever the message is).
// cur is the item the message was on when the record's status changed: the
// caller walks a message's records in the order of their own times
// (updatedAt), not of their arrival, 0 at first and i+1 after FailsOver on
// item i — so that a record held back and overtaken is placed where it
// belongs.
func (c Chain) Place(channel, state string, cur int) int {
	i := c.Item(channel, cur)
	if channel != "" || i < 0 || state == StateFailed || state == StateExpired || !finalState(state) {
		return i
	}
	for j := i; j < len(c); j++ {
		if !IsStatusChannel(c[j].Channel) {
			return j
		}
	}
	return i
}

// IsUUID reports whether s is a uuid in its canonical text form, 8-4-4-4-12
// hexadecimal digits of either case: the seeds' txId.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
