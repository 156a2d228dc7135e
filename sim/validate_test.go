package sim

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// item returns one scenario item as JSON with fields overridden by kv pairs
// (raw JSON values).
func itemJSON(kv ...string) string {
	f := map[string]string{
		"channel":   `"sms"`,
		"recipient": `{"type":"MSISDN","value":"+79991234567"}`,
		"sender":    `"Acme"`,
		"text":      `"hello"`,
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(f, kv[i])
			continue
		}
		f[kv[i]] = kv[i+1]
	}
	var b strings.Builder
	b.WriteString("{")
	first := true
	for _, k := range []string{"channel", "recipient", "sender", "text", "failover", "attachments", "buttons", "mobilePushAction", "mobilePushTitle"} {
		v, ok := f[k]
		if !ok {
			continue
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		b.WriteString(`"` + k + `":` + v)
	}
	b.WriteString("}")
	return b.String()
}

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestValidateSend(t *testing.T) {
	allEnabled := func(string) bool { return true }
	demo := func(ch string) bool { return ch != rundir.ChannelWhatsApp && ch != rundir.ChannelTGOTP }
	tests := []struct {
		name    string
		body    string
		enabled func(string) bool
		wantErr string // "" means valid; else the path the message must start with
	}{
		// The minimal valid request passes.
		{"minimal", `{"scenario":[` + itemJSON() + `]}`, allEnabled, ""},
		// An empty scenario is refused.
		{"no scenario", `{"scenario":[]}`, allEnabled, "scenario: "},
		// sms sender: 11 characters pass, 12 fail with the seed's wording.
		{"sms sender 11", `{"scenario":[` + itemJSON("sender", q(strings.Repeat("a", 11))) + `]}`, allEnabled, ""},
		{"sms sender 12", `{"scenario":[` + itemJSON("sender", q(strings.Repeat("a", 12))) + `]}`, allEnabled, "scenario[0].sender: at most 11 characters for channel sms"},
		// Other channels: 21 pass, 22 fail; counted in characters, not bytes.
		{"viber sender 21", `{"scenario":[` + itemJSON("channel", `"viber"`, "sender", q(strings.Repeat("я", 21))) + `]}`, allEnabled, ""},
		{"viber sender 22", `{"scenario":[` + itemJSON("channel", `"viber"`, "sender", q(strings.Repeat("a", 22))) + `]}`, allEnabled, "scenario[0].sender: at most 21"},
		// Missing sender is refused.
		{"no sender", `{"scenario":[` + itemJSON("sender", "") + `]}`, allEnabled, "scenario[0].sender: required"},
		// Unknown channel enum.
		{"bad channel", `{"scenario":[` + itemJSON("channel", `"telegram"`) + `]}`, allEnabled, "scenario[0].channel"},
		// Channels must be unique in one request; the second is named.
		{"duplicate channel", `{"scenario":[` + itemJSON() + `,` + itemJSON() + `]}`, allEnabled, "scenario[1].channel: scenario channels are not unique"},
		// A channel not enabled for the account.
		{"whatsapp not enabled", `{"scenario":[` + itemJSON("channel", `"whatsapp"`) + `]}`, demo, "scenario[0].channel: channel whatsapp is not enabled"},
		// recipient.type must be MSISDN.
		{"recipient type", `{"scenario":[` + itemJSON("recipient", `{"type":"EMAIL","value":"+79991234567"}`) + `]}`, allEnabled, "scenario[0].recipient.type"},
		// recipient.value must be E.164: 15 digits pass, 16 fail, no plus fails.
		{"e164 15 digits", `{"scenario":[` + itemJSON("recipient", `{"type":"MSISDN","value":"+123456789012345"}`) + `]}`, allEnabled, ""},
		{"e164 16 digits", `{"scenario":[` + itemJSON("recipient", `{"type":"MSISDN","value":"+1234567890123456"}`) + `]}`, allEnabled, "scenario[0].recipient.value: not an E.164"},
		{"e164 no plus", `{"scenario":[` + itemJSON("recipient", `{"type":"MSISDN","value":"79991234567"}`) + `]}`, allEnabled, "scenario[0].recipient.value"},
		// recipient.value longer than 200 is named as a length problem first.
		{"recipient 201", `{"scenario":[` + itemJSON("recipient", `{"type":"MSISDN","value":`+q("+"+strings.Repeat("1", 200))+`}`) + `]}`, allEnabled, "scenario[0].recipient.value: at most 200"},
		// text: 39015 ASCII bytes pass, 39016 fail; 19507 two-byte characters pass, 19508 fail.
		{"text 39015", `{"scenario":[` + itemJSON("text", q(strings.Repeat("a", 39015))) + `]}`, allEnabled, ""},
		{"text 39016", `{"scenario":[` + itemJSON("text", q(strings.Repeat("a", 39016))) + `]}`, allEnabled, "scenario[0].text: at most 39015 bytes"},
		{"text 19507 cyrillic", `{"scenario":[` + itemJSON("text", q(strings.Repeat("я", 19507))) + `]}`, allEnabled, ""},
		{"text 19508 cyrillic", `{"scenario":[` + itemJSON("text", q(strings.Repeat("я", 19508))) + `]}`, allEnabled, "scenario[0].text"},
		// failover.ttl: 259200 passes, 259201 fails.
		{"ttl max", `{"scenario":[` + itemJSON("failover", `{"ttl":259200,"condition_status":"DELIVERED"}`) + `]}`, allEnabled, ""},
		{"ttl past max", `{"scenario":[` + itemJSON("failover", `{"ttl":259201,"condition_status":"DELIVERED"}`) + `]}`, allEnabled, "scenario[0].failover.ttl"},
		// condition_status enum.
		{"condition bad", `{"scenario":[` + itemJSON("failover", `{"ttl":10,"condition_status":"FAILED"}`) + `]}`, allEnabled, "scenario[0].failover.condition_status"},
		// clientRequestId: 100 pass, 101 fail.
		{"clientRequestId 100", `{"clientRequestId":` + q(strings.Repeat("x", 100)) + `,"scenario":[` + itemJSON() + `]}`, allEnabled, ""},
		{"clientRequestId 101", `{"clientRequestId":` + q(strings.Repeat("x", 101)) + `,"scenario":[` + itemJSON() + `]}`, allEnabled, "clientRequestId: at most 100"},
		// Attachment and button shapes.
		{"attachment ok", `{"scenario":[` + itemJSON("attachments", `[{"type":"IMAGE","url":"https://x/y.png"}]`) + `]}`, allEnabled, ""},
		{"attachment type", `{"scenario":[` + itemJSON("attachments", `[{"type":"GIF","url":"https://x/y.png"}]`) + `]}`, allEnabled, "scenario[0].attachments[0].type"},
		{"attachment url", `{"scenario":[` + itemJSON("attachments", `[{"type":"FILE"}]`) + `]}`, allEnabled, "scenario[0].attachments[0].url: required"},
		{"button caption", `{"scenario":[` + itemJSON("buttons", `[{"action":"https://x"}]`) + `]}`, allEnabled, "scenario[0].buttons[0].caption: required"},
		{"button action", `{"scenario":[` + itemJSON("buttons", `[{"caption":"Go"}]`) + `]}`, allEnabled, "scenario[0].buttons[0].action: required"},
		// mobilePush* only with push.
		{"push fields on push", `{"scenario":[` + itemJSON("channel", `"push"`, "mobilePushTitle", `"T"`, "mobilePushAction", `"app://x"`) + `]}`, allEnabled, ""},
		{"push title on sms", `{"scenario":[` + itemJSON("mobilePushTitle", `"T"`) + `]}`, allEnabled, "scenario[0].mobilePushTitle: only for channel push"},
		// The six allowed schedule combinations pass…
		{"sched sendAfter", `{"schedule":{"sendAfter":"2030-01-01T10:00:00Z"},"scenario":[` + itemJSON() + `]}`, allEnabled, ""},
		{"sched sendAfter tz", `{"schedule":{"sendAfter":"2030-01-01T10:00:00Z","useRecipientTimeZone":true},"scenario":[` + itemJSON() + `]}`, allEnabled, ""},
		{"sched window", `{"schedule":{"startTime":"09:00:00","stopTime":"18:00:00"},"scenario":[` + itemJSON() + `]}`, allEnabled, ""},
		{"sched window tz", `{"schedule":{"startTime":"09:00:00","stopTime":"18:00:00","useRecipientTimeZone":true},"scenario":[` + itemJSON() + `]}`, allEnabled, ""},
		{"sched all", `{"schedule":{"sendAfter":"2030-01-01T10:00:00Z","startTime":"09:00:00","stopTime":"18:00:00","useRecipientTimeZone":true},"scenario":[` + itemJSON() + `]}`, allEnabled, ""},
		{"sched after window", `{"schedule":{"sendAfter":"2030-01-01T10:00:00Z","startTime":"09:00:00","stopTime":"18:00:00"},"scenario":[` + itemJSON() + `]}`, allEnabled, ""},
		// …and the others fail, naming the missing field.
		{"sched tz only", `{"schedule":{"useRecipientTimeZone":true},"scenario":[` + itemJSON() + `]}`, allEnabled, "schedule.sendAfter: required"},
		{"sched start only", `{"schedule":{"startTime":"09:00:00"},"scenario":[` + itemJSON() + `]}`, allEnabled, "schedule.stopTime: required"},
		{"sched stop only", `{"schedule":{"stopTime":"09:00:00"},"scenario":[` + itemJSON() + `]}`, allEnabled, "schedule.startTime: required"},
		{"sched after stop", `{"schedule":{"sendAfter":"2030-01-01T10:00:00Z","stopTime":"09:00:00"},"scenario":[` + itemJSON() + `]}`, allEnabled, "schedule.startTime: required"},
		// Formats: sendAfter must be RFC 3339, times HH:MM:SS.
		{"sched bad sendAfter", `{"schedule":{"sendAfter":"2030-01-01 10:00"},"scenario":[` + itemJSON() + `]}`, allEnabled, "schedule.sendAfter: want"},
		{"sched bad time", `{"schedule":{"startTime":"9:00","stopTime":"18:00:00"},"scenario":[` + itemJSON() + `]}`, allEnabled, "schedule.startTime: want HH:MM:SS"},
		{"sched hour 24", `{"schedule":{"startTime":"24:00:00","stopTime":"18:00:00"},"scenario":[` + itemJSON() + `]}`, allEnabled, "schedule.startTime"},
		// urlOptions needs shortenUrl.
		{"urlOptions empty", `{"urlOptions":{},"scenario":[` + itemJSON() + `]}`, allEnabled, "urlOptions.shortenUrl: required"},
		// trackData must be an object.
		{"trackData array", `{"trackData":[1],"scenario":[` + itemJSON() + `]}`, allEnabled, "trackData"},
		// Wrong JSON types name the field.
		{"ttl as string", `{"scenario":[` + itemJSON("failover", `{"ttl":"10"}`) + `]}`, allEnabled, "scenario.failover.ttl"},
		// Malformed JSON is a 400, not a crash.
		{"malformed", `{"scenario":[`, allEnabled, "body: "},
		{"empty body", ``, allEnabled, "body: empty"},
		{"trailing data", `{"scenario":[` + itemJSON() + `]} {}`, allEnabled, "body: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeSend(strings.NewReader(tt.body))
			if err == nil {
				err = ValidateSend(req, tt.enabled)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			var fe *fieldError
			if err == nil || !errors.As(err, &fe) {
				t.Fatalf("want a FieldError starting %q, got %v", tt.wantErr, err)
			}
			if !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("want %q…, got %q", tt.wantErr, err.Error())
			}
		})
	}
}
