package replay

import (
	"strings"
	"testing"
	"time"
)

// TestWriteTableDurations: the pacing line shows durations as people read
// them (three figures at most), not Go's nanosecond spelling.
func TestWriteTableDurations(t *testing.T) {
	r := Report{RunID: "r1", Speed: 5, Planned: 3, Sent: 3, Lateness: Lateness{Hits: 3, P50: 751528 * time.Nanosecond, P99: 1102234 * time.Nanosecond, Max: 2345678901 * time.Nanosecond}}
	var b strings.Builder
	r.WriteTable(&b)
	out := b.String()
	for _, want := range []string{"p50 752µs", "p99 1.1ms", "max 2.35s", "more than 10ms late"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, raw := range []string{"751.528µs", "1.102234ms", "2.345678901s"} {
		if strings.Contains(out, raw) {
			t.Errorf("table shows the raw duration %s:\n%s", raw, out)
		}
	}
}
