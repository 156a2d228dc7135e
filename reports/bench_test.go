package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
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

// writeNoneRun writes a run directory of n messaging sends at 5000/s from
// one client, delivery none, line by line (an 18 M-message run does not fit
// in a test's memory as a run): every send accepted with its own txId in
// 0.3–1.3 ms, but every 500th answered 500 and retried once (accepted), and
// every 2000th timed out after 30 s.
func writeNoneRun(t testing.TB, dir string, n int) {
	t.Helper()
	r := noneRun(0)
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: 5000, Requests: int64(n), Duration: rundir.Duration(time.Duration(n) * time.Second / 5000)}
	r.meta.Retry = rundir.Retry{On: []string{"500"}, Max: 1}
	r.meta.AttackEnd = at(float64(n)/5000 + 30)
	r.meta.End = r.meta.AttackEnd
	writeJSON(t, filepath.Join(dir, rundir.MetaFile), r.meta)
	f, err := os.Create(filepath.Join(dir, rundir.AttemptsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var b []byte
	line := func(seq int64, try int, first, sent time.Time, code int, lat float64) {
		b = append(b[:0], `{"seq":`...)
		b = strconv.AppendInt(b, seq, 10)
		b = append(b, `,"api":"messaging","op":"send","client":"bench","attempt":`...)
		b = strconv.AppendInt(b, int64(try), 10)
		b = append(b, `,"intended":"`...)
		b = sent.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","sent":"`...)
		b = sent.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","first_sent":"`...)
		b = first.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","code":`...)
		b = strconv.AppendInt(b, int64(code), 10)
		b = append(b, `,"latency_s":`...)
		b = strconv.AppendFloat(b, lat, 'f', -1, 64)
		b = append(b, `,"bytes_out":265,"bytes_in":101,`...)
		switch code {
		case 202:
			b = append(b, `"outcome":"ok","class":"ok","tx_id":"tx-`...)
			b = strconv.AppendInt(b, seq, 10)
			b = append(b, `","state":"ACCEPTED","channel":"sms"}`...)
		case 500:
			b = append(b, `"outcome":"fail","class":"http_5xx"}`...)
		default:
			b = append(b, `"outcome":"unknown","class":"timeout"}`...)
		}
		b = append(b, '\n')
		w.Write(b)
	}
	for i := 1; i <= n; i++ {
		sent := at(float64(i) / 5000).UTC()
		lat := 0.0003 + float64(i%1009)/1e6
		switch {
		case i%2000 == 0:
			line(int64(i), 1, sent, sent, 0, 30+float64(i%997)/1e6)
		case i%500 == 0:
			line(int64(i), 1, sent, sent, 500, lat)
			line(int64(i), 2, sent, sent.Add(100*time.Millisecond), 202, lat)
		default:
			line(int64(i), 1, sent, sent, 202, lat)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkAnalyzeNoneBounded analyses a generated run with delivery none
// (MSGLOAD_BENCH_MESSAGES messages, 1,000,000 unless set; in
// MSGLOAD_BENCH_DIR when set, kept for `msgload report`) and reports its
// peak and live heap per message: what the analysis holds while it reads
// (the heap's objects sampled every 2 ms, less what was there before) and
// what it holds when done.
func BenchmarkAnalyzeNoneBounded(b *testing.B) { benchmarkHeapPerMessage(b, writeNoneRun) }

// BenchmarkAnalyzeCallbacks is BenchmarkAnalyzeNoneBounded for a run with
// callbacks (writeCallbacksRun): the figure the bounded analysis of such a
// run is to bring under 10 bytes a message (issue 23).
func BenchmarkAnalyzeCallbacks(b *testing.B) { benchmarkHeapPerMessage(b, writeCallbacksRun) }

// BenchmarkAnalyzeTruth is BenchmarkAnalyzeCallbacks for a run with the
// embedded simulator's ground truth (writeTruthRun).
func BenchmarkAnalyzeTruth(b *testing.B) { benchmarkHeapPerMessage(b, writeTruthRun) }

// writeTruthRun is writeCallbacksRun with truth.jsonl as the embedded
// simulator streams it: its limiter (10,000 a second) and a window record a
// second, then for each accepted message its callbacks (answered 200) and
// its message record tagged "<run>.<seq>" after them, line by line.
func writeTruthRun(t testing.TB, dir string, n int) {
	t.Helper()
	writeCallbacksRun(t, dir, n)
	f, err := os.Create(filepath.Join(dir, rundir.TruthStreamFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	put := func(rec rundir.TruthRecord) {
		if err := enc.Encode(rec); err != nil {
			t.Fatal(err)
		}
	}
	put(rundir.TruthRecord{Type: rundir.TruthRecRateLimit, RateLimit: &rundir.TruthRateLimit{Requests: 10_000, Window: rundir.Duration(time.Second), Algorithm: "fixed"}})
	for i := 1; i <= n; i++ {
		if i%5000 == 0 {
			start := at(float64(i-5000) / 5000).UTC()
			put(rundir.TruthRecord{Type: rundir.TruthRecWindow, Window: &rundir.TruthWindow{Client: "bench", Start: start, Accepted: 5000 - 5000/2000}})
		}
		if i%2000 == 0 {
			continue // timed out: never accepted
		}
		first := at(float64(i) / 5000).UTC()
		m := rundir.TruthMessage{API: rundir.APIMessaging, ID: "tx-" + strconv.Itoa(i), ExternalID: "test-run." + strconv.Itoa(i), Client: "bench", AcceptedAt: first, Sends: 1, Final: "DELIVERED"}
		if i%100 != 0 || i%500 == 0 {
			arrive := first.Add(500*time.Millisecond + time.Duration(i%1013)*time.Millisecond)
			m.Steps = []rundir.TruthStep{{Channel: "sms", State: "DELIVERED", Code: 200, Delay: rundir.Duration(arrive.Sub(first))}}
			for k := range 1 + b2i(i%50 == 0) {
				at := arrive.Add(time.Duration(k) * 200 * time.Millisecond)
				put(rundir.TruthRecord{Type: rundir.TruthRecCallback, Callback: &rundir.TruthCallback{ID: m.ID, Kind: rundir.KindCallback, State: "DELIVERED", Channel: "sms",
					Action: rundir.CallbackSent, Attempt: 1, At: at.Add(-time.Millisecond), Done: at, Status: 200}})
			}
		}
		put(rundir.TruthRecord{Type: rundir.TruthRecMessage, Message: &m})
	}
	put(rundir.TruthRecord{Type: rundir.TruthRecEnd})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// benchmarkHeapPerMessage analyses the run write makes (see
// BenchmarkAnalyzeNoneBounded) and reports its heap per message.
func benchmarkHeapPerMessage(b *testing.B, write func(testing.TB, string, int)) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("MSGLOAD_BENCH_MESSAGES")); err == nil && v > 0 {
		n = v
	}
	dir := os.Getenv("MSGLOAD_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.AttemptsFile)); err != nil {
		write(b, dir, n)
	}
	var peak, live uint64
	for b.Loop() {
		base := heapObjects()
		stop := make(chan struct{})
		done := make(chan uint64)
		go func() {
			var top uint64
			tick := time.NewTicker(2 * time.Millisecond)
			defer tick.Stop()
			for {
				top = max(top, heapObjects())
				select {
				case <-stop:
					done <- top
					return
				case <-tick.C:
				}
			}
		}()
		a, err := analyze(os.DirFS(dir), dir)
		if err != nil {
			b.Fatal(err)
		}
		close(stop)
		top := <-done
		peak = top - min(base, top)
		runtime.GC()
		live = heapObjects() - min(base, heapObjects())
		runtime.KeepAlive(a)
		if a.s.Requests.Messages != int64(n) {
			b.Fatalf("messages %d, want %d", a.s.Requests.Messages, n)
		}
	}
	b.ReportMetric(float64(peak)/float64(n), "peak-B/msg")
	b.ReportMetric(float64(live)/float64(n), "live-B/msg")
	b.ReportMetric(float64(peak), "peak-B")
}

// writeCallbacksRun is writeNoneRun with delivery via the sink (grace 10 s)
// and events.jsonl: a DELIVERED callback for every accepted message 0.5–1.5 s
// after its first send, but none for every 100th (lost), two for every 50th
// (a duplicate), written in the order they arrive, line by line.
func writeCallbacksRun(t testing.TB, dir string, n int) { writeDeliveryRun(t, dir, n, false) }

// BenchmarkAnalyzeReplies is BenchmarkAnalyzeCallbacks for a run whose
// messages get replies (writeRepliesRun): the replied ids are joined on
// disk, not held (replyjoin.go).
func BenchmarkAnalyzeReplies(b *testing.B) { benchmarkHeapPerMessage(b, writeRepliesRun) }

// writeRepliesRun is writeCallbacksRun with an incoming reply to 9 of 10
// accepted messages, quoting the txId, 1–3 s after the first send.
func writeRepliesRun(t testing.TB, dir string, n int) { writeDeliveryRun(t, dir, n, true) }

// writeDeliveryRun is writeCallbacksRun, with its replies when replies.
func writeDeliveryRun(t testing.TB, dir string, n int, replies bool) {
	t.Helper()
	writeNoneRun(t, dir, n)
	var m rundir.Meta
	b, err := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	m.Delivery = rundir.Delivery{Via: "sink", Grace: rundir.Duration(10 * time.Second)}
	m.End = m.AttackEnd.Add(10 * time.Second)
	writeJSON(t, filepath.Join(dir, rundir.MetaFile), m)
	f, err := os.Create(filepath.Join(dir, rundir.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	// Callbacks arrive up to 1.5 s after the send: a window of them sorted
	// by arrival before each is written (the file is in arrival order).
	var pending []rundir.Event
	flush := func(before time.Time) {
		slices.SortFunc(pending, func(x, y rundir.Event) int { return x.ReceivedAt.Compare(y.ReceivedAt) })
		k := 0
		for k < len(pending) && pending[k].ReceivedAt.Before(before) {
			line, _ := json.Marshal(pending[k])
			w.Write(append(line, '\n'))
			k++
		}
		pending = slices.Delete(pending, 0, k)
	}
	for i := 1; i <= n; i++ {
		if i%2000 == 0 || i%100 == 0 && i%500 != 0 {
			continue // timed out (not accepted), or lost
		}
		first := at(float64(i) / 5000).UTC()
		e := rundir.Event{Kind: rundir.KindCallback, Route: "/callback", API: rundir.APIMessaging,
			ReceivedAt: first.Add(500*time.Millisecond + time.Duration(i%1013)*time.Millisecond),
			Corr: &rundir.Correlation{Key: "tx-" + strconv.Itoa(i), Run: m.ID, Seq: int64(i), FirstSent: first,
				State: "DELIVERED", Channel: "sms", Terminal: true, Matched: true}}
		pending = append(pending, e)
		if i%50 == 0 {
			e.ReceivedAt = e.ReceivedAt.Add(200 * time.Millisecond)
			pending = append(pending, e)
		}
		if replies && i%10 != 0 {
			pending = append(pending, rundir.Event{Kind: rundir.KindIncoming, Route: "/incoming", API: rundir.APIMessaging,
				ReceivedAt: first.Add(time.Second + time.Duration(i%1999)*time.Millisecond),
				Corr:       &rundir.Correlation{Key: "in-" + strconv.Itoa(i), Channel: "sms", OutgoingTxID: "tx-" + strconv.Itoa(i), Matched: true}})
		}
		if i%5000 == 0 {
			flush(first)
		}
	}
	flush(time.Time{}.AddDate(9000, 0, 0))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// heapObjects is the bytes of the heap's objects, live and not yet collected.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
