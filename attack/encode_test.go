package attack

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestAppendAttemptMatchesJSON: the hand-written encoder gives json.Marshal's
// bytes, for an attempt with every field set (so a field added to
// rundir.Attempt and unknown here fails the test) and for a sparse one.
func TestAppendAttemptMatchesJSON(t *testing.T) {
	if !fastAttempt {
		t.Fatalf("rundir.Attempt has %d fields, appendAttempt knows %d: teach it the new ones",
			reflect.TypeFor[rundir.Attempt]().NumField(), attemptFields)
	}
	full := rundir.Attempt{}
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("v<&>\"\\\n\t\x01é\u2028" + v.Type().Field(i).Name)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Float64:
			f.SetFloat(0.000123456789)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Struct:
			f.Set(reflect.ValueOf(time.Date(2026, 11, 23, 3, 4, 5, 6789, time.UTC).Add(time.Duration(i) * time.Second)))
		default:
			t.Fatalf("field %s: kind %s not covered", v.Type().Field(i).Name, f.Kind())
		}
	}
	for _, tc := range []struct {
		name string
		a    rundir.Attempt
	}{
		{"every field", full},                             // all keys, escapes, times, floats
		{"sparse", rundir.Attempt{Seq: 1}},                // omitempty fields left out, zero times
		{"tiny latency", rundir.Attempt{Latency: 1e-9}},   // exponent form
		{"huge latency", rundir.Attempt{Latency: 1e22}},   // exponent form, positive
		{"invalid utf8", rundir.Attempt{Error: "a\xffb"}}, // replaced as json does
	} {
		want, err := json.Marshal(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendAttempt(nil, &tc.a); string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, want)
		}
	}
}

func BenchmarkEncodeAttempt(b *testing.B) {
	now := time.Now()
	a := &rundir.Attempt{Seq: 123456, API: "messaging", Op: "send", Client: "demo", Attempt: 1, Intended: now, Sent: now,
		FirstSent: now, Code: 200, Latency: 0.00123, BytesOut: 300, BytesIn: 120, Outcome: "ok", Class: "ok",
		TxID: "3fa85f64-5717-4562-b3fc-2c963f66afa6", State: "ACCEPTED", Channel: "sms"}
	b.Run("append", func(b *testing.B) {
		buf := make([]byte, 0, 512)
		for b.Loop() {
			buf, _ = encodeAttempt(buf[:0], a)
		}
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(a)
		}
	})
}
