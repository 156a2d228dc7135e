package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// bad is a byte that is never UTF-8.
const bad = "\xff"

// Every text field of a messaging send with invalid UTF-8 is refused,
// naming the field; encoding/json would have replaced the byte with U+FFFD.
func TestSendRefusesInvalidUTF8(t *testing.T) {
	item := func(field string) map[string]any {
		it := map[string]any{
			"channel":   "push",
			"recipient": map[string]any{"type": "MSISDN", "value": "+79991234567"},
			"sender":    "Acme",
			"text":      "hi",
		}
		it[field] = "x" + bad
		return it
	}
	for _, tc := range []struct {
		name, body, path string
	}{
		{"text", send(item("text")), "scenario[0].text"},
		{"sender", send(item("sender")), "scenario[0].sender"},
		{"mobilePushTitle", send(item("mobilePushTitle")), "scenario[0].mobilePushTitle"},
		{"mobilePushAction", send(item("mobilePushAction")), "scenario[0].mobilePushAction"},
		{"channel", send(item("channel")), "scenario[0].channel"},
		{"recipient.value", strings.Replace(send(item("text")), `"+79991234567"`, `"+7999`+bad+`"`, 1), "scenario[0].recipient.value"},
		{"second item", `{"scenario":[{"channel":"sms","sender":"a"},{"channel":"viber","text":"` + bad + `"}]}`, "scenario[1].text"},
		{"button caption", `{"scenario":[{"channel":"viber","buttons":[{"caption":"` + bad + `","action":"x"}]}]}`, "scenario[0].buttons[0].caption"},
		{"attachment url", `{"scenario":[{"channel":"viber","attachments":[{"type":"IMAGE","url":"http://x/` + bad + `"}]}]}`, "scenario[0].attachments[0].url"},
		{"clientRequestId", `{"scenario":[],"clientRequestId":"` + bad + `"}`, "clientRequestId"},
		{"callback", `{"scenario":[],"callback":"http://x/` + bad + `"}`, "callback"},
		{"trackData", `{"scenario":[],"trackData":{"a":{"b":"` + bad + `"}}}`, "trackData.a.b"},
		// a \u escape of a lone surrogate is not UTF-8 either
		{"lone surrogate", `{"scenario":[{"channel":"sms","text":"a\ud800b"}]}`, "scenario[0].text"},
		{"lone low surrogate", `{"scenario":[{"channel":"sms","text":"\udc00"}]}`, "scenario[0].text"},
		{"field name", `{"scenario":[{"te` + bad + `xt":"a"}]}`, "scenario[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSend(strings.NewReader(tc.body))
			if err == nil || !strings.HasPrefix(err.Error(), tc.path+": ") || !strings.Contains(err.Error(), "UTF-8") {
				t.Fatalf("got %v, want %s: …UTF-8", err, tc.path)
			}
		})
	}
	// valid text, escapes and a surrogate pair pass
	for _, body := range []string{
		`{"scenario":[{"channel":"push","recipient":{"type":"MSISDN","value":"+79991234567"},"sender":"Acme","mobilePushTitle":"Заголовок"}]}`,
		`{"scenario":[{"channel":"sms","text":"Привет \ud83d\ude00 \u00e9 \" \\ \/"}]}`,
	} {
		if _, err := DecodeSend(strings.NewReader(body)); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
}

func send(it map[string]any) string {
	b, _ := json.Marshal(map[string]any{"scenario": []any{it}})
	// json.Marshal writes invalid UTF-8 as \ufffd: put the byte back
	return strings.ReplaceAll(string(b), `\ufffd`, bad)
}

// The notification API refuses invalid UTF-8 in every field with 400 naming
// it; two externalIds differing only in invalid bytes no longer share a
// notificationId.
func TestNotificationRefusesInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		name, body, path string
	}{
		{"notificationText", `{"recipient":{"value":"+79991234567"},"notificationText":"a` + bad + `"}`, "notificationText"},
		{"externalId", `{"recipient":{"value":"+79991234567"},"notificationText":"a","externalId":"e` + bad + `"}`, "externalId"},
		{"recipient.value", `{"recipient":{"value":"+7999` + bad + `"},"notificationText":"a"}`, "recipient.value"},
		{"sender", `{"recipient":{"value":"+79991234567"},"notificationText":"a","sender":"` + bad + `"}`, "sender"},
		{"lone surrogate", `{"recipient":{"value":"+79991234567"},"notificationText":"\ud800"}`, "notificationText"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeNotification([]byte(tc.body))
			if err == nil || !strings.HasPrefix(err.Error(), tc.path+": not valid UTF-8") {
				t.Fatalf("got %v, want %s: not valid UTF-8", err, tc.path)
			}
		})
	}

	s, _ := newFakeSim(t, engineConfig())
	tok := "Bearer " + token(t, s, "demo-1")
	for _, ext := range []string{"e" + bad, "e\xfe"} {
		w := do(s, http.MethodPost, "/api/v1/notifications",
			`{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"`+ext+`"}`, "Authorization", tok)
		var e notifyError
		_ = json.Unmarshal(w.Body.Bytes(), &e)
		if w.Code != http.StatusBadRequest || !strings.HasPrefix(e.Message, "externalId: not valid UTF-8") {
			t.Fatalf("externalId %q: %d %s", ext, w.Code, w.Body)
		}
	}
	w := do(s, http.MethodPost, "/api/v1/webhooks", `{"url":"http://x.test/`+bad+`"}`, "Authorization", tok)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "url: not valid UTF-8") {
		t.Fatalf("webhook: %d %s", w.Code, w.Body)
	}
	w = do(s, http.MethodPost, "/messaging/v1/send", `{"scenario":[{"channel":"sms","recipient":{"type":"MSISDN","value":"+79991234567"},"sender":"`+bad+`"}]}`,
		"Authorization", "Basic ZGVtbzpkZW1v")
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "scenario[0].sender: not valid UTF-8") {
		t.Fatalf("send: %d %s", w.Code, w.Body)
	}
}
