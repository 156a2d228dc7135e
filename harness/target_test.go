package harness

import (
	"errors"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

func TestCheckTarget(t *testing.T) {
	for _, tc := range []struct {
		url, confirm string
		want         error // nil: allowed
		bad          bool  // a malformed URL
	}{
		{"http://127.0.0.1:8081", "", nil, false},                                     // loopback needs no confirmation
		{"http://127.9.9.9", "", nil, false},                                          // the whole 127/8 is loopback
		{"http://[::1]:80", "", nil, false},                                           // IPv6 loopback
		{"http://localhost:8081", "", nil, false},                                     // the name too
		{"https://api.example.com", "", ErrUnconfirmedTarget, false},                  // a real host, unconfirmed
		{"https://api.example.com", "api.example.com", nil, false},                    // confirmed by host
		{"https://api.example.com:8443", "api.example.com:8443", nil, false},          // confirmed by host:port
		{"https://api.example.com", "other.example.com", ErrUnconfirmedTarget, false}, // confirmation for another host
		{"http://10.0.0.1", "", ErrUnconfirmedTarget, false},                          // private ranges are not loopback
		{"ftp://127.0.0.1", "", nil, true},                                            // not http
		{"127.0.0.1:8081", "", nil, true},                                             // no scheme
	} {
		err := checkTarget(tc.url, tc.confirm)
		switch {
		case tc.bad:
			if err == nil || errors.Is(err, ErrUnconfirmedTarget) {
				t.Errorf("%s: want a malformed-URL error, got %v", tc.url, err)
			}
		case tc.want == nil && err != nil:
			t.Errorf("%s confirm=%q: want allowed, got %v", tc.url, tc.confirm, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s confirm=%q: want %v, got %v", tc.url, tc.confirm, tc.want, err)
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
