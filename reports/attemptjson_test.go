package reports

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// agree checks that decodeAttempt and json.Unmarshal give the same value and
// the same verdict (decodes or not) on line; it says whether the direct path
// took the line.
func agree(t testing.TB, line []byte) bool {
	t.Helper()
	var want, got rundir.Attempt
	werr := json.Unmarshal(line, &want)
	in := &interner{}
	fast := fastAttempt(in, line, &got)
	got = rundir.Attempt{}
	gerr := decodeAttempt(in, line, &got) // the interner already holds this line's strings
	if werr == nil {
		again := rundir.Attempt{}
		if err := decodeAttempt(nil, line, &again); err != nil || !reflect.DeepEqual(again, want) {
			t.Fatalf("%q: without an interner: %v %+v", line, err, again)
		}
	}
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: json.Unmarshal error %v, decodeAttempt error %v", line, werr, gerr)
	}
	if fast && werr != nil {
		t.Fatalf("%q: the direct path took a line json.Unmarshal refuses (%v)", line, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", line, got, want)
	}
	// The census's reading (decodeSeq) never misses a line that decodes nor
	// reads another sequence from it; it may take one that does not.
	var seq rundir.Attempt
	if serr := decodeSeq(&interner{}, line, &seq); werr == nil && (serr != nil || seq.Seq != want.Seq) {
		t.Fatalf("%q: decodeSeq gave seq %d (%v), json.Unmarshal %d", line, seq.Seq, serr, want.Seq)
	}
	return fast
}

func randAttempt(rng *rand.Rand) rundir.Attempt {
	strs := []string{"", "send", "messaging", "ok", "ACCEPTED", "00000000-0000-0000-0000-000000000001", "héllo ✓", "\x7f"}
	escaped := []string{`quote " inside`, `back\slash`, "tab\there", "<html>&", "line\nbreak", "\u2028"}
	s := func() string {
		if rng.IntN(100) == 0 { // one field in 100 needs an escape
			return escaped[rng.IntN(len(escaped))]
		}
		return strs[rng.IntN(len(strs))]
	}
	zones := []*time.Location{time.UTC, time.FixedZone("", 3*3600), time.FixedZone("", -5*3600-1800)}
	tm := func() time.Time {
		if rng.IntN(5) == 0 {
			return time.Time{}
		}
		return time.Unix(1_700_000_000+rng.Int64N(1e8), rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))])
	}
	floats := []float64{0, 1, 0.000312, 1e-7, 123456.789, 2.5e21, -0.5, math.SmallestNonzeroFloat64, math.MaxFloat64}
	return rundir.Attempt{
		Seq: rng.Int64N(1e6) - 10, API: s(), Op: s(), Client: s(), Attempt: rng.IntN(5), Probe: s(),
		Intended: tm(), Sent: tm(), FirstSent: tm(), Code: []int{0, 200, 202, 429, 503}[rng.IntN(5)],
		Latency: floats[rng.IntN(len(floats))] * rng.Float64(), BytesOut: rng.Int64N(1000), BytesIn: rng.Int64N(1000),
		Outcome: s(), Class: s(), Error: s(), TxID: s(), State: s(), Channel: s(), NotificationID: s(),
		ExternalID: s(), RetryAfter: s(), RateLimit: s(), RateLimitPolicy: s(),
		Mismatch: rng.IntN(2) == 0, Capped: rng.IntN(2) == 0, GaveUp: s(),
	}
}

