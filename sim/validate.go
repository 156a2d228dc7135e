package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/msgload/msgload/rundir"
)

// SendRequest is the messaging send request.
type SendRequest struct {
	Scenario        []scenarioItem  `json:"scenario"`
	Callback        *string         `json:"callback,omitempty"`
	ClientRequestID *string         `json:"clientRequestId,omitempty"`
	URLOptions      *urlOptions     `json:"urlOptions,omitempty"`
	TrackData       json.RawMessage `json:"trackData,omitempty"`
	Schedule        *Schedule       `json:"schedule,omitempty"`
}

// scenarioItem is one channel of a send.
type scenarioItem struct {
	Channel          *string      `json:"channel"`
	Recipient        *Recipient   `json:"recipient"`
	Sender           *string      `json:"sender"`
	Text             *string      `json:"text,omitempty"`
	Failover         *failover    `json:"failover,omitempty"`
	Attachments      []attachment `json:"attachments,omitempty"`
	Buttons          []button     `json:"buttons,omitempty"`
	MobilePushAction *string      `json:"mobilePushAction,omitempty"`
	MobilePushTitle  *string      `json:"mobilePushTitle,omitempty"`
}

// Recipient is a subscriber address.
type Recipient struct {
	Type  *string `json:"type"`
	Value *string `json:"value"`
}

// attachment is media content.
type attachment struct {
	Type *string `json:"type"`
	URL  *string `json:"url"`
}

// button is a message button.
type button struct {
	Caption *string `json:"caption"`
	Action  *string `json:"action"`
}

// failover is a cascading rule.
type failover struct {
	TTL             *int64  `json:"ttl,omitempty"`
	ConditionStatus *string `json:"condition_status,omitempty"`
}

// urlOptions enables link shortening.
type urlOptions struct {
	ShortenURL *bool `json:"shortenUrl"`
}

// Schedule is deferred or windowed sending.
type Schedule struct {
	SendAfter            *string `json:"sendAfter,omitempty"`
	StartTime            *string `json:"startTime,omitempty"`
	StopTime             *string `json:"stopTime,omitempty"`
	UseRecipientTimeZone *bool   `json:"useRecipientTimeZone,omitempty"`
}

// fieldError is a validation error that names the field by its path.
type fieldError struct {
	Path string
	Msg  string
}

