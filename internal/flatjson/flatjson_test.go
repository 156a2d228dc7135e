package flatjson

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

type field struct{ key, value string }

// fields collects what Fields gives, taking every field.
func fields(b []byte) ([]field, bool) {
	var out []field
	ok := Fields(b, func(k, v []byte) bool {
		out = append(out, field{string(k), string(v)})
		return true
	})
	return out, ok
}

// jsonFields is encoding/json's view of a flat object: its keys and raw
// values in order, or false when b is not a valid object of scalars.
func jsonFields(b []byte) ([]field, bool) {
	if !json.Valid(b) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil || raw[0] == '{' || raw[0] == '[' {
			return nil, false
		}
		out = append(out, field{t.(string), string(raw)})
	}
	return out, true
}

func TestFields(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []field
		ok   bool
	}{
		{`{}`, nil, true},
		{` { } `, nil, true},
		{`{"a":"b"}`, []field{{"a", `"b"`}}, true},
		{"{ \"a\" :\t1 ,\n\"b\":true\r}", []field{{"a", "1"}, {"b", "true"}}, true},
		{`{"a":null,"a":"x"}`, []field{{"a", "null"}, {"a", `"x"`}}, true},
		{`{"a":"é✓"}`, []field{{"a", `"é✓"`}}, true},
		{`{"a":"b\"c"}`, nil, false},     // an escape
		{"{\"a\":\"b\tc\"}", nil, false}, // a control character
		{`{"a":{"b":1}}`, nil, false},    // nested
		{`{"a":[1]}`, nil, false},
		{`{"a":1,}`, nil, false},
		{`{"a":1}x`, nil, false},
		{`{"a":1 2}`, nil, false},
		{`{"a"}`, nil, false},
		{`{"a":}`, nil, false},
		{`{a:1}`, nil, false},
		{`[1]`, nil, false},
		{``, nil, false},
		{`{"a":1`, nil, false},
	} {
		got, ok := fields([]byte(tc.in))
		if ok != tc.ok || (ok && !equal(got, tc.want)) {
			t.Errorf("Fields(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	// f refusing a field ends the scan, false.
	calls := 0
	if Fields([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { calls++; return false }) || calls != 1 {
		t.Errorf("a refused field: %d calls", calls)
	}
}

func equal(a, b []field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzFields: whatever Fields takes whose scalar values are valid JSON, in
// valid UTF-8, is a valid JSON object to encoding/json, with the same keys and
// raw values in the same order.
func FuzzFields(f *testing.F) {
	for _, s := range []string{`{}`, `{"txId":"a","state":"ACCEPTED"}`, "{ \"a\" : 1 ,\"b\":null}", `{"a":"b\"c"}`, `{"a":{"b":1}}`, `{"a":1.5e3,"b":-0,"c":false}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := fields(b)
		if !ok || !utf8.Valid(b) {
			return // strings are bytes to Fields: UTF-8 is the caller's to check
		}
		for _, fl := range got {
			if !json.Valid([]byte(fl.value)) {
				return // a scalar Fields passes on for the caller to judge
			}
		}
		want, valid := jsonFields(b)
		if !valid || !equal(got, want) {
			t.Fatalf("Fields(%q) = %q; encoding/json: %q (valid %v)", b, got, want, valid)
		}
	})
}
