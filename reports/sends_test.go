package reports

import (
	"strings"
	"testing"
)

// TestSendsAloneSameFigures: AnalyzeSends gives every figure of the sends
// that Analyze gives, on every run the metamorphic tests transform and on
// generated runs of every shape (one pass and passes, callbacks, polls,
// replies, 429s, failover) — the differential test of the live judgement on
// the sends (harness/livechild.go). The figures compared are those of the
// summary whose path fromSends accepts; a threshold on each kind is judged
// too, and one on a delivery figure is not known from the sends alone.
func TestSendsAloneSameFigures(t *testing.T) {
	dirs := metamorphicRuns(t)
	for _, sh := range streamShapes {
		dirs["gen-"+sh.name] = sh.gen(3_000).write(t)
	}
	dirs["gen-failover"] = genFailover(1_000).write(t)
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			all, err := Analyze(dir)
			if err != nil {
				t.Fatal(err)
			}
			sends, err := AnalyzeSends(dir)
			if err != nil {
				t.Fatal(err)
			}
			// duplicate_deliveries is the sink's: the rest of idempotency
			// is compared.
			const sinks = "idempotency.duplicate_deliveries"
			want, got := figures(t, all, sinks), figures(t, sends, sinks)
			compared := 0
			for k, v := range want {
				if !fromSends([]any{k}) {
					continue
				}
				compared++
				if d := differences(k, v, got[k]); len(d) > 0 {
					t.Errorf("the sends alone give other figures:\n  %s", strings.Join(d, "\n  "))
				}
			}
			if compared < 3 {
				t.Fatalf("compared %d sections of the sends, want requests, rate_limit and idempotency", compared)
			}
			for _, src := range []string{"requests.messages >= 0", "requests.error_rate <= 1", "idempotency.mismatches >= 0"} {
				th, err := CompileLive(src, all.Delivery.Via)
				if err != nil {
					t.Fatal(err)
				}
				if !th.Sends() {
					t.Errorf("%s reads more than the sends", src)
				}
				if a, b := th.Judge(all), th.Judge(sends); a != b {
					t.Errorf("%s judged %+v on the sends alone, %+v on the whole run", src, b, a)
				}
			}
			if all.Delivery.Via == "sink" {
				th, err := CompileLive("delivery.duplicates < 1000000", "sink")
				if err != nil {
					t.Fatal(err)
				}
				if th.Sends() {
					t.Error("delivery.duplicates is judged on the sends alone")
				}
				if st := th.Judge(sends); st.Known {
					t.Errorf("delivery.duplicates known from the sends alone: %+v", st)
				}
			}
		})
	}
}

// The files AnalyzeSends hides are the ones missingRaw says the figures of
// the sends do not come from.
func TestSendsHiddenAreNotTheSends(t *testing.T) {
	for name := range sendsHidden {
		s := &Summary{missing: []string{name}}
		for _, p := range [][]any{{"requests", "messages"}, {"rate_limit", "rejected_429"}, {"idempotency", "mismatches"}} {
			if why := s.missingRaw(p); why != "" {
				t.Errorf("%s hidden: %v has no data (%s)", name, p, why)
			}
		}
	}
}
