package rundir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The seeds' vocabulary, defined here once: the simulator, the sink, the
// scenario loader, the attacker and the reports take their words from here so
// that none of them accepts a word another refuses.

// Channels of a scenario item (messaging-api.md, "Scenario item").
const (
	ChannelSMS      = "sms"
	ChannelViber    = "viber"
	ChannelVKOK     = "vkok"
	ChannelPush     = "push"
	ChannelWhatsApp = "whatsapp"
	ChannelTGOTP    = "tgotp"
)

var (
	channels = [...]string{ChannelSMS, ChannelViber, ChannelVKOK, ChannelPush, ChannelWhatsApp, ChannelTGOTP}
	// A status record names fewer channels than a request may: vkok is not in
	// its enum (such records come without a channel).
	statusChannels   = [...]string{ChannelSMS, ChannelWhatsApp, ChannelViber, ChannelTGOTP, ChannelPush}
	incomingChannels = [...]string{ChannelSMS, ChannelWhatsApp, ChannelViber}
)

// Channels returns every channel of a scenario item, in the seed's order (a
// copy: the caller may keep or change it).
func Channels() []string { return slices.Clone(channels[:]) }

// StatusChannels returns the channel enum of a status record, in the seed's order.
func StatusChannels() []string { return slices.Clone(statusChannels[:]) }

// IncomingChannels returns the channel enum of an incoming message, in the seed's order.
func IncomingChannels() []string { return slices.Clone(incomingChannels[:]) }

// IsChannel reports whether s is a channel of a scenario item.
func IsChannel(s string) bool { return slices.Contains(channels[:], s) }

// IsStatusChannel reports whether s is in the status record's channel enum.
func IsStatusChannel(s string) bool { return slices.Contains(statusChannels[:], s) }

// IsIncomingChannel reports whether s is in the incoming message's channel enum.
func IsIncomingChannel(s string) bool { return slices.Contains(incomingChannels[:], s) }

// StateAccepted is the send response's state for an accepted request (its
// other state is StateFailed).
const StateAccepted = "ACCEPTED"

// statusStates are the status record's states, in the seed's order; every one
// is final for the channel it is on.
var statusStates = [...]string{StateDelivered, StateNotDelivered, StateSeen, StateExpired, StateFailed}

// States returns the status record's states in the seed's order; all are final.
func States() []string { return slices.Clone(statusStates[:]) }

// DrawnStates returns the states a channel's outcome can be drawn as by the
// simulator (a scenario's sim.profiles.<channel>.outcomes): SEEN is drawn as
// a share of DELIVERED; EXPIRED is never drawn, it comes from a failover's ttl.
func DrawnStates() []string {
	return []string{StateDelivered, StateNotDelivered, StateSeen, StateFailed}
}

// ConditionStatuses returns the states a failover may await (condition_status).
func ConditionStatuses() []string { return []string{StateDelivered, StateSeen} }

// Notification statuses. The notification seed names none ("not shown"):
// these are the simulator's, which the reports count with the messaging ones.
const (
	NotifyAccepted    = "ACCEPTED"
	NotifyDelivered   = "DELIVERED"
	NotifyUndelivered = "UNDELIVERED"
	NotifyFailed      = "FAILED"
)

// NotifyStates returns the terminal notification statuses (those a webhook carries).
func NotifyStates() []string { return []string{NotifyDelivered, NotifyUndelivered, NotifyFailed} }

// Delivered reports whether a final state is a delivery: DELIVERED, or SEEN
// (SEEN implies DELIVERED).
func Delivered(state string) bool { return state == StateDelivered || state == StateSeen }

// AttachmentTypes returns the attachment type enum of the messaging seed.
func AttachmentTypes() []string { return []string{"IMAGE", "AUDIO", "VIDEO", "FILE"} }

// RecipientMSISDN is the recipient type of the messaging seed (its only one).
const RecipientMSISDN = "MSISDN"

// Field limits of messaging-api.md ("Limits").
const (
	MaxSenderSMS       = 11     // characters of sender for channel sms
	MaxSender          = 21     // characters of sender for every other channel
	MaxRecipient       = 200    // characters of recipient.value
	MaxTextBytes       = 39015  // bytes of text
	MaxTextParts       = 255    // parts of text (MaxTextBytes)
	MaxClientRequestID = 100    // characters of clientRequestId
	MaxFailoverTTL     = 259200 // seconds of failover.ttl
	ShortenThreshold   = 20     // characters of a link urlOptions.shortenUrl replaces
	MaxIncomingText    = 2000   // characters of an incoming message's text
	MaxIncomingSender  = 21     // characters of an incoming message's sender
)

// MaxSenderFor returns the longest sender a scenario item on channel may have.
func MaxSenderFor(channel string) int {
	if channel == ChannelSMS {
		return MaxSenderSMS
	}
	return MaxSender
}

