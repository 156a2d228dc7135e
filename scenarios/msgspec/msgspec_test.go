package msgspec

import (
	"strings"
	"testing"
)

func TestParseTemplate(t *testing.T) {
	tests := []struct {
		in   string
		segs int
		err  string
	}{
		{"plain", 1, ""},                             // literal only
		{"a {{.Seq}} b {{ words 3 }}", 4, ""},        // actions with spaces inside the braces
		{"{{.Client}}{{.Recipient}}{{.Run}}", 3, ""}, // adjacent actions
		{"{{digits 0}}", 0, "count must be"},         // counts start at 1
		{"{{words 10001}}", 0, "count must be"},      // and are bounded
		{"{{.Nope}}", 0, "unknown action"},           // unknown field
		{"open {{.Seq", 0, "without }}"},             // unterminated
	}
	for _, tt := range tests {
		tp, err := ParseTemplate(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || len(tp.Segments()) != tt.segs {
			t.Errorf("%q: %v segments, err %v", tt.in, tp, err)
		}
	}
}

func TestRecipients(t *testing.T) {
	tests := []struct {
		name     string
		from, to string // a range when set; else pattern
		pattern  string
		i        uint64
		want     string
		err      bool
	}{
		{name: "pattern first", pattern: "+7999{0000000-9999999}", i: 0, want: "+79990000000"}, // zero padded
		{name: "pattern wraps", pattern: "+1{05-07}x", i: 4, want: "+106x"},                    // 3 numbers: index 4 is the 2nd, suffix kept
		{name: "literal", pattern: "+79991234567", i: 9, want: "+79991234567"},                 // one number
		{name: "pattern lo>hi", pattern: "+1{9-1}", err: true},                                 // empty range
		{name: "pattern widths", pattern: "+1{0-99}", err: true},                               // widths differ
		{name: "two ranges", pattern: "+1{0-9}{0-9}", err: true},                               // one range only
		{name: "range", from: "+79990000100", to: "+79990000199", i: 5, want: "+79990000105"},  // trailing digits vary
		{name: "range same", from: "+7999", to: "+7999", i: 3, want: "+7999"},                  // a single number
		{name: "range reversed", from: "+79990000199", to: "+79990000100", err: true},          // from above to
		{name: "range lengths", from: "+7999000", to: "+79990000", err: true},                  // lengths differ
		{name: "range letters", from: "+7a99", to: "+7b99", err: true},                         // a non-digit differs
	}
	for _, tt := range tests {
		var r NumberRange
		var err error
		if tt.from != "" {
			r, err = ParseNumberRange(tt.from, tt.to)
		} else {
			r, err = ParseRecipient(tt.pattern)
		}
		if tt.err {
			if err == nil {
				t.Errorf("%s: no error", tt.name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got := string(r.AppendNumber(nil, tt.i)); got != tt.want {
			t.Errorf("%s: number %d = %q, want %q", tt.name, tt.i, got, tt.want)
		}
	}
}
