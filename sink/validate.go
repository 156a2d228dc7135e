package sink

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/msgload/msgload/rundir"
)

// errMalformed wraps every reason a payload breaks the specification's schema.
var errMalformed = errors.New("malformed payload")

// states lists the status-record states (rundir's); the index is the bit used
// in the per-message state set.
var states = rundir.States()

// channels are every channel name the messaging API knows (scenario items,
// rundir's); the index is the compact id kept per message (0 means none).
var channels = append([]string{""}, rundir.Channels()...)

// statusChannels is the channel enum of a status record; incomingChannels that of an
// incoming message.
var (
	statusChannels   = setOf(rundir.StatusChannels())
	incomingChannels = setOf(rundir.IncomingChannels())
	attachmentTypes  = setOf(rundir.AttachmentTypes())
	replyTypes       = map[string]bool{"OUTGOING": true, "INCOMING": true}
)

func setOf(words []string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func stateIndex(s string) int {
	for i, v := range states {
		if v == s {
			return i
		}
	}
	return -1
}

func channelID(c string) uint8 {
	for i, v := range channels {
		if i > 0 && v == c {
			return uint8(i)
		}
	}
	return 0
}

// StatusRecord is a messaging status record (callback body), as validated.
type StatusRecord struct {
	TxID      string
	UpdatedAt time.Time
	State     string
	Channel   string         // "" when absent
	TrackData map[string]any // nil when absent
	ErrCode   int64
	ErrMsg    string
	HasError  bool
}

// Incoming is a messaging incoming message, as validated.
type Incoming struct {
	TxID         string
	Channel      string
	Sender       string
	OutgoingTxID string
	ReplyOnTxID  string
	ReplyOnType  string // OUTGOING or INCOMING when replyOn is present
}

// webhook is a notification callback event, as validated. The seed does not show
// its fields; the sink takes notificationId, externalId and status (or state).
type webhook struct {
	NotificationID string
	ExternalID     string
	Status         string
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
}

// object decodes body as one JSON object into its raw members, refusing anything else
// (arrays, scalars, trailing data).
func object(body []byte) (obj, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, malformed("empty body")
	}
	if body[0] != '{' {
		return nil, malformed("body is not a JSON object")
	}
	o, err := splitObject(body)
	if err != nil {
		var m map[string]json.RawMessage
		err := json.Unmarshal(body, &m) // for the reason only
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value") {
			return nil, malformed("trailing data after the JSON object")
		}
		return nil, malformed("body is not valid JSON: %v", err)
	}
	return o, nil
}

// present reports whether the field exists and is not null.
func present(m obj, k string) bool {
	v, ok := m.get(k)
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

func str(m obj, k string, required bool) (string, bool, error) {
	if !present(m, k) {
		if required {
			return "", false, malformed("%s is required", k)
		}
		return "", false, nil
	}
	v, _ := m.get(k)
	raw := bytes.TrimSpace(v)
	// Fast path: a plain string (no escapes, valid UTF-8) is its own value; the
	// whole body was already validated by the decoder that split it into fields.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : n-1]), true, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, malformed("%s must be a string", k)
	}
	return s, true, nil
}

func uuidField(m obj, k string, required bool) (string, error) {
	s, ok, err := str(m, k, required)
	if err != nil || !ok {
		return "", err
	}
	if !rundir.IsUUID(s) {
		return "", malformed("%s must be a uuid", k)
	}
	return s, nil
}

func datetime(m obj, k string, required bool) (time.Time, error) {
	s, ok, err := str(m, k, required)
	if err != nil || !ok {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, malformed("%s must be an RFC 3339 date-time", k)
	}
	return t, nil
}

func enum(m obj, k string, required bool, allowed map[string]bool) (string, error) {
	s, ok, err := str(m, k, required)
	if err != nil || !ok {
		return "", err
	}
	if !allowed[s] {
		return "", malformed("%s %q is not one of the allowed values", k, truncate(s, 40))
	}
	return s, nil
}

func maxChars(m obj, k string, required bool, n int) (string, error) {
	s, ok, err := str(m, k, required)
	if err != nil || !ok {
		return "", err
	}
	if c := utf8.RuneCountInString(s); c > n {
		return "", malformed("%s has %d characters, at most %d allowed", k, c, n)
	}
	return s, nil
}

func sub(m obj, k string, required bool) (obj, error) {
	if !present(m, k) {
		if required {
			return nil, malformed("%s is required", k)
		}
		return nil, nil
	}
	v, _ := m.get(k)
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] != '{' {
		return nil, malformed("%s must be an object", k)
	}
	o, err := splitObject(v)
	if err != nil {
		return nil, malformed("%s must be an object", k)
	}
	return o, nil
}

