package reports

import (
	"fmt"
	"os"
	"runtime"
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

// benchmarkClassify names the limiter from 100,000 decisions of one client: a
// sliding log of 100 per minute under bursty traffic (about 4 hours at twice
// the limit's rate), answered within latency s.
func benchmarkClassify(b *testing.B, latency float64) {
	recs := synthDecisions(&slidingLimiter{limit: 100, w: 60}, burstyFor(1, 100.0/60, 60, 60_000)[:100_000], latency, 1)
	clients := map[string][]rec{"c1": recs}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if alg := classify(clients, []string{"c1"}, int64(time.Minute), 100); alg.Verdict != algoSliding {
			b.Fatalf("%s: %q", alg.Verdict, alg.Evidence)
		}
	}
}

func BenchmarkClassify100k(b *testing.B)            { benchmarkClassify(b, 0.03) }
func BenchmarkClassify100kSlowAnswers(b *testing.B) { benchmarkClassify(b, 15) }

// noneRun is what BenchmarkRunVersusVegeta's scenario leaves: n messaging sends
// at 5000/s from one client, every one accepted at once, delivery: none.
func noneRun(n int) *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8081"
	r.meta.Clients = []string{"bench"}
	r.meta.Limit = rundir.Limit{}
	r.meta.Delivery = rundir.Delivery{Via: "none"}
	r.meta.Chain = []string{"sms"}
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: 5000, Requests: int64(n), Duration: rundir.Duration(time.Duration(n) * time.Second / 5000)}
	r.meta.AttackEnd = at(float64(n) / 5000)
	r.meta.End = r.meta.AttackEnd
	for i := 1; i <= n; i++ {
		a := r.send(int64(i), "bench", float64(i)/5000, 200, 0.0003+float64(i%97)/1e5)
		a.Sent = a.Sent.Add(time.Duration(i%13) * 17 * time.Microsecond)
		a.FirstSent = a.Sent
		a.State, a.Channel, a.BytesOut, a.BytesIn = "ACCEPTED", "sms", 265, 101
	}
	return r
}

// BenchmarkBuildNone100k: reports.Build (analysis and the four report files)
// of a 100,000-message run with delivery: none — the report phase of the
// whole-run benchmark at 5000/s for 20 s.
func BenchmarkBuildNone100k(b *testing.B) {
	dir := noneRun(100_000).write(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := Build(dir)
		if err != nil {
			b.Fatal(err)
		}
		if s.Requests.Accepted != 100_000 {
			b.Fatalf("accepted %d", s.Requests.Accepted)
		}
	}
}

// BenchmarkAnalyzeNone100kLive reports the live heap the analysis of that run
// holds when it is done (what it adds to the process's peak, before the
// garbage of decoding): live-B.
func BenchmarkAnalyzeNone100kLive(b *testing.B) {
	dir := noneRun(100_000).write(b)
	var live uint64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a, err := analyze(os.DirFS(dir), dir)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		live = after.HeapAlloc - before.HeapAlloc
		runtime.KeepAlive(a)
	}
	b.ReportMetric(float64(live), "live-B")
}