func (e *fieldError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// DecodeSend reads a send request. Malformed JSON and wrong types are
// FieldErrors naming where they are.
func DecodeSend(r io.Reader) (*SendRequest, error) {
	body, err := io.ReadAll(r) // r is bounded (http.MaxBytesReader)
	if err != nil {
		return nil, jsonError(err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var req SendRequest
	if err := dec.Decode(&req); err != nil {
		return nil, jsonError(err)
	}
	if dec.More() {
		return nil, &fieldError{Msg: "body: more than one JSON value"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &fieldError{Msg: "body: trailing data after the JSON object"}
	}
	// the decoded strings had invalid UTF-8 replaced: check the raw body
	if err := checkUTF8(body); err != nil {
		return nil, err
	}
	return &req, nil
}

func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		path := te.Field
		if path == "" {
			path = "body"
		}
		return &fieldError{Path: path, Msg: fmt.Sprintf("want %s, got JSON %s", te.Type, te.Value)}
	case errors.As(err, &se):
		return &fieldError{Path: "body", Msg: fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, err)}
	case errors.Is(err, io.EOF):
		return &fieldError{Path: "body", Msg: "empty"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &fieldError{Path: "body", Msg: "truncated JSON"}
	}
	var mbe interface{ Error() string }
	if errors.As(err, &mbe) && strings.Contains(err.Error(), "request body too large") {
		return &fieldError{Path: "body", Msg: "too large"}
	}
	return &fieldError{Path: "body", Msg: err.Error()}
}

// ValidateSend checks req against every rule of the messaging seed, for an
// account with the given channels enabled (nil: all). It returns the first
// problem, naming the field by its path (scenario items counted from 0).
func ValidateSend(req *SendRequest, enabled func(channel string) bool) error {
	if len(req.Scenario) == 0 {
		return &fieldError{"scenario", "at least one item is required"}
	}
	seen := map[string]int{}
	for i, it := range req.Scenario {
		p := fmt.Sprintf("scenario[%d]", i)
		if it.Channel == nil {
			return &fieldError{p + ".channel", "required"}
		}
		ch := *it.Channel
		if !rundir.IsChannel(ch) {
			return &fieldError{p + ".channel", fmt.Sprintf("%q is not one of %s", ch, strings.Join(rundir.Channels(), ", "))}
		}
		if j, dup := seen[ch]; dup {
			return &fieldError{p + ".channel", fmt.Sprintf("scenario channels are not unique: %s is also scenario[%d]", ch, j)}
		}
		seen[ch] = i
		if enabled != nil && !enabled(ch) {
			return &fieldError{p + ".channel", fmt.Sprintf("channel %s is not enabled for this account", ch)}
		}
		if err := validateItem(p, ch, &it); err != nil {
			return err
		}
	}
	return validateSendFields(req)
}

// validateItem checks scenario item p on channel ch, in the order of its
// fields: recipient, sender, text, failover, then attachments, buttons and
// the push-only fields.
func validateItem(p, ch string, it *scenarioItem) error {
	if err := validateRecipient(p, it.Recipient); err != nil {
		return err
	}
	if it.Sender == nil || *it.Sender == "" {
		return &fieldError{p + ".sender", "required"}
	}
	max := rundir.MaxSenderFor(ch)
	if n := utf8.RuneCountInString(*it.Sender); n > max {
		return &fieldError{p + ".sender", fmt.Sprintf("at most %d characters for channel %s", max, ch)}
	}
	if it.Text != nil {
		// UTF-8 is checked on the raw body by DecodeSend (checkUTF8)
		if len(*it.Text) > rundir.MaxTextBytes {
			return &fieldError{p + ".text", fmt.Sprintf("at most %d bytes (255 parts), got %d", rundir.MaxTextBytes, len(*it.Text))}
		}
	}
	if f := it.Failover; f != nil {
		if f.TTL != nil && (*f.TTL < 0 || *f.TTL > rundir.MaxFailoverTTL) {
			return &fieldError{p + ".failover.ttl", fmt.Sprintf("must be between 0 and %d seconds", rundir.MaxFailoverTTL)}
		}
		if f.ConditionStatus != nil && !slices.Contains(rundir.ConditionStatuses(), *f.ConditionStatus) {
			return &fieldError{p + ".failover.condition_status", fmt.Sprintf("%q is not DELIVERED or SEEN", *f.ConditionStatus)}
		}
	}
	return validateExtras(p, ch, it)
}

// validateRecipient checks item p's recipient: an MSISDN of E.164 form.
func validateRecipient(p string, r *Recipient) error {
	if r == nil {
		return &fieldError{p + ".recipient", "required"}
	}
	if r.Type == nil {
		return &fieldError{p + ".recipient.type", "required"}
	}
	if *r.Type != rundir.RecipientMSISDN {
		return &fieldError{p + ".recipient.type", fmt.Sprintf("%q is not MSISDN", *r.Type)}
	}
	if r.Value == nil || *r.Value == "" {
		return &fieldError{p + ".recipient.value", "required"}
	}
	v := *r.Value
	if utf8.RuneCountInString(v) > rundir.MaxRecipient {
		return &fieldError{p + ".recipient.value", fmt.Sprintf("at most %d characters", rundir.MaxRecipient)}
	}
	if !rundir.IsMSISDN(v) {
		return &fieldError{p + ".recipient.value", "not an E.164 number (+ and 7 to 15 digits)"}
	}
	return nil
}

// validateExtras checks item p's attachments and buttons, and that only a
// push item has the push fields.
func validateExtras(p, ch string, it *scenarioItem) error {
	for j, a := range it.Attachments {
		ap := fmt.Sprintf("%s.attachments[%d]", p, j)
		if a.Type == nil {
			return &fieldError{ap + ".type", "required"}
		}
		if types := rundir.AttachmentTypes(); !slices.Contains(types, *a.Type) {
			return &fieldError{ap + ".type", fmt.Sprintf("%q is not one of %s", *a.Type, strings.Join(types, ", "))}
		}
		if a.URL == nil || *a.URL == "" {
			return &fieldError{ap + ".url", "required"}
		}
	}
	for j, b := range it.Buttons {
		bp := fmt.Sprintf("%s.buttons[%d]", p, j)
		if b.Caption == nil || *b.Caption == "" {
			return &fieldError{bp + ".caption", "required"}
		}
		if b.Action == nil || *b.Action == "" {
			return &fieldError{bp + ".action", "required"}
		}
	}
	if ch != rundir.ChannelPush {
		if it.MobilePushAction != nil {
			return &fieldError{p + ".mobilePushAction", "only for channel push"}
		}
		if it.MobilePushTitle != nil {
			return &fieldError{p + ".mobilePushTitle", "only for channel push"}
		}
	}
	return nil
}

// validateSendFields checks the request's fields beside the scenario.
func validateSendFields(req *SendRequest) error {
	if req.ClientRequestID != nil && utf8.RuneCountInString(*req.ClientRequestID) > rundir.MaxClientRequestID {
		return &fieldError{"clientRequestId", fmt.Sprintf("at most %d characters", rundir.MaxClientRequestID)}
	}
	if req.Callback != nil && *req.Callback != "" && !validURL(*req.Callback) {
		return &fieldError{"callback", "not an absolute http or https URL"}
	}
	if req.URLOptions != nil && req.URLOptions.ShortenURL == nil {
		return &fieldError{"urlOptions.shortenUrl", "required"}
	}
	if td := bytes.TrimSpace(req.TrackData); len(td) > 0 && td[0] != '{' && !bytes.Equal(td, []byte("null")) {
		return &fieldError{"trackData", "must be an object"}
	}
	if req.Schedule != nil {
		if _, err := parseSchedule(req.Schedule); err != nil {
			return err
		}
	}
	return nil
}

func validURL(s string) bool {
	return (strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")) && len(s) > len("https://")
}

// schedule is a parsed, validated schedule.
type schedule struct {
	sendAfter   time.Time // zero when absent; wall clock in UTC (or recipient's zone when local)
	hasWindow   bool
	start, stop time.Duration // since midnight
	local       bool          // useRecipientTimeZone
	afterLocal  bool          // sendAfter wall clock to read in the recipient's zone
}

// parseSchedule accepts only the six combinations the seed allows.
func parseSchedule(s *Schedule) (schedule, error) {
	var out schedule
	has := func(p *string) bool { return p != nil }
	out.local = s.UseRecipientTimeZone != nil && *s.UseRecipientTimeZone
	combo := fmt.Sprintf("%t%t%t", has(s.SendAfter), has(s.StartTime), has(s.StopTime))
	switch combo {
	case "truefalsefalse", "falsetruetrue", "truetruetrue":
	default:
		switch {
		case has(s.StartTime) && !has(s.StopTime):
			return out, &fieldError{"schedule.stopTime", "required when startTime is present"}
		case has(s.StopTime) && !has(s.StartTime):
			return out, &fieldError{"schedule.startTime", "required when stopTime is present"}
		default:
			return out, &fieldError{"schedule.sendAfter", "required when startTime is absent"}
		}
	}
	if has(s.SendAfter) {
		t, err := time.Parse(time.RFC3339, *s.SendAfter)
		if err != nil {
			return out, &fieldError{"schedule.sendAfter", "want YYYY-MM-DDTHH:mm:ssZ (RFC 3339)"}
		}
		out.sendAfter = t
		out.afterLocal = out.local
	}
	if has(s.StartTime) {
		a, err := parseClock(*s.StartTime)
		if err != nil {
			return out, &fieldError{"schedule.startTime", err.Error()}
		}
		b, err := parseClock(*s.StopTime)
		if err != nil {
			return out, &fieldError{"schedule.stopTime", err.Error()}
		}
		if a == b {
			return out, &fieldError{"schedule.stopTime", "equals startTime: the window is empty"}
		}
		out.hasWindow, out.start, out.stop = true, a, b
	}
	return out, nil
}

func parseClock(s string) (time.Duration, error) {
	t, err := time.Parse("15:04:05", s)
	if err != nil || len(s) != 8 {
		return 0, errors.New("want HH:MM:SS")
	}
	return time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second, nil
}
