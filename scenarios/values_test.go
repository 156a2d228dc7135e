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
		r, err := parseRate(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, errBadRate) {
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
		d, err := parseDuration(tt.in)
		if (err == nil) != tt.ok || d.D != tt.want {
			t.Errorf("duration %q: %v %v", tt.in, d.D, err)
		}
		if err != nil && !errors.Is(err, errBadDuration) {
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
		p, err := parsePercent(tt.in)
		if (err == nil) != tt.ok || p.F < tt.want-1e-12 || p.F > tt.want+1e-12 {
			t.Errorf("percent %q: %v %v", tt.in, p.F, err)
		}
	}
}
