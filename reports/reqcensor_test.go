package reports

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// A request with no answer (code 0: a timeout, a reset) has no latency,
// only "more than it was waited for": requests.latency ranks it after every
// answer (censored), as the delivery latency ranks a message with no final
// status. The oracle reads attempts.jsonl itself: the answered latencies
// sorted, the unanswered counted, each percentile the nearest rank over
// both — a value among the answered, else null with the rank-th of the
// answered and the waits merged as its lower bound. A timeout of 30 s read
// as a value made p99 look like the timeout; a reset of 1 ms pulled every
// percentile down.
func TestRequestLatencyCensorsTheUnanswered(t *testing.T) {
	for _, sh := range streamShapes {
		if sh.name != "none" && sh.name != "none-retries" && sh.name != "none-soak-11m" && sh.name != "callbacks" && sh.name != "polls" {
			continue // shapes with repeated lines (the report drops the copies) or no timeout
		}
		t.Run(sh.name, func(t *testing.T) {
			dir := sh.gen(10_000).write(t)
			var answered, waits []float64
			f, err := os.Open(filepath.Join(dir, rundir.AttemptsFile))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			dec := json.NewDecoder(f)
			for dec.More() {
				var a rundir.Attempt
				if err := dec.Decode(&a); err != nil {
					t.Fatal(err)
				}
				if a.Code == 0 {
					waits = append(waits, a.Latency)
				} else {
					answered = append(answered, a.Latency)
				}
			}
			if len(waits) == 0 {
				t.Fatalf("%s has no unanswered request to censor", sh.name)
			}
			slices.Sort(answered)
			merged := slices.Sorted(slices.Values(slices.Concat(answered, waits)))
			s, err := Analyze(dir)
			if err != nil {
				t.Fatal(err)
			}
			l := s.Requests.Latency
			n := len(answered) + len(waits)
			if l.Count != int64(n) || l.Censored != int64(len(waits)) {
				t.Fatalf("count %d censored %d, want %d and %d", l.Count, l.Censored, n, len(waits))
			}
			r6 := func(f float64) float64 { return math.Round(f*1e6) / 1e6 }
			t.Logf("%d answered, %d unanswered; p99 %v at least %v", len(answered), len(waits), l.P99, l.P99AtLeast)
			for _, c := range []struct {
				q       float64
				v       float64
				atLeast *float64
			}{{50, l.P50, l.P50AtLeast}, {95, l.P95, l.P95AtLeast}, {99, l.P99, l.P99AtLeast}} {
				r := int(math.Ceil(c.q / 100 * float64(n)))
				switch {
				case r <= len(answered):
					if c.atLeast != nil || c.v != r6(answered[r-1]) {
						t.Errorf("p%v = %v (at least %v), want %v (rank %d of %d answered)", c.q, c.v, c.atLeast, r6(answered[r-1]), r, len(answered))
					}
				default:
					if c.atLeast == nil || *c.atLeast != r6(merged[r-1]) || c.v != 0 {
						t.Errorf("p%v = %v (at least %v), want unknown, at least %v (rank %d among the %d unanswered)", c.q, c.v, c.atLeast, r6(merged[r-1]), r, len(waits))
					}
				}
			}
		})
	}
}
