package reports

import "testing"

// TestMDEscapeBuildsNoReplacerACall: MDEscape escapes as it did (the pipe,
// the newline, < and >), and a value with nothing to escape costs no
// allocation — it built a strings.Replacer (its byte table) on every call,
// once for every cell of report.md.
func TestMDEscapeBuildsNoReplacerACall(t *testing.T) {
	for in, want := range map[string]string{
		"a|b\nc<d>e": `a\|b c&lt;d&gt;e`,
		"plain":      "plain",
		"":           "",
	} {
		if got := MDEscape(in); got != want {
			t.Errorf("MDEscape(%q) = %q, want %q", in, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = MDEscape("p95 2.26 s") }); n != 0 {
		t.Errorf("MDEscape of a value with nothing to escape: %.0f allocations a call, want 0", n)
	}
}
