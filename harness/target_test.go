package harness

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

func hostOf(raw string) string {
	u, _ := url.Parse(raw)
	return u.Hostname()
}

// TestConfirmTokenHost: the README's real-target example has its token
// endpoint on another host than its API; with both confirmed (confirm: as a
// list) both URLs pass, and with the API's host only the error names the
// token endpoint's host.
func TestConfirmTokenHost(t *testing.T) {
	s, err := scenarios.Load("../scenarios/testdata/real-notify.yaml", func(string) string { return "x" })
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{s.Target.BaseURL, s.Target.TokenURL} {
		if err := CheckTarget(u, s.Confirm); err != nil {
			t.Errorf("confirm %q: %v", s.Confirm, err)
		}
	}
	err = CheckTarget(s.Target.TokenURL, []string{hostOf(s.Target.BaseURL)})
	if !errors.Is(err, ErrUnconfirmedTarget) || !strings.Contains(err.Error(), "host "+hostOf(s.Target.TokenURL)+" ") {
		t.Errorf("API host only: %v, want the token host named as unconfirmed", err)
	}
}

func TestCheckTarget(t *testing.T) {
	for _, tc := range []struct {
		url     string
		confirm []string
		want    error // nil: allowed
		bad     bool  // a malformed URL
	}{
		{"http://127.0.0.1:8081", nil, nil, false},                                                // loopback needs no confirmation
		{"http://127.9.9.9", nil, nil, false},                                                     // the whole 127/8 is loopback
		{"http://[::1]:80", nil, nil, false},                                                      // IPv6 loopback
		{"http://localhost:8081", nil, nil, false},                                                // the name too
		{"https://api.example.com", nil, ErrUnconfirmedTarget, false},                             // a real host, unconfirmed
		{"https://api.example.com", []string{"api.example.com"}, nil, false},                      // confirmed by host
		{"https://api.example.com:8443", []string{"api.example.com:8443"}, nil, false},            // confirmed by host:port
		{"https://api.example.com", []string{"other.example.com"}, ErrUnconfirmedTarget, false},   // confirmation for another host
		{"http://10.0.0.1", nil, ErrUnconfirmedTarget, false},                                     // private ranges are not loopback
		{"https://auth.example.com", []string{"api.example.com", "auth.example.com"}, nil, false}, // one of a list
		{"https://other.example.com", []string{"api.example.com", "auth.example.com"}, ErrUnconfirmedTarget, false},
		{"ftp://127.0.0.1", nil, nil, true}, // not http
		{"127.0.0.1:8081", nil, nil, true},  // no scheme
	} {
		err := CheckTarget(tc.url, tc.confirm)
		switch {
		case tc.bad:
			if err == nil || errors.Is(err, ErrUnconfirmedTarget) {
				t.Errorf("%s: want a malformed-URL error, got %v", tc.url, err)
			}
		case tc.want == nil && err != nil:
			t.Errorf("%s confirm=%q: want allowed, got %v", tc.url, tc.confirm, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s confirm=%q: want %v, got %v", tc.url, tc.confirm, tc.want, err)
		case tc.want != nil && !strings.Contains(err.Error(), "host "+hostOf(tc.url)+" "):
			t.Errorf("%s: the error does not name the unconfirmed host: %v", tc.url, err)
		}
	}
}

func TestNewRunID(t *testing.T) {
	now := time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)
	for _, name := range []string{"smoke", "notify exceed/limit", "", "ünïcode", "a-very-long-scenario-name-that-goes-on-and-on-and-on"} {
		id := NewRunID(name, now)
		if !rundir.ValidRunID(id) {
			t.Errorf("NewRunID(%q) = %q: not usable in a correlation tag", name, id)
		}
		if id[:17] != "20261123T020000Z-" {
			t.Errorf("NewRunID(%q) = %q: want the UTC start time first", name, id)
		}
	}
	if a, b := NewRunID("x", now), NewRunID("x", now); a == b {
		t.Errorf("two runs started in the same second got the same id %q", a)
	}
}
