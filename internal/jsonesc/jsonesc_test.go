package jsonesc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// cases holds strings on every branch: each escape, the HTML characters,
// U+2028/2029 in valid and in invalid strings, truncated and overlong
// sequences, surrogates, and escapes at the start and end of a string.
var cases = []string{
	"", "plain", "q\"b\\s", "\"", "\\",
	"ctl\x00\x01\x07\b\t\n\v\f\r\x0e\x1f\x7f",
	"<script>a&b</script>", "&", "<", ">",
	"ж😀 текст", "日本語", "\u2028", "\u2029", "a\u2028b\u2029c", "\u2027\u202a",
	"\xe2", "\xe2\x80", "\xe2\x80\xa8\xff", "x\xe2\x80", "\xe2\x82\xac", // € shares U+2028's lead byte
	"bad\xffutf8", "\xff\xfe", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x9f\x98",
	"\x80", "ok\xc3", "\xc3(", "\u2028\xff<",
	strings.Repeat("long text ", 100),
}

func marshal(t testing.TB, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("json.Marshal(%q): %v", s, err)
	}
	return string(b)
}

// check compares every entry point, for strings and byte slices, with
// json.Marshal.
func check(t testing.TB, s string) {
	t.Helper()
	want := marshal(t, s)
	prefix := []byte("prefix")
	for name, got := range map[string][]byte{
		"Append(string)":      Append(nil, s),
		"Append([]byte)":      Append(nil, []byte(s)),
		"AppendInner(string)": append(append([]byte{'"'}, AppendInner(nil, s)...), '"'),
		"AppendInner([]byte)": append(append([]byte{'"'}, AppendInner(nil, []byte(s))...), '"'),
		"Append(named)":       Append(nil, named(s)),
	} {
		if string(got) != want {
			t.Fatalf("%s(%q) = %s, encoding/json gives %s", name, s, got, want)
		}
	}
	if got := Append(prefix, s); string(got) != "prefix"+want {
		t.Fatalf("Append after a prefix (%q) = %s", s, got)
	}
}

type named string

func TestMatchesEncodingJSON(t *testing.T) {
	for _, s := range cases {
		check(t, s)
	}
	// every single byte and every pair of a byte with U+2028's lead byte
	for c := range 256 {
		check(t, string([]byte{byte(c)}))
		check(t, string([]byte{0xE2, 0x80, byte(c)}))
		check(t, string([]byte{'a', byte(c), 'b'}))
	}
	// every rune around the ones with special handling
	for _, lo := range []rune{0, 0x7f, 0x7ff, 0x2000, 0xd7ff, 0xfffd, 0xffff, 0x10fff0} {
		for r := lo; r < lo+64 && r <= utf8.MaxRune; r++ {
			check(t, "x"+string(r)+"y")
		}
	}
}

// The hot paths build bodies and log lines without allocating.
func TestNoAllocation(t *testing.T) {
	buf := make([]byte, 0, 1024)
	for _, s := range cases[:len(cases)-1] {
		b := []byte(s)
		if n := testing.AllocsPerRun(100, func() {
			buf = Append(buf[:0], s)
			buf = Append(buf[:0], b)
		}); n != 0 {
			t.Errorf("%q: %v allocations", s, n)
		}
	}
}

// FuzzAppend: on any input, every entry point writes what json.Marshal writes.
func FuzzAppend(f *testing.F) {
	for _, s := range cases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check(t, s)
	})
}
