package rundir

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeJSONLLinesLongerThanTheBuffer: lines read in place and lines longer
// than the reader's 64 KiB buffer (gathered) decode alike, in order, with their
// line numbers; each value is decoded afresh (no field of one line leaks into
// the next, no value shares memory with a later one).
func TestDecodeJSONLLinesLongerThanTheBuffer(t *testing.T) {
	big := strings.Repeat("x", 200_000)
	events := []Event{
		{Kind: KindCallback, Payload: json.RawMessage(`{"a":1}`), Corr: &Correlation{Seq: 1, State: "DELIVERED"}},
		{Kind: KindMalformed, Raw: big, Reason: "too long"},
		{Kind: KindIncoming},
		{Kind: KindWebhook, Payload: json.RawMessage(`{"b":"` + big + `"}`), Answered: 503},
		{Kind: KindCallback, Corr: &Correlation{Seq: 2}},
	}
	var in strings.Builder
	for i, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
		in.WriteString("\n")
		if i == 1 {
			in.WriteString(`{"kind":` + big + "\n") // a long bad line: line 3
		}
	}
	in.WriteString(`{"kind":"callback","raw":"` + big) // a long truncated last line: line 7
	var got []Event
	var bad []int
	err := DecodeJSONL(strings.NewReader(in.String()), func(e Event) error { got = append(got, e); return nil },
		func(line int, _ error) { bad = append(bad, line) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(bad, []int{3, 7}) {
		t.Errorf("bad lines %v, want [3 7]", bad)
	}
	if !reflect.DeepEqual(got, events) {
		t.Fatalf("decoded %d events, not the %d written (or not the same)", len(got), len(events))
	}
	got[0].Payload[1] = 'X' // a value must not share the memory of the next
	if string(got[3].Payload) != `{"b":"`+big+`"}` || got[2].Corr != nil || got[2].Payload != nil {
		t.Errorf("values share memory or fields leaked between lines")
	}
}
