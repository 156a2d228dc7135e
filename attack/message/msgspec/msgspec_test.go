package msgspec

import (
	"math"
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

func TestVariety(t *testing.T) {
	tests := []struct {
		tmpl       string
		recipients uint64
		random     bool
		n          int64
		distinct   float64
		chance     float64 // within 1e-9
	}{
		// the sequence never repeats
		{"order-{{.Seq}}", 0, false, 1e6, math.Inf(1), 0},
		// 10 ids for 11 messages: certain
		{"o-{{digits 1}}", 0, false, 11, 10, 1},
		// birthday: 1 - exp(-C(100,2)/10^6)
		{"o-{{digits 6}}", 0, false, 100, 1e6, -math.Expm1(-4950.0 / 1e6)},
		// sequential recipients repeat after 10: 20 messages, 10 pairs alike, no random part
		{"{{.Recipient}}", 10, false, 20, 10, 1},
		// ... but not within the first 10
		{"{{.Recipient}}", 10, false, 10, 10, 0},
		// with a random part the 10 pairs collide only if their digits agree
		{"{{.Recipient}}-{{digits 3}}", 10, false, 20, 1e4, -math.Expm1(-10.0 / 1e3)},
		// random recipients are a random part
		{"{{.Recipient}}", 1000, true, 2, 1000, -math.Expm1(-1.0 / 1000)},
		// a CSV not yet read: taken as never repeating
		{"{{.Recipient}}", 0, true, 1e6, math.Inf(1), 0},
		// words of the vocabulary
		{"{{words 2}} {{.Client}}", 0, false, 2, float64(len(Words) * len(Words)), -math.Expm1(-1.0 / float64(len(Words)*len(Words)))},
	}
	for _, tt := range tests {
		tp, err := ParseTemplate(tt.tmpl)
		if err != nil {
			t.Fatal(err)
		}
		v := tp.Variety(tt.recipients, tt.random)
		if d := v.Distinct(); d != tt.distinct {
			t.Errorf("%s: distinct %v, want %v", tt.tmpl, d, tt.distinct)
		}
		if c := v.CollisionChance(tt.n); math.Abs(c-tt.chance) > 1e-9 {
			t.Errorf("%s, %d messages: chance %v, want %v", tt.tmpl, tt.n, c, tt.chance)
		}
	}
}
