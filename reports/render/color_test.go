package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/summary"
)

// TestTerminalColor: each verdict in its colour, the marks too, and nothing
// of it without Color.
func TestTerminalColor(t *testing.T) {
	tests := []struct {
		verdict, want string
	}{
		{reports.VerdictPass, "\x1b[1m\x1b[32mPASS\x1b[0m"},             // green
		{verdictFail, "\x1b[1m\x1b[31mFAIL\x1b[0m"},                     // red
		{reports.VerdictError, "\x1b[1m\x1b[31mERROR\x1b[0m"},           // red
		{reports.VerdictIncomplete, "\x1b[1m\x1b[33mINCOMPLETE\x1b[0m"}, // yellow
	}
	for _, tt := range tests {
		if got := (TerminalOptions{Color: true}).Verdict(tt.verdict); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.verdict, got, tt.want)
		}
		if got := (TerminalOptions{}).Verdict(tt.verdict); got != strings.ToUpper(tt.verdict) {
			t.Errorf("%s without colour: %q", tt.verdict, got)
		}
	}
	s := &reports.Summary{Summary: summary.Summary{Verdict: verdictFail, Thresholds: []summary.Threshold{{Expr: "a == 0", OK: true}, {Expr: "b == 0"}}}}
	var plain, colored bytes.Buffer
	TerminalWith(&plain, s, TerminalOptions{})
	TerminalWith(&colored, s, TerminalOptions{Color: true})
	if strings.Contains(plain.String(), "\x1b") {
		t.Errorf("escapes without Color:\n%q", plain.String())
	}
	for _, want := range []string{"\x1b[32m✓\x1b[0m  a 0 = 0", "\x1b[31m✗\x1b[0m  b 0 ≠ 0"} {
		if !strings.Contains(colored.String(), want) {
			t.Errorf("no %q in\n%q", want, colored.String())
		}
	}
}
