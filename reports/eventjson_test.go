package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// agreeEvent checks that eventDecoder and json.Unmarshal give the same event
// and the same verdict (decodes or not) on line; it says whether the direct
// path took the line.
func agreeEvent(t testing.TB, d *eventDecoder, line []byte) bool {
	t.Helper()
	var want, got rundir.Event
	werr := json.Unmarshal(line, &want)
	fast := d.fast(line, &got)
	got = rundir.Event{Kind: "left over"} // decode starts from nothing, whatever it is given
	gerr := d.decode(line, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: json.Unmarshal error %v, eventDecoder error %v", line, werr, gerr)
	}
	if fast && werr != nil {
		t.Fatalf("%q: the direct path took a line json.Unmarshal refuses (%v)", line, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v %#v %#v\nwant %#v %#v %#v", line, got, got.Corr, got.Sig, want, want.Corr, want.Sig)
	}
	return fast
}

// sinkLines are lines in the sink's form (sink/encode.go) of what the run
// directories in testdata do not hold: a call refused by authentication, a
// signed webhook, a signature that does not parse, calls refused and held on
// purpose, a malformed body with escapes, a time with an offset.
var sinkLines = []string{
	`{"kind":"unauthorized","route":"/webhook","received_at":"2026-11-26T19:00:16.573905072Z","api":"notify","reason":"unauthorized: standard-webhooks: signature does not match"}`,
	`{"kind":"webhook","route":"/webhook","received_at":"2026-11-26T19:00:16.57Z","api":"notify","payload":{"eventId":"e","notificationId":"n","externalId":"ml.r.1.1795719615613641081","status":"DELIVERED","errorCode":0,"updatedAt":"2026-11-26T19:00:16.5Z"},"corr":{"key":"ml.r.1.1795719615613641081","run":"r","seq":1,"first_sent":"2026-11-26T19:00:15.613641081Z","state":"DELIVERED","terminal":true,"matched":true,"latency_s":0.960263991},"sig":{"scheme":"standard-webhooks-v1","skew_s":-0.25,"verified":"yes"}}`,
	`{"kind":"webhook","route":"/webhook","received_at":"2026-11-26T19:00:16Z","api":"notify","payload":{"eventId":"e"},"corr":{"matched":false},"sig":{"scheme":"standard-webhooks-v1","skew_s":0,"problem":"webhook-timestamp: not Unix seconds"}}`,
	`{"kind":"callback","route":"/callback","received_at":"2026-11-26T19:00:16Z","api":"messaging","payload":{"txId":"t"},"corr":{"key":"t","run":"r","part":"p2","seq":7,"state":"SENT","channel":"sms","matched":true,"duplicate":true,"redelivered":true},"answered":503,"delayed_s":2.5}`,
	`{"kind":"malformed","route":"/incoming","received_at":"2026-11-26T19:00:16+03:00","api":"messaging","raw":"a\"b\\c\n\u0000\ufffd\u2028","reason":"invalid character 'a' looking for beginning of value"}`,
	`{"kind":"callback","route":"/callback","received_at":"2026-11-26T19:00:16.1Z","corr":{"latency_s":1e-9,"matched":false,"outgoing_tx_id":"o"}}`,
}

// testdataEventLines is every line of the run directories' events.jsonl in
// testdata (callbacks with failover steps, webhooks, incoming replies, a
// malformed body).
func testdataEventLines(t testing.TB) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "runs", "*", rundir.EventsFile))
	if err != nil || len(files) == 0 {
		t.Fatalf("no events.jsonl in testdata/runs (%v)", err)
	}
	var lines [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for l := range bytes.Lines(b) {
			if l = bytes.TrimSpace(l); len(l) > 0 {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// TestDecodeEventAgreesWithJSON: on every line of the run directories in
// testdata, on the sink's other lines, on hand-made edge cases and on lines
// written by json.Marshal from random events and changed byte by byte, the
// direct path gives json.Unmarshal's event and verdict (a malformed line is
// reported as before), and it takes every line as the sink writes it but
// one whose strings have escapes.
func TestDecodeEventAgreesWithJSON(t *testing.T) {
	d := &eventDecoder{}
	kinds := map[string]int{}
	for _, l := range testdataEventLines(t) {
		if !agreeEvent(t, d, l) {
			t.Errorf("%s: not read directly", l)
		}
		var e rundir.Event
		if json.Unmarshal(l, &e) == nil {
			kinds[e.Kind]++
		}
	}
	for _, k := range []string{rundir.KindCallback, rundir.KindWebhook, rundir.KindIncoming, rundir.KindMalformed} {
		if kinds[k] == 0 {
			t.Errorf("no %s line in testdata/runs: %v", k, kinds)
		}
	}
	for i, l := range sinkLines {
		if fast, want := agreeEvent(t, d, []byte(l)), i != 4; fast != want {
			t.Errorf("%s: direct path %v, want %v", l, fast, want)
		}
	}
	for _, l := range eventEdgeLines {
		agreeEvent(t, d, []byte(l))
	}
	rng := rand.New(rand.NewPCG(23, 7))
	for range 2000 {
		line, err := json.Marshal(randEvent(rng))
		if err != nil {
			t.Fatal(err)
		}
		agreeEvent(t, d, line)
		for range 5 {
			agreeEvent(t, d, mutateLine(rng, line))
		}
	}
}

// eventEdgeLines are lines the sink does not write, each of which one rule
// of json.Unmarshal decides.
var eventEdgeLines = []string{
	`{}`, ` { "kind" : "callback" } `, `{"kind":"a","kind":"b"}`, `{"KIND":"a"}`, `{"Kind":"a","kind":"b"}`,
	`{"kind":null}`, `{"kind":"a\"b"}`, `{"kind":"\u0061"}`, "{\"kind\":\"\xff\"}", `{"kin\u0064":"a"}`,
	`{"other":{"a":[1,2,{"b":null}]},"kind":"a"}`, `{"ſig":{}}`, `{"\u212aind":"x"}`, "{\"\xffx\":1}",
	`{"received_at":"2026-13-01T00:00:00Z"}`, `{"received_at":null}`, `{"received_at":"2026-11-26T19:00:16.123456789+05:30"}`,
	`{"payload":null}`, `{"payload":"x"}`, `{"payload":[]}`, `{"payload":1.5e3}`, `{"payload":{"a":"\ud800"}}`,
	`{"payload": { "a" : [ 1 , { } ] } }`, `{"payload":{"a":01}}`, `{"payload":{"a":1.}}`, `{"payload":{"a":-}}`,
	`{"payload":{"a":tru}}`, `{"payload":{"a":"\x"}}`, `{"payload":{"a":"\u12"}}`, `{"payload":{"a" 1}}`,
	`{"payload":{"a":1,}}`, `{"payload":[1,]}`, `{"payload":{,}}`, `{"payload":{"a":1}`, `{"payload":{"a":1}}}`,
	`{"payload":{1:2}}`, `{"payload":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
	`{"corr":null}`, `{"corr":{}}`, `{"corr":[]}`, `{"corr":{"seq":1.0}}`, `{"corr":{"seq":9223372036854775808}}`,
	`{"corr":{"seq":-0}}`, `{"corr":{"Seq":1}}`, `{"corr":{"seq":1,"seq":2}}`, `{"corr":{"key":"a"},"corr":{"run":"b"}}`,
	`{"corr":{"matched":1}}`, `{"corr":{"matched":null}}`, `{"corr":{"x":[1]}}`, `{"corr":{"x":1,"terminal":true}}`,
	`{"corr":{"latency_s":1e400}}`, `{"corr":{"first_sent":"x"}}`, `{"corr":{"key":"a\"b"}}`,
	`{"sig":null}`, `{"sig":{"scheme":"s","skew_s":"1"}}`, `{"sig":{"skew_s":-1e-7,"verified":"no"}}`, `{"sig":{"SCHEME":"s"}}`,
	`{"answered":503.0}`, `{"answered":-1}`, `{"answered":99999999999999999999}`, `{"delayed_s":1e-7}`, `{"delayed_s":"1"}`,
	`{"raw":"plain","reason":"why"}`, `{"raw":5}`, `[]`, `{"kind":"a"} x`, `{"kind":"a"`, `{"kind" "a"}`, `{"kind":}`,
}

// randEvent is an event with its fields drawn from values that stress the
// encoding (quotes, line separators, other scripts, offsets, tiny floats).
func randEvent(rng *rand.Rand) rundir.Event {
	strs := []string{"", "sms", "DELIVERED", "callback", "/callback", `q"uote`, "é✓", "a\u2028b", "<&>", "x\\y", "run-1"}
	s := func() string { return strs[rng.IntN(len(strs))] }
	tm := func() time.Time {
		if rng.IntN(4) == 0 {
			return time.Time{}
		}
		t := time.Unix(1_700_000_000+rng.Int64N(1e8), rng.Int64N(1e9)).UTC()
		if rng.IntN(4) == 0 {
			t = t.In(time.FixedZone("", 3600*(rng.IntN(25)-12)))
		}
		return t
	}
	f := func() float64 { return []float64{0, 1e-9, 0.5, -0.25, 3e21, 1.000000001}[rng.IntN(6)] }
	payloads := []string{"", `{"txId":"t","trackData":{"msgload_seq":"1"},"error":{"code":0}}`, `"x"`, `[]`, `{"t":"a\"b"}`, `1e5`, `{"a":[1,{"b":[null,true]}]}`}
	e := rundir.Event{Kind: s(), Route: s(), ReceivedAt: tm(), API: s(), Raw: s(), Reason: s(), Answered: []int{0, 200, 503}[rng.IntN(3)], Delayed: f()}
	if p := payloads[rng.IntN(len(payloads))]; p != "" {
		e.Payload = json.RawMessage(p)
	}
	if rng.IntN(4) > 0 {
		e.Corr = &rundir.Correlation{Key: s(), Run: s(), Part: s(), Seq: rng.Int64N(5), FirstSent: tm(), State: s(), Channel: s(),
			Terminal: rng.IntN(2) == 0, Matched: rng.IntN(2) == 0, Duplicate: rng.IntN(2) == 0, Redelivered: rng.IntN(2) == 0,
			Latency: f(), FailoverStep: rng.IntN(2) == 0, OutgoingTxID: s()}
	}
	if rng.IntN(3) == 0 {
		e.Sig = &rundir.Signature{Scheme: s(), Skew: f(), Verified: s(), Problem: s()}
	}
	return e
}

// mutateLine is line with a byte changed, dropped or doubled.
func mutateLine(rng *rand.Rand, line []byte) []byte {
	m := []byte(string(line))
	i := rng.IntN(len(m))
	switch rng.IntN(3) {
	case 0:
		m[i] = `{}[]":,.-+0123456789eE\ atrufnlKS`[rng.IntN(33)]
	case 1:
		m = append(m[:i], m[i+1:]...)
	default:
		m = append(m[:i+1], m[i:]...)
	}
	return m
}

// FuzzDecodeEvent: any line, the direct path agrees with json.Unmarshal
// (seeds: testdata/fuzz/FuzzDecodeEvent, real lines of the run directories in
// testdata and of the sink's other records, and the edge cases above).
func FuzzDecodeEvent(f *testing.F) {
	for _, l := range sinkLines {
		f.Add([]byte(l))
	}
	for _, l := range eventEdgeLines {
		f.Add([]byte(l))
	}
	d := &eventDecoder{}
	f.Fuzz(func(t *testing.T, line []byte) { agreeEvent(t, d, line) })
}

// callbackLine is a callback as the sink writes it for message i of a run
// with a chain (the shape of most lines of a run with callbacks).
func callbackLine(i int) string {
	id := fmt.Sprintf("59b6b316-5511-4125-aded-%012d", i)
	return fmt.Sprintf(`{"kind":"callback","route":"/callback","received_at":"2026-11-26T19:00:16.573905072Z","api":"messaging","payload":{"txId":"%s","updatedAt":"2026-11-26T19:00:16.283828Z","state":"NOT_DELIVERED","channel":"sms","trackData":{"msgload_run":"20261126T190015Z-oracle-31-fb84d0","msgload_seq":"%d","msgload_sent":"1795719615613641081","msgload_chain":"sms:DELIVERED,viber"},"error":{"code":6,"message":"Subscriber unreachable"}},"corr":{"key":"%s","run":"20261126T190015Z-oracle-31-fb84d0","seq":%d,"first_sent":"2026-11-26T19:00:15.613641081Z","state":"NOT_DELIVERED","channel":"sms","matched":true,"latency_s":0.960263991,"failover_step":true}}`, id, i+1, id, i+1)
}

// TestEventReadAllocatesLittle: reading events.jsonl allocates about what
// the analysis keeps of a callback — its txId — not an event, its payload,
// its correlation and every string (issue 23: the callbacks' reflection was
// 1.7 of the 3.5 GB of garbage of a report on a 10-minute run).
func TestEventReadAllocatesLittle(t *testing.T) {
	const n = 2_000
	dir := callbacksDir(t, n)
	lines := 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := readEventsFile(os.DirFS(dir), func(e rundir.Event) error {
		if e.Corr != nil && e.Corr.Seq > 0 && len(e.Payload) > 0 {
			lines++
		}
		return nil
	}, nil)
	runtime.ReadMemStats(&after)
	if err != nil || lines != n {
		t.Fatalf("read %d callbacks (%v): want %d", lines, err, n)
	}
	// The txId: 48 bytes (36, rounded up to a size class); the line
	// reader's buffer (64 KiB) once.
	perLine := float64(after.TotalAlloc-before.TotalAlloc-1<<16) / float64(n)
	if perLine > 100 {
		t.Errorf("reading events.jsonl allocated %.0f bytes a line: want at most 100 (the txId)", perLine)
	}
}

// callbacksDir is a directory whose events.jsonl holds n callbackLines.
func callbacksDir(t testing.TB, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		b.WriteString(callbackLine(i) + "\n")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.EventsFile), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestEventFeedAllocatesLittle: the feed a run analysed in passes reads its
// events through (eventFeed) allocates no more a line than reading them
// does: an event handed on is not copied to the heap.
func TestEventFeedAllocatesLittle(t *testing.T) {
	const n = 2_000
	a := &analyzer{fsys: os.DirFS(callbacksDir(t, n))}
	lines := 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f := a.openEvents()
	f.until(math.MaxInt64, func(e *rundir.Event) {
		if e.Corr != nil && e.Corr.Seq > 0 {
			lines++
		}
	})
	err := f.close()
	runtime.ReadMemStats(&after)
	if err != nil || lines != n {
		t.Fatalf("read %d callbacks (%v): want %d", lines, err, n)
	}
	perLine := float64(after.TotalAlloc-before.TotalAlloc-1<<16) / float64(n)
	if perLine > 100 {
		t.Errorf("the feed of events.jsonl allocated %.0f bytes a line: want at most 100 (the txId)", perLine)
	}
}

// BenchmarkDecodeEvent: one callback line, through the decoder and through
// json.Unmarshal, into one event zeroed a line as a reading does.
func BenchmarkDecodeEvent(b *testing.B) {
	line := []byte(callbackLine(30))
	b.Run("direct", func(b *testing.B) {
		d := &eventDecoder{}
		var e rundir.Event // one per reading, as rundir.DecodeJSONLFunc has
		b.ReportAllocs()
		for b.Loop() {
			e = rundir.Event{}
			if err := d.decode(line, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		var e rundir.Event
		b.ReportAllocs()
		for b.Loop() {
			e = rundir.Event{}
			if err := json.Unmarshal(line, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}