// TestDecodeAttemptAgreesWithJSON: on attempts as json.Marshal writes them
// (escapes, non-ASCII, zones, every field) and on thousands of lines broken or
// changed byte by byte, the direct path gives json.Unmarshal's value and
// verdict, and it takes most well-formed lines.
func TestDecodeAttemptAgreesWithJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 1))
	fast, total := 0, 0
	extra := []string{
		`{}`, `{"seq":1}`, `{"seq":01}`, `{"seq":-0}`, `{"seq":1.0}`, `{"seq":1e3}`, `{"seq":99999999999999999999}`,
		`{"latency_s":1e400}`, `{"latency_s":.5}`, `{"latency_s":-1.5E-3}`, `{"latency_s":1.}`, `{"latency_s":"1"}`,
		`{"SEQ":3}`, `{"seq":1,"seq":2}`, `{"seq":1,}`, `{"seq":1}}`, `{"seq":1} `, ` {"seq":1}`, `{"seq" :1}`,
		`{"sent":"2026-11-23T02:00:00Z"}`, `{"sent":"2026-11-23T02:00:00"}`, `{"sent":null}`, `{"sent":"2026-13-23T02:00:00Z"}`,
		`{"api":null}`, `{"api":"a\"b"}`, `{"api":"\u00e9"}`, "{\"api\":\"\xff\"}", "{\"api\":\"a\tb\"}", `{"mismatch":true}`,
		`{"mismatch":1}`, `{"capped":false}`, `{"unknown":{"a":[1,2]}}`, `{"api":"x"`, `{"api":}`, `{"":1}`, `{"seq":-}`,
		`{"attempt":2,"code":429,"retry_after":"7"}`, `{"bytes_in":-5}`, `{"latency_s":0.000312,"bytes_out":265}`,
		`{"Seq":4}`, `{"sEq":5,"seq":6}`, `{"seq":6,"sEq":5}`, "{\"\u017feq\":7}", `{"s\u0065q":8}`, `{"seq":null}`, `{"seq":"9"}`,
		`{"seq":10,"code":"x"}`, `{"seq":11,"sent":"yesterday"}`, `{"seqs":12}`, `{"se":13}`,
	}
	for _, l := range extra {
		agree(t, []byte(l))
	}
	for range 3000 {
		a := randAttempt(rng)
		line, err := json.Marshal(a)
		if err != nil {
			continue // a float json cannot write
		}
		total++
		if agree(t, line) {
			fast++
		}
		for range 5 { // a byte changed, dropped or doubled
			m := []byte(string(line))
			i := rng.IntN(len(m))
			switch rng.IntN(3) {
			case 0:
				m[i] = `{}[]":,.-+0123456789eE\ atrufnl`[rng.IntN(31)]
			case 1:
				m = append(m[:i], m[i+1:]...)
			default:
				m = append(m[:i+1], m[i:]...)
			}
			agree(t, m)
		}
	}
	if fast < total/3 {
		t.Errorf("the direct path took %d of %d well-formed lines: it is not what reads them", fast, total)
	}
	// The attacker's own lines (compact, no escapes) all go the direct way.
	line := `{"seq":16,"api":"messaging","op":"send","client":"bench","attempt":1,"intended":"2026-11-23T15:36:16.020511443Z","sent":"2026-11-23T15:36:16.029209099Z","first_sent":"2026-11-23T15:36:16.029186637Z","code":200,"latency_s":0.033071988,"bytes_out":265,"bytes_in":101,"outcome":"ok","class":"ok","tx_id":"00000000-0000-0000-0000-000000300005","state":"ACCEPTED","channel":"sms"}`
	if !agree(t, []byte(line)) {
		t.Errorf("an attempt line as the attacker writes it did not take the direct path")
	}
	if !strings.Contains(line, `"capped"`) && !agree(t, []byte(strings.TrimSuffix(line, "}")+`,"mismatch":true,"capped":true,"gave_up":"stopped"}`)) {
		t.Errorf("the attacker's optional fields did not take the direct path")
	}
}

// FuzzDecodeAttempt: any line, the direct path agrees with json.Unmarshal.
func FuzzDecodeAttempt(f *testing.F) {
	f.Add([]byte(`{"seq":16,"api":"messaging","op":"send","attempt":1,"sent":"2026-11-23T15:36:16.029209099Z","code":200,"latency_s":0.033071988}`))
	f.Add([]byte(`{"seq":1,"seq":2,"mismatch":true}`))
	f.Fuzz(func(t *testing.T, line []byte) { agree(t, line) })
}

// TestDecodeAttemptsShareInterner: lines decoded one after the other with
// one interner (as a report reads attempts.jsonl), whose interned fields
// repeat, change and come back, each decode to what json.Unmarshal gives
// that line: the value remembered from the line before is never carried
// into one that differs.
func TestDecodeAttemptsShareInterner(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 1))
	in := &interner{}
	vals := []string{"", "send", "sénd", "ok", "ACCEPTED", "sms", "x\x7f"}
	for i := range 5000 {
		a := randAttempt(rng)
		if rng.IntN(3) > 0 { // the same values as many lines before
			v := func() string { return vals[rng.IntN(len(vals))] }
			a.API, a.Op, a.Client, a.Probe, a.Outcome, a.Class, a.State, a.Channel, a.GaveUp = v(), v(), v(), v(), v(), v(), v(), v(), v()
		}
		line, err := json.Marshal(a)
		if err != nil {
			continue
		}
		var want, got rundir.Attempt
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		if err := decodeAttempt(in, line, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d %s:\n got %+v (%v)\nwant %+v", i, line, got, err, want)
		}
	}
}

// BenchmarkDecodeAttempt: one attempt line as the attacker writes it,
// decoded with an interner that saw the line before (a report's reading).
func BenchmarkDecodeAttempt(b *testing.B) {
	line := []byte(`{"seq":16,"api":"messaging","op":"send","client":"bench","attempt":1,"intended":"2026-11-23T15:36:16.020511443Z","sent":"2026-11-23T15:36:16.029209099Z","first_sent":"2026-11-23T15:36:16.029186637Z","code":200,"latency_s":0.033071988,"bytes_out":265,"bytes_in":101,"outcome":"ok","class":"ok","tx_id":"00000000-0000-0000-0000-000000300005","state":"ACCEPTED","channel":"sms"}`)
	var in interner
	b.ReportAllocs()
	for b.Loop() {
		var a rundir.Attempt
		if err := decodeAttempt(&in, line, &a); err != nil {
			b.Fatal(err)
		}
	}
}
