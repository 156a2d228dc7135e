package scenarios

import (
	"slices"
	"strings"
	"testing"
)

// confirm: takes one host, "a, b" or a list; a part inherits the list; a
// list entry that is not a host name is named in the error.
func TestConfirmHosts(t *testing.T) {
	const base = "name: x\napi: notify\ntarget: { baseUrl: \"https://api.example.com\", tokenUrl: \"https://id.example.com/token\" }\nauth: { clientId: a, clientSecret: b }\nload: { rate: 1/s, requests: 1 }\nmessage: { recipient: \"+79990000001\", text: x }\n"
	for _, tc := range []struct {
		confirm string
		want    Hosts
		err     string
	}{
		{"api.example.com", Hosts{"api.example.com"}, ""},
		{"\"api.example.com, id.example.com\"", Hosts{"api.example.com", "id.example.com"}, ""},
		{"[api.example.com, id.example.com]", Hosts{"api.example.com", "id.example.com"}, ""},
		{"\n  - api.example.com\n  - id.example.com:8443", Hosts{"api.example.com", "id.example.com:8443"}, ""},
		{"[api.example.com, \"https://id.example.com/x\"]", nil, `confirm: want a host name such as api.example.com (no scheme, path or user), got "https://id.example.com/x"`},
		{"{ a: b }", nil, "confirm: want a host or a list of hosts"},
	} {
		s, err := Parse("x.yaml", "", []byte(base+"confirm: "+tc.confirm+"\n"), env(nil))
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("confirm: %s: err %v, want %q", tc.confirm, err, tc.err)
			}
		case err != nil:
			t.Errorf("confirm: %s: %v", tc.confirm, err)
		case !slices.Equal(s.Confirm, tc.want):
			t.Errorf("confirm: %s: got %q, want %q", tc.confirm, s.Confirm, tc.want)
		}
	}
}

// A list of hosts is written back as a list, one host as the string it was.
func TestConfirmHostsMarshal(t *testing.T) {
	for _, tc := range []struct {
		h    Hosts
		want string
	}{{Hosts{"a"}, `"a"`}, {Hosts{"a", "b"}, `["a","b"]`}} {
		b, err := tc.h.MarshalJSON()
		if err != nil || string(b) != tc.want {
			t.Errorf("%q: %s %v, want %s", tc.h, b, err, tc.want)
		}
	}
}

// The resolved scenario (scenario.yaml of a run) keeps a confirm: list as a
// list, and it loads back the same.
func TestConfirmHostsRoundTrip(t *testing.T) {
	s, err := Load("testdata/real-notify.yaml", env(map[string]string{"LOAD_A_SECRET": "a", "LOAD_B_SECRET": "b"}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "auth.staging.example.com") {
		t.Fatalf("confirm list lost:\n%s", b)
	}
	again, err := Parse("testdata/again.yaml", "testdata", b, env(nil))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !slices.Equal(again.Confirm, s.Confirm) {
		t.Errorf("confirm %q after a round trip, want %q", again.Confirm, s.Confirm)
	}
}