// within names a nested field in a malformed-payload error: "type is required"
// inside recipient becomes "recipient.type is required".
func within(prefix string, err error) error {
	msg, ok := strings.CutPrefix(err.Error(), errMalformed.Error()+": ")
	if !ok {
		return err
	}
	return malformed("%s.%s", prefix, msg)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// ParseStatusRecord validates a messaging status record against the seed: txId
// (uuid), updatedAt (date-time) and state (one of five) required; channel in its
// enum, trackData an object and error {code integer, message string} when present.
// Unknown fields are allowed.
func ParseStatusRecord(body []byte) (StatusRecord, error) {
	var r StatusRecord
	m, err := object(body)
	if err != nil {
		return r, err
	}
	if r.TxID, err = uuidField(m, "txId", true); err != nil {
		return r, err
	}
	if r.UpdatedAt, err = datetime(m, "updatedAt", true); err != nil {
		return r, err
	}
	s, _, err := str(m, "state", true)
	if err != nil {
		return r, err
	}
	if stateIndex(s) < 0 {
		return r, malformed("state %q is not one of %s", truncate(s, 40), strings.Join(states, ", "))
	}
	r.State = s
	if r.Channel, err = enum(m, "channel", false, statusChannels); err != nil {
		return r, err
	}
	if present(m, "trackData") {
		td, err := sub(m, "trackData", false)
		if err != nil {
			return r, err
		}
		// As encoding/json would decode it into map[string]any, but plain strings
		// are taken without reflection.
		r.TrackData = make(map[string]any, len(td))
		for _, fl := range td {
			if s, ok, err := str(td, fl.key, false); err == nil && ok {
				r.TrackData[fl.key] = s
				continue
			}
			var v any
			if err := json.Unmarshal(fl.raw, &v); err != nil {
				return r, malformed("trackData.%s does not decode", truncate(fl.key, 40))
			}
			r.TrackData[fl.key] = v
		}
	}
	e, err := sub(m, "error", false)
	if err != nil {
		return r, err
	}
	if e != nil {
		r.HasError = true
		if !present(e, "code") {
			return r, malformed("error.code is required")
		}
		var n json.Number
		code, _ := e.get("code")
		if raw := bytes.TrimSpace(code); raw[0] == '"' {
			return r, malformed("error.code must be an integer")
		} else if err := json.Unmarshal(raw, &n); err != nil {
			return r, malformed("error.code must be an integer")
		}
		if r.ErrCode, err = n.Int64(); err != nil {
			return r, malformed("error.code must be an integer")
		}
		if r.ErrMsg, _, err = str(e, "message", true); err != nil {
			return r, within("error", err)
		}
	}
	return r, nil
}

// ParseIncoming validates a messaging incoming message against the seed: txId
// (uuid), channel (sms, whatsapp, viber), recipient {type MSISDN, value ≤ 200} and
// sender (≤ 21 characters) required; text ≤ 2000 characters; attachments, acceptedAt,
// outgoingTxId (uuid) and replyOn {txId uuid, type OUTGOING|INCOMING} checked when present.
func ParseIncoming(body []byte) (Incoming, error) {
	var in Incoming
	m, err := object(body)
	if err != nil {
		return in, err
	}
	if in.TxID, err = uuidField(m, "txId", true); err != nil {
		return in, err
	}
	if in.Channel, err = enum(m, "channel", true, incomingChannels); err != nil {
		return in, err
	}
	rec, err := sub(m, "recipient", true)
	if err != nil {
		return in, err
	}
	if _, err := enum(rec, "type", true, map[string]bool{rundir.RecipientMSISDN: true}); err != nil {
		return in, within("recipient", err)
	}
	if _, err := maxChars(rec, "value", true, rundir.MaxRecipient); err != nil {
		return in, within("recipient", err)
	}
	if in.Sender, err = maxChars(m, "sender", true, rundir.MaxIncomingSender); err != nil {
		return in, err
	}
	if _, err := maxChars(m, "text", false, rundir.MaxIncomingText); err != nil {
		return in, err
	}
	if present(m, "attachments") {
		raw, _ := m.get("attachments")
		var atts []json.RawMessage
		if err := json.Unmarshal(raw, &atts); err != nil {
			return in, malformed("attachments must be an array of objects")
		}
		for i, ar := range atts {
			a, err := splitObject(ar)
			if err != nil {
				return in, malformed("attachments[%d] must be an object", i)
			}
			if _, err := enum(a, "type", true, attachmentTypes); err != nil {
				return in, within(fmt.Sprintf("attachments[%d]", i), err)
			}
			if _, _, err := str(a, "url", true); err != nil {
				return in, within(fmt.Sprintf("attachments[%d]", i), err)
			}
		}
	}
	if _, err := datetime(m, "acceptedAt", false); err != nil {
		return in, err
	}
	if in.OutgoingTxID, err = uuidField(m, "outgoingTxId", false); err != nil {
		return in, err
	}
	ro, err := sub(m, "replyOn", false)
	if err != nil {
		return in, err
	}
	if ro != nil {
		if in.ReplyOnTxID, err = uuidField(ro, "txId", true); err != nil {
			return in, within("replyOn", err)
		}
		if in.ReplyOnType, err = enum(ro, "type", true, replyTypes); err != nil {
			return in, within("replyOn", err)
		}
	}
	return in, nil
}

// parseWebhook validates a notification callback event. The seed names the schema
// (NotificationCallbackEvent) but not its fields, so the sink asks only for what it
// needs: a JSON object with notificationId or externalId (non-empty strings), and
// status (or state) a string when present.
func parseWebhook(body []byte) (webhook, error) {
	var w webhook
	m, err := object(body)
	if err != nil {
		return w, err
	}
	if w.NotificationID, _, err = str(m, "notificationId", false); err != nil {
		return w, err
	}
	if w.ExternalID, _, err = str(m, "externalId", false); err != nil {
		return w, err
	}
	if w.NotificationID == "" && w.ExternalID == "" {
		return w, malformed("notificationId or externalId is required")
	}
	if w.Status, _, err = str(m, "status", false); err != nil {
		return w, err
	}
	if w.Status == "" {
		if w.Status, _, err = str(m, "state", false); err != nil {
			return w, err
		}
	}
	return w, nil
}
