package sink

import (
	"errors"
	"strings"
	"testing"
)

const (
	uuid1 = "0b6e3c1e-6f0a-4a57-9c7e-2f4f3a1b2c3d"
	uuid2 = "5a1d7a4e-2b3c-4d5e-8f90-112233445566"
)

func TestParseStatusRecord(t *testing.T) {
	tests := []struct {
		name, body string
		wantErr    string // "" when valid; else a piece of the reason
	}{
		// The minimal record the seed allows: txId, updatedAt, state.
		{"minimal", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"FAILED"}`, ""},
		// Every optional field present and well-formed; unknown fields are allowed.
		{"full", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00.123+03:00","state":"DELIVERED","channel":"viber","trackData":{"a":1},"error":{"code":0,"message":"ok"},"extra":true}`, ""},
		// A null channel counts as absent (allowed for FAILED/EXPIRED).
		{"null channel", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"EXPIRED","channel":null}`, ""},
		{"missing txId", `{"updatedAt":"2026-11-23T02:00:00Z","state":"FAILED"}`, "txId is required"},
		{"txId not uuid", `{"txId":"abc","updatedAt":"2026-11-23T02:00:00Z","state":"FAILED"}`, "txId must be a uuid"},
		{"txId number", `{"txId":5,"updatedAt":"2026-11-23T02:00:00Z","state":"FAILED"}`, "txId must be a string"},
		{"missing updatedAt", `{"txId":"` + uuid1 + `","state":"FAILED"}`, "updatedAt is required"},
		{"bad updatedAt", `{"txId":"` + uuid1 + `","updatedAt":"yesterday","state":"FAILED"}`, "updatedAt must be"},
		// ACCEPTED is a send-response state, not a status-record state.
		{"state ACCEPTED", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"ACCEPTED"}`, "state"},
		{"state lower case", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"delivered"}`, "state"},
		// vkok is a scenario channel but not in the status-record enum.
		{"channel vkok", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"SEEN","channel":"vkok"}`, "channel"},
		{"trackData array", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"SEEN","trackData":[1]}`, "trackData must be an object"},
		{"error without message", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"FAILED","error":{"code":4}}`, "error.message is required"},
		{"error code fraction", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"FAILED","error":{"code":4.5,"message":"x"}}`, "error.code must be an integer"},
		{"error code string", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"FAILED","error":{"code":"4","message":"x"}}`, "error.code must be an integer"},
		{"array body", `[{"txId":"` + uuid1 + `"}]`, "not a JSON object"},
		{"trailing data", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"FAILED"} {}`, "trailing data"},
		// A stray closing brace is trailing data too (found by fuzzing).
		{"trailing brace", `{"txId":"` + uuid1 + `","updatedAt":"2026-11-23T02:00:00Z","state":"FAILED"}}`, "trailing data"},
		{"not JSON", `txId=1`, "not a JSON object"},
		{"empty", ``, "empty body"},
		{"truncated", `{"txId":"` + uuid1 + `","updatedAt":`, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseStatusRecord([]byte(tt.body))
			checkErr(t, err, tt.wantErr)
		})
	}
}

func TestParseIncoming(t *testing.T) {
	ok := `"txId":"` + uuid1 + `","channel":"sms","recipient":{"type":"MSISDN","value":"79001234567"},"sender":"shop"`
	tests := []struct {
		name, body string
		wantErr    string
	}{
		// The required fields only.
		{"minimal", `{` + ok + `}`, ""},
		// Every optional field, well-formed.
		{"full", `{` + ok + `,"text":"hi","attachments":[{"type":"IMAGE","url":"http://x/y.png"}],"acceptedAt":"2026-11-23T02:00:00Z","outgoingTxId":"` + uuid2 + `","replyOn":{"txId":"` + uuid2 + `","type":"OUTGOING"}}`, ""},
		// 2000 characters of non-ASCII text are allowed (characters, not bytes).
		{"text 2000 runes", `{` + ok + `,"text":"` + strings.Repeat("й", 2000) + `"}`, ""},
		{"text 2001", `{` + ok + `,"text":"` + strings.Repeat("a", 2001) + `"}`, "text has 2001 characters"},
		{"sender 22", `{"txId":"` + uuid1 + `","channel":"sms","recipient":{"type":"MSISDN","value":"7"},"sender":"` + strings.Repeat("s", 22) + `"}`, "sender has 22"},
		// push is a status channel but not an incoming one.
		{"channel push", `{"txId":"` + uuid1 + `","channel":"push","recipient":{"type":"MSISDN","value":"7"},"sender":"s"}`, "channel"},
		{"no recipient", `{"txId":"` + uuid1 + `","channel":"sms","sender":"s"}`, "recipient is required"},
		{"recipient type", `{"txId":"` + uuid1 + `","channel":"sms","recipient":{"type":"EMAIL","value":"7"},"sender":"s"}`, "recipient.type"},
		{"no sender", `{"txId":"` + uuid1 + `","channel":"sms","recipient":{"type":"MSISDN","value":"7"}}`, "sender is required"},
		{"replyOn without type", `{` + ok + `,"replyOn":{"txId":"` + uuid2 + `"}}`, "replyOn.type is required"},
		{"replyOn bad txId", `{` + ok + `,"replyOn":{"txId":"x","type":"INCOMING"}}`, "replyOn.txId must be a uuid"},
		{"outgoingTxId bad", `{` + ok + `,"outgoingTxId":"nope"}`, "outgoingTxId must be a uuid"},
		{"attachment type", `{` + ok + `,"attachments":[{"type":"GIF","url":"u"}]}`, "attachments[0].type"},
		{"attachment not object", `{` + ok + `,"attachments":[1]}`, "attachments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseIncoming([]byte(tt.body))
			checkErr(t, err, tt.wantErr)
		})
	}
}

func TestParseWebhook(t *testing.T) {
	tests := []struct {
		name, body string
		wantErr    string
		wantStatus string
	}{
		// externalId and status: the usual shape.
		{"external and status", `{"externalId":"ml.r.1.5","notificationId":"n","status":"DELIVERED"}`, "", "DELIVERED"},
		// state is taken when status is absent.
		{"state field", `{"notificationId":"n","state":"READ"}`, "", "READ"},
		{"no ids", `{"status":"DELIVERED"}`, "notificationId or externalId is required", ""},
		{"id not string", `{"notificationId":7}`, "notificationId must be a string", ""},
		{"status number", `{"notificationId":"n","status":3}`, "status must be a string", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := parseWebhook([]byte(tt.body))
			checkErr(t, err, tt.wantErr)
			if err == nil && w.Status != tt.wantStatus {
				t.Errorf("status = %q, want %q", w.Status, tt.wantStatus)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted; want an error containing %q", want)
	}
	if !errors.Is(err, errMalformed) {
		t.Errorf("error %v does not wrap ErrMalformed", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}