// IsMSISDN reports whether s is an E.164 number as the simulator takes it: a
// "+", a first digit that is not 0 and 7 to 15 digits in all.
func IsMSISDN(s string) bool {
	if len(s) < 8 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Classes of an attempt (Attempt.Class): what its code or transport error was.
const (
	ClassOK      = "ok"
	classHTTP4xx = "http_4xx"
	// classHTTPOther is an answer neither 2xx, 4xx nor 5xx: a redirect (3xx,
	// never followed), an informational 1xx, or a code out of the range.
	classHTTPOther = "http_other"
	ClassHTTP429   = "http_429"
	ClassHTTP5xx   = "http_5xx"
	ClassTimeout   = "timeout"
	ClassReset     = "reset"
	classConn      = "conn" // could not connect: nothing reached the service
	ClassOther     = "other"
	// ClassBadAnswer is the class of a 2xx send answer whose body is not the
	// API's answer (HTML from a proxy, invalid JSON, random bytes, no
	// txId/state or notificationId): its outcome is unknown (the service may
	// have acted) and it is not an acceptance. Classify never gives it: the
	// caller that reads the body does.
	ClassBadAnswer = "bad_answer"
)

// Classify gives an attempt's outcome and class, one rule for every tool that
// makes requests. A code other than 0 means the service answered and decides
// alone (err, if any, is about reading the body): 2xx ok; 429 http_429; other
// 4xx http_4xx; 5xx http_5xx; anything else (3xx, 1xx, out of range) http_other. Without a code, err names the
// transport failure: timeout, reset, conn or other; the outcome is unknown
// (the service may have acted), except for conn, which is a failure (nothing
// reached it). With neither, the outcome is unknown and the class other.
func Classify(code int, err error) (outcome, class string) {
	if code != 0 {
		switch {
		case code >= 200 && code < 300:
			return OutcomeOK, ClassOK
		case code == http.StatusTooManyRequests:
			return OutcomeFail, ClassHTTP429
		case code >= 500 && code < 600:
			return OutcomeFail, ClassHTTP5xx
		case code >= 400 && code < 500:
			return OutcomeFail, classHTTP4xx
		default:
			return OutcomeFail, classHTTPOther
		}
	}
	if err == nil {
		return OutcomeUnknown, ClassOther
	}
	class = errClass(err)
	if class == classConn {
		return OutcomeFail, class
	}
	return OutcomeUnknown, class
}

// errClass names a transport error: timeout, reset, conn (could not connect) or other.
func errClass(err error) string {
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return ClassTimeout
	case errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial"):
		return classConn
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE):
		return ClassReset
	default:
		return ClassOther
	}
}

// ParseRetryAfter reads a Retry-After value (RFC 9110): delay seconds or an
// HTTP date, the latter against now (the time the answer came; a date passed
// is no wait). Fractional seconds are accepted; negative ones, NaN and more
// than 1e9 seconds are not. ok is false when the value is absent (empty or
// blank) or unreadable.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n < 0 || n > 1e9 || n != n {
			return 0, false
		}
		return time.Duration(n * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// ParseRate reads a rate written COUNT/WINDOW, the one rate grammar of
// scenarios and the simulator's configuration. Spaces around either part are
// ignored.
//   - COUNT is a non-negative, finite number ("100", "2.5"); a caller that
//     needs a whole number checks it.
//   - WINDOW is a Go duration ("1m", "10s", "500ms", "1h30m"), a bare Go unit
//     meaning one of it ("s", "m", "h", "ms", "us", "ns"), or a unit name:
//     "sec", "second", "min", "minute", "hour". It must be positive.
//
// So "100/1m", "100/m", "100/min", "6000/1h", "20/s" and "5/10s" all parse. The
// error says what is wrong without naming the value; callers say where.
func ParseRate(s string) (count float64, window time.Duration, err error) {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return 0, 0, errors.New("want COUNT/WINDOW such as 150/1m or 20/s")
	}
	num = strings.TrimSpace(num)
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, 0, fmt.Errorf("count %q is not a non-negative number", num)
	}
	unit = strings.TrimSpace(unit)
	var per time.Duration
	switch unit {
	case "sec", "second":
		per = time.Second
	case "min", "minute":
		per = time.Minute
	case "hour":
		per = time.Hour
	default:
		w := unit
		if w != "" && !strings.ContainsAny(w[:1], "0123456789.+-") {
			w = "1" + w // a bare unit means one of it
		}
		per, err = time.ParseDuration(w)
		if err != nil || per <= 0 {
			return 0, 0, fmt.Errorf("window %q is not a positive duration such as 1m, 10s or s", unit)
		}
	}
	return n, per, nil
}
