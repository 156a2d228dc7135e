package sim

import (
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// notify.tokenRevokeOnIssue: a client's token still within its lifetime is
// refused 401 invalid_token ("token revoked") once the client is issued
// another, and the newer one is accepted; off (the default), both are
// accepted. Another client's token is never revoked by it.
func TestTokenRevokeOnIssue(t *testing.T) {
	for _, revoke := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			cfg := engineConfig()
			cfg.Notify.TokenLifetime = time.Minute
			cfg.Notify.TokenRevokeOnIssue = revoke
			s, _ := newFakeSim(t, cfg)
			first := token(t, s, "demo-1")
			other := token(t, s, "notify-only")
			time.Sleep(time.Second) // a second apart: the tokens differ in more than their exp
			second := token(t, s, "demo-1")
			body := `{"recipient":{"value":"+79991234567"},"notificationText":"hi","externalId":"e1"}`
			send := func(tok string) (int, string) {
				w := do(s, http.MethodPost, "/api/v1/notifications", body, "Authorization", "Bearer "+tok)
				var e notifyError
				_ = json.Unmarshal(w.Body.Bytes(), &e)
				return w.Code, e.Message
			}
			if code, msg := send(first); revoke != (code == 401 && msg == "token revoked") || !revoke && code != 200 {
				t.Errorf("revokeOnIssue %v: the first token, still valid, answered %d %q", revoke, code, msg)
			}
			for _, tok := range []string{second, other} {
				if code, msg := send(tok); code != 200 {
					t.Errorf("revokeOnIssue %v: the newest token answered %d %q", revoke, code, msg)
				}
			}
		})
	}
}
