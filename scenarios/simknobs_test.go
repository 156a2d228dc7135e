package scenarios

import (
	"strings"
	"testing"
)

// sim.tokenExpiresIn (notify, above 0) and sim.messagingDedup (messaging,
// first or 409): each refused at its field; good ones read as written.
func TestSimKnobs(t *testing.T) {
	head := func(api string) string {
		return "api: " + api + "\ntarget: embedded\nload: { rate: 1/s, requests: 1 }\nsim:\n"
	}
	for _, tc := range []struct{ api, line, want string }{
		{"messaging", "  tokenExpiresIn: 5s\n", "sim.tokenExpiresIn: notify only"},
		{"notify", "  messagingDedup: first\n", "sim.messagingDedup: the messaging API only"},
		{"messaging", "  messagingDedup: last\n", "sim.messagingDedup"},
	} {
		_, err := Parse("k.yaml", "", []byte(head(tc.api)+tc.line), env(nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want %q", tc.api, strings.TrimSpace(tc.line), err, tc.want)
		}
	}
	s, err := Parse("k.yaml", "", []byte(head("notify")+"  tokenLifetime: 2s\n  tokenExpiresIn: 6s\n"), env(nil))
	if err != nil || s.Sim.TokenExpiresIn.D.Seconds() != 6 {
		t.Errorf("notify: %v, %+v", err, s)
	}
	s, err = Parse("k.yaml", "", []byte(head("messaging")+"  messagingDedup: \"409\"\n"), env(nil))
	if err != nil || s.Sim.MessagingDedup != "409" {
		t.Errorf("messaging: %v", err)
	}
}
