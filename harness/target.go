package harness

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ErrUnconfirmedTarget refuses to send real, possibly paid, traffic to a host the
// user did not name with --confirm-target (or confirm: in the scenario).
var ErrUnconfirmedTarget = errors.New("target is neither embedded nor loopback")

// checkTarget lets through loopback URLs, and any other URL only when confirm
// names its host (with or without the port).
func checkTarget(raw, confirm string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("target %q: want an http(s) base URL", raw)
	}
	host := u.Hostname()
	if isLoopback(host) {
		return nil
	}
	if confirm != "" && (strings.EqualFold(confirm, host) || strings.EqualFold(confirm, u.Host)) {
		return nil
	}
	return fmt.Errorf("%w: %s — real traffic is sent only with --confirm-target %s (or confirm: %s in the scenario)", ErrUnconfirmedTarget, raw, host, host)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
