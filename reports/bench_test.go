package reports

import (
	"fmt"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// bigRun is n messages at 100/s from 10 clients, every accepted one delivered.
func bigRun(n int) *run {
	r := newRun(rundir.APINotify)
	r.meta.AttackEnd = at(float64(n) / 100)
	r.meta.End = r.meta.AttackEnd.Add(10 * time.Second)
	for i := 1; i <= n; i++ {
		sec := float64(i) / 100
		r.send(int64(i), fmt.Sprintf("c%d", i%10), sec, 200, 0.01)
		r.events = append(r.events, rundir.Event{Kind: rundir.KindWebhook, Route: "/webhook", ReceivedAt: at(sec + 1 + float64(i%7)/10),
			API: rundir.APINotify, Corr: &rundir.Correlation{Key: "n-" + itoa(int64(i)), Run: r.meta.ID, Seq: int64(i),
				FirstSent: at(sec), State: "DELIVERED", Terminal: true, Matched: true}})
	}
	return r
}

func benchmarkAnalyze(b *testing.B, n int) {
	dir := bigRun(n).write(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := Analyze(dir)
		if err != nil {
			b.Fatal(err)
		}
		if s.Delivery.Received != int64(n) {
			b.Fatalf("received %d", s.Delivery.Received)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/record")
}

func BenchmarkAnalyze1k(b *testing.B)   { benchmarkAnalyze(b, 1_000) }
func BenchmarkAnalyze100k(b *testing.B) { benchmarkAnalyze(b, 100_000) }
