package harness

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/msgload/msgload/internal/netguard"
)

// ErrUnconfirmedTarget refuses to send real, possibly paid, traffic to a host the
// user did not name with --confirm-target (or confirm: in the scenario).
var ErrUnconfirmedTarget = errors.New("target is neither embedded nor loopback")

// CheckTarget lets through loopback URLs, and any other URL only when one of
// the confirmed hosts names its host (with or without the port). The error
// names the unconfirmed host and the hosts that were confirmed.
func CheckTarget(raw string, confirmed []string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("target %q: want an http(s) base URL", raw)
	}
	host := u.Hostname()
	if netguard.IsLoopbackHost(host) {
		return nil
	}
	for _, c := range confirmed {
		if strings.EqualFold(c, host) || strings.EqualFold(c, u.Host) {
			return nil
		}
	}
	had := "no host is confirmed"
	if len(confirmed) > 0 {
		had = "confirmed: " + strings.Join(confirmed, ", ")
	}
	return fmt.Errorf("%w: host %s of %s is not confirmed (%s) — real traffic is sent only with --confirm-target %s (or confirm: %s in the scenario)", ErrUnconfirmedTarget, host, raw, had, host, host)
}
