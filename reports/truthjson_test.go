package reports

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// agreeTruth checks that truthDecoder and json.Unmarshal give the same
// record and the same verdict (decodes or not) on line; it says whether the
// direct path took the line.
func agreeTruth(t testing.TB, d *truthDecoder, line []byte) bool {
	t.Helper()
	var want, got rundir.TruthRecord
	werr := json.Unmarshal(line, &want)
	fast := d.fast(line, &got)
	got = rundir.TruthRecord{}
	gerr := d.decode(line, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: json.Unmarshal error %v, truthDecoder error %v", line, werr, gerr)
	}
	if fast && werr != nil {
		t.Fatalf("%q: the direct path took a line json.Unmarshal refuses (%v)", line, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", line, got, want)
	}
	return fast
}

// The simulator's own lines (sim/truth.go writes them), one of each record.
var truthLines = []string{
	`{"type":"rate_limit","rate_limit":{"requests":100,"window":"1m0s","algorithm":"sliding","count_failures":true,"count_429":false}}`,
	`{"type":"window","window":{"client":"demo","start":"2026-11-26T16:28:00Z","accepted":100,"refused":3}}`,
	`{"type":"callback","callback":{"id":"f2c2fb56-28bd-4039-a65e-000000000030","kind":"callback","state":"DELIVERED","channel":"sms","action":"sent","attempt":1,"at":"2026-11-26T16:28:55.523137774Z","done":"2026-11-26T16:28:55.527039438Z","status":200,"due":"2026-11-26T16:28:55.522423527Z"}}`,
	`{"type":"callback","callback":{"id":"a","kind":"incoming","action":"dropped","attempt":2,"at":"2026-11-26T16:28:55.523137774+03:00"}}`,
	`{"type":"message","message":{"api":"messaging","id":"f2c2fb56-28bd-4039-a65e-000000000030","external_id":"20261126T162855Z-cb1000-930b12.49","client":"demo","accepted_at":"2026-11-26T16:28:55.497800083Z","sends":1,"steps":[{"channel":"sms","state":"DELIVERED","code":0,"delay":"24.970273ms"}],"final":"DELIVERED"}}`,
	`{"type":"message","message":{"api":"messaging","id":"x","client":"demo","accepted_at":"2026-11-26T16:28:55Z","sends":2,"steps":[{"channel":"viber","state":"EXPIRED","code":7,"delay":"1.5s"},{"channel":"sms","state":"DELIVERED","code":0,"delay":2.25}],"final":"DELIVERED","pending":"2026-11-26T16:29:00Z"}}`,
	`{"type":"message","message":{"api":"notify","id":"n","client":"c","accepted_at":"2026-11-26T16:28:55Z","sends":1,"steps":[],"final":""}}`,
	`{"type":"end"}`,
	`{"type":"end","truncated":true}`,
}

// TestDecodeTruthAgreesWithJSON: on the simulator's lines, on lines written
// by json.Marshal from random records, on hand-made edge cases and on
// thousands of lines changed byte by byte, the direct path gives
// json.Unmarshal's record and verdict (a malformed line is reported as
// before), and it takes every call and message line as the simulator writes
// them.
func TestDecodeTruthAgreesWithJSON(t *testing.T) {
	d := &truthDecoder{}
	for i, l := range truthLines {
		fast := agreeTruth(t, d, []byte(l))
		if want := i >= 2 && i <= 6; fast != want {
			t.Errorf("%s: direct path %v, want %v", l, fast, want)
		}
	}
	extra := []string{
		`{"type":"callback","callback":{}}`, `{"type":"callback","callback":{"id":"a","id":"b"}}`,
		`{"type":"callback","callback":{"ID":"a"}}`, `{"type":"callback","callback":{"id":null}}`,
		`{"type":"callback","callback":{"id":"a"},"type":"end"}`, `{"type":"callback","callback":{"id":"a"} }`,
		`{"type":"callback","callback":{"attempt":1.0}}`, `{"type":"callback","callback":{"at":"2026-13-01T00:00:00Z"}}`,
		`{"type":"callback","callback":{"id":"a\"b"}}`, "{\"type\":\"callback\",\"callback\":{\"id\":\"\xff\"}}",
		`{"type":"message","message":{"steps":[{"delay":"1s"}],"steps":[{"state":"X"}]}}`,
		`{"type":"message","message":{"steps":[{"delay":"1s"},]}}`, `{"type":"message","message":{"steps":[,{"delay":"1s"}]}}`,
		`{"type":"message","message":{"steps":[[]]}}`, `{"type":"message","message":{"steps":[1]}}`,
		`{"type":"message","message":{"steps":null}}`, `{"type":"message","message":{"steps": [ {"code":1} , {"code":2} ] }}`,
		`{"type":"message","message":{"steps":[{"delay":1e400}]}}`, `{"type":"message","message":{"steps":[{"delay":"1x"}]}}`,
		`{"type":"message","message":{"steps":[{"channel":"]"}]}}`, `{"type":"message","message":{"steps":[{"channel":"}"}],"id":"["}}`,
		`{"type":"message","message":{"id":[]}}`, `{"type":"message","message":{"steps":[]1}}`, `{"type":"message","message":{[]:1}}`,
		`{"type":"message","message":{"sends":100,"steps":[]}}`, `{"type":"message","message":{"steps":[{"code":-0}]}}`,
		`{"type":"message","message":{"steps":[{"x":{}}]}}`, `{"type":"message","message":{"steps":[{}]}}`,
		`{"type":"message","message":{"steps":[{"delay":"1s"}]`, `{"type":"message","message":{"steps":[{"delay":"1s"}}}`,
	}
	for _, l := range extra {
		agreeTruth(t, d, []byte(l))
	}
	rng := rand.New(rand.NewPCG(23, 3))
	for range 2000 {
		line, err := json.Marshal(randTruthRecord(rng))
		if err != nil {
			t.Fatal(err)
		}
		agreeTruth(t, d, line)
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
			agreeTruth(t, d, m)
		}
	}
}

