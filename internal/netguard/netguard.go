// Package netguard holds the one rule for where msgload's own HTTP requests
// may go: loopback, or a host the user confirmed. Every client msgload builds
// takes its redirect policy from here, so a redirect cannot carry a request
// (and its body or credentials) to a host nobody checked.
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// ErrRedirect is a redirect msgload refused to follow: to another host, or
// more than maxRedirects in a row.
var ErrRedirect = errors.New("redirect not followed")

// maxRedirects is net/http's own limit.
const maxRedirects = 10

// IsLoopbackHost reports whether host (a name or address, without port)
// reaches only this machine: "localhost", 127.0.0.0/8 or ::1 (brackets
// allowed). Private ranges are not loopback.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.EqualFold(host, "localhost.") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckRedirect is the redirect policy of every client msgload builds: a
// redirect is followed only to the host (and port) of the first request, so a
// token request's client_secret, a poll's Authorization or a registration's
// body never reach a host that was not checked as loopback or confirmed. Any
// other redirect is an error naming where it led.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	first := via[0].URL
	if !strings.EqualFold(req.URL.Host, first.Host) {
		return fmt.Errorf("%w: %s answered a redirect to another host %s", ErrRedirect, first.Host, req.URL.Host)
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("%w: %d redirects from %s", ErrRedirect, len(via), first.Host)
	}
	return nil
}

// Client returns c with the redirect policy set (a new client when c is nil);
// a client with no Transport gets Transport(), not http.DefaultTransport, so
// it never goes through an environment proxy.
func Client(c *http.Client) *http.Client {
	if c == nil {
		c = &http.Client{}
	}
	if c.Transport == nil {
		c.Transport = Transport()
	}
	c.CheckRedirect = CheckRedirect
	return c
}

// Transport is the transport of every request msgload sends: Go's default
// transport with no proxy. HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (any case)
// are ignored, because a proxy is a host that nobody confirmed and it would
// receive every request whole: client secrets, tokens, recipients. A target
// is reached directly, or not at all.
func Transport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	return tr
}

// LocalHost reports whether hostport, a request's Host header, names this
// machine: a loopback name or address (any port), or one of hosts (the
// configured listen address: host or host:port). A DNS-rebinding page always
// sends its own name, so it fails this test.
func LocalHost(hostport string, hosts ...string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if host == "" {
		return false
	}
	if IsLoopbackHost(host) {
		return true
	}
	for _, a := range hosts {
		h, _, err := net.SplitHostPort(a)
		if err != nil {
			h = a
		}
		if a != "" && (strings.EqualFold(a, hostport) || (h != "" && strings.EqualFold(h, host))) {
			return true
		}
	}
	return false
}

// GuardHost wraps a read endpoint served without a token: a request whose
// Host is not LocalHost is answered 421 Misdirected Request, so a web page
// whose name was rebound to 127.0.0.1 cannot read it.
func GuardHost(h http.HandlerFunc, hosts ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !LocalHost(r.Host, hosts...) {
			http.Error(w, "misdirected request: this read API answers only to a loopback host name or its listen address", http.StatusMisdirectedRequest)
			return
		}
		h(w, r)
	}
}
