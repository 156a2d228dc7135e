package scenarios

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in     string
		perSec float64
		err    string
	}{
		{"150/1m", 2.5, ""},             // a count per minute, as the issue writes it
		{"20/s", 20, ""},                // a bare unit
		{"100/min", 100.0 / 60, ""},     // unit names
		{"5/10s", 0.5, ""},              // any Go duration as the window
		{" 3 / h ", 3.0 / 3600, ""},     // spaces are tolerated
		{"0/s", 0, ""},                  // zero is a rate (checks decide where it is allowed)
		{"150", 0, "want COUNT/WINDOW"}, // no window
		{"x/1m", 0, `count "x" is not a non-negative number`}, // bad count
		{"-1/s", 0, "not a non-negative number"},              // negative
		{"1/0s", 0, "not a positive duration"},                // zero window
		{"1/fortnight", 0, "not a positive duration"},         // unknown unit
		{"NaN/s", 0, "not a non-negative number"},             // NaN
	}
	for _, tt := range tests {
		r, err := ParseRate(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrBadRate) {
				t.Errorf("%q: err %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || r.PerSecond() < tt.perSec-1e-9 || r.PerSecond() > tt.perSec+1e-9 {
			t.Errorf("%q: %v/s %v, want %v/s", tt.in, r.PerSecond(), err, tt.perSec)
		}
	}
}

func TestParseDurationPercent(t *testing.T) {
	durs := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"500ms", 500 * time.Millisecond, true}, // milliseconds
		{"2m", 2 * time.Minute, true},           // minutes
		{"0", 0, true},                          // a bare zero
		{"10", 0, false},                        // a number without unit is refused
		{"-1s", 0, false},                       // negative
	}
	for _, tt := range durs {
		d, err := ParseDuration(tt.in)
		if (err == nil) != tt.ok || d.D != tt.want {
			t.Errorf("duration %q: %v %v", tt.in, d.D, err)
		}
		if err != nil && !errors.Is(err, ErrBadDuration) {
			t.Errorf("duration %q: error does not wrap ErrBadDuration", tt.in)
		}
	}
	pcts := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"5%", 0.05, true},    // a percentage
		{"0.5%", 0.005, true}, // a fraction of a percent
		{"0.25", 0.25, true},  // a fraction
		{"100%", 1, true},     // the whole
		{"101%", 0, false},    // above the whole
		{"1.5", 0, false},     // a fraction above 1
		{"five", 0, false},    // not a number
	}
	for _, tt := range pcts {
		p, err := ParsePercent(tt.in)
		if (err == nil) != tt.ok || p.F < tt.want-1e-12 || p.F > tt.want+1e-12 {
			t.Errorf("percent %q: %v %v", tt.in, p.F, err)
		}
	}
}

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
