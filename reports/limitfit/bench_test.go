package limitfit_test

import (
	"testing"
	"time"

	"github.com/msgload/msgload/reports/limitfit"
	"github.com/msgload/msgload/reports/limitfit/limitfittest"
)

// benchmarkClassify names the limiter from 100,000 decisions of one client: a
// sliding log of 100 per minute under bursty traffic (about 4 hours at twice
// the limit's rate), answered within latency s.
func benchmarkClassify(b *testing.B, latency float64) {
	recs := limitfittest.Decisions(&limitfittest.Sliding{Limit: 100, W: 60}, t0, limitfittest.BurstyFor(1, 100.0/60, 60, 60_000)[:100_000], latency, 1)
	clients := map[string][]limitfit.Request{"c1": recs}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if alg := limitfit.Classify(clients, []string{"c1"}, time.Minute, 100); alg.Verdict != limitfit.Sliding {
			b.Fatalf("%s: %q", alg.Verdict, alg.Evidence)
		}
	}
}

func BenchmarkClassify100k(b *testing.B)            { benchmarkClassify(b, 0.03) }
func BenchmarkClassify100kSlowAnswers(b *testing.B) { benchmarkClassify(b, 15) }
