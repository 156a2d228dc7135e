package jsonesc

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The three escapers this package replaced, kept here only as the yardstick
// of BenchmarkAppend: message's (a validity check first, then a byte loop),
// the sink's and the attempt log's (rune decoding past ASCII). Their output
// differed from each other and from json.Marshal in \b, \f and <>&.

func oldMessage(dst []byte, s string) []byte {
	dst = append(dst, '"')
	if oldValid(s) {
		dst = oldMessageValid(dst, s)
	} else {
		dst = oldSink(dst, s) // the same rune loop as the sink's, without quotes
	}
	return append(dst, '"')
}

func oldValid(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.Valid([]byte(s[i:]))
		}
	}
	return true
}

func oldMessageValid(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x20 && c != '"' && c != '\\' && c != 0xE2:
			continue
		case c == 0xE2:
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xf])
				i += 2
				start = i + 1
			}
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// oldSink is the sink's and, with <>& added, the attempt log's loop.
func oldSink(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}

func oldAttack(b []byte, s string) []byte {
	b = append(b, '"')
	b = oldSink(b, s)
	return append(b, '"')
}

// benchInputs are the inputs of the hot paths (short ids and states, a
// message text in Latin and in Cyrillic script) and three rarer ones.
var benchInputs = []struct{ name, s string }{
	{"id", "3fa85f64-5717-4562-b3fc-2c963f66afa6"},
	{"latin160", strings.Repeat("load test 1234 ", 11)[:160]},
	{"cyrillic70", strings.Repeat("Привет мир ", 7)[:130]},
	{"escapes", "line\none \"quoted\" \\ back\ttab"},
	{"html", "<b>bold</b> & <i>italic</i>"}, // old-message left <>& as they were
	{"invalid", "bad\xffutf8 and more text after it"},
}

var benchImpls = []struct {
	name string
	f    func([]byte, string) []byte
}{
	{"jsonesc", Append[string]},
	{"old-message", oldMessage},
	{"old-sink-attack", oldAttack},
}

// BenchmarkAppend times each escaper on each input.
//
//	go test -run '^$' -bench 'Append$' -benchmem ./internal/jsonesc
func BenchmarkAppend(b *testing.B) {
	for _, in := range benchInputs {
		for _, im := range benchImpls {
			b.Run(in.name+"/"+im.name, func(b *testing.B) {
				buf := make([]byte, 0, 1024)
				b.SetBytes(int64(len(in.s)))
				for b.Loop() {
					buf = im.f(buf[:0], in.s)
				}
			})
		}
	}
}

// BenchmarkAppendInterleaved compares the escapers on a busy machine, where
// BenchmarkAppend's separate runs scatter by a factor of 2 or more: each
// iteration times a batch of every escaper in turn, and the metric of each is
// its fastest batch, in ns per string (the time it takes when nothing else
// runs).
//
//	go test -run '^$' -bench 'AppendInterleaved' ./internal/jsonesc
func BenchmarkAppendInterleaved(b *testing.B) {
	const batch = 1000
	for _, in := range benchInputs {
		b.Run(in.name, func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			best := make([]time.Duration, len(benchImpls))
			for b.Loop() {
				for k, im := range benchImpls {
					start := time.Now()
					for range batch {
						buf = im.f(buf[:0], in.s)
					}
					if d := time.Since(start); best[k] == 0 || d < best[k] {
						best[k] = d
					}
				}
			}
			for k, im := range benchImpls {
				b.ReportMetric(float64(best[k].Nanoseconds())/batch, im.name+"-ns/op")
			}
			b.ReportMetric(0, "ns/op") // the batches' sum says nothing
		})
	}
}
