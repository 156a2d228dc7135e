package harness

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestCountersString(t *testing.T) {
	tests := []struct {
		name string
		c    counters
		want string
	}{
		// The attack: messages sent of planned, and the time left by the plan.
		{"attack", counters{Phase: "attack", Planned: 40, Sent: 10, Accepted: 9, RateLimited: 1, Callbacks: 7, Elapsed: time.Second, Left: 3 * time.Second},
			"attack sent 10/40  accepted 9  429 1  errors 0  callbacks 7  elapsed 1s  ETA 3s"},
		// Nothing planned (a replay of unknown length): the count alone, no estimate.
		{"unknown plan", counters{Phase: "attack", Sent: 10, Elapsed: time.Second},
			"attack sent 10  accepted 0  429 0  errors 0  callbacks 0  elapsed 1s  ETA ?"},
		// The grace wait: at most what is left of the grace period.
		{"grace", counters{Phase: "grace", Planned: 40, Sent: 40, Accepted: 40, Callbacks: 38, Elapsed: 5 * time.Second, GraceLeft: 8 * time.Second},
			"grace  sent 40/40  accepted 40  429 0  errors 0  callbacks 38  elapsed 5s  ETA ≤8s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestProgressOneCountOneETA: on a terminal the redrawn line carries one count
// and one estimate (the bar draws neither a count nor a time of its own).
func TestProgressOneCountOneETA(t *testing.T) {
	var buf bytes.Buffer
	c := counters{Phase: "attack", Planned: 40, Sent: 10, Accepted: 10, Elapsed: time.Second, Left: 8 * time.Second}
	p := newProgress(&buf, true, 40, func() counters { return c })
	p.show()
	c.Sent = 12
	p.show()
	p.stop()
	out := buf.String()
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r", "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if n := len(regexp.MustCompile(`\d+/\d+`).FindAllString(line, -1)); n > 1 {
			t.Errorf("%d counts in %q", n, line)
		}
		if n := strings.Count(line, "ETA") + len(regexp.MustCompile(`\[\S*:\S*\]|left \d`).FindAllString(line, -1)); n > 1 {
			t.Errorf("%d estimates in %q", n, line)
		}
	}
	if !strings.Contains(out, "25% |") || !strings.Contains(out, "sent 10/40") || !strings.Contains(out, "ETA 8s") {
		t.Errorf("no progress line drawn:\n%q", out)
	}
}