func randTruthRecord(rng *rand.Rand) rundir.TruthRecord {
	strs := []string{"", "sms", "DELIVERED", "sent", "callback", "a]b", "c}d", "é✓", `q"uote`, "x[y"}
	s := func() string { return strs[rng.IntN(len(strs))] }
	tm := func() time.Time {
		if rng.IntN(4) == 0 {
			return time.Time{}
		}
		return time.Unix(1_700_000_000+rng.Int64N(1e8), rng.Int64N(1e9)).UTC()
	}
	if rng.IntN(2) == 0 {
		return rundir.TruthRecord{Type: rundir.TruthRecCallback, Callback: &rundir.TruthCallback{
			ID: s(), Kind: s(), State: s(), Channel: s(), Action: s(), Attempt: rng.IntN(4),
			At: tm(), Done: tm(), Status: []int{0, 200, 500}[rng.IntN(3)], Due: tm()}}
	}
	m := &rundir.TruthMessage{API: s(), ID: s(), ExternalID: s(), Client: s(), AcceptedAt: tm(), Sends: rng.IntN(3), Final: s(), Pending: tm()}
	for range rng.IntN(4) {
		m.Steps = append(m.Steps, rundir.TruthStep{Channel: s(), State: s(), Code: rng.IntN(9), Delay: rundir.Duration(rng.Int64N(1e11))})
	}
	return rundir.TruthRecord{Type: rundir.TruthRecMessage, Message: m}
}

// FuzzDecodeTruth: any line, the direct path agrees with json.Unmarshal
// (seeds: testdata/fuzz/FuzzDecodeTruth and the simulator's lines).
func FuzzDecodeTruth(f *testing.F) {
	for _, l := range truthLines {
		f.Add([]byte(l))
	}
	d := &truthDecoder{}
	f.Fuzz(func(t *testing.T, line []byte) { agreeTruth(t, d, line) })
}
