package jsonesc

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// ascii[c] is true for an ASCII byte copied as it is: printable but ", \, <,
// > and &. plain[c] adds, for the part of a string known to be valid UTF-8,
// every byte of a multi-byte sequence except 0xE2, the lead byte of U+2028
// and U+2029. One table load per byte is the whole cost of a string that
// needs no escape.
var ascii, plain = func() (a, p [256]bool) {
	for c := 0x20; c < 256; c++ {
		a[c] = c < utf8.RuneSelf
		p[c] = true
	}
	for _, c := range []byte{'"', '\\', '<', '>', '&', 0xE2} {
		a[c], p[c] = false, false
	}
	return a, p
}()

// Append appends s to dst as a JSON string, quotes included.
func Append[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = append(dst, '"')
	dst = AppendInner(dst, s)
	return append(dst, '"')
}

// AppendInner appends s to dst as the inside of a JSON string, without the
// quotes: for a string whose quotes are already part of a template.
func AppendInner[S ~string | ~[]byte](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ascii[c] {
			continue
		}
		if c >= utf8.RuneSelf {
			// the rest is checked once (utf8.Valid skips ASCII eight bytes at
			// a time; converting a string here copies nothing, s does not
			// escape), so an ASCII string is never checked at all
			if utf8.Valid([]byte(s[i:])) {
				return appendValid(dst, s, start, i)
			}
			return appendInvalid(dst, s, start, i)
		}
		dst = append(dst, s[start:i]...)
		dst = appendByte(dst, c)
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// appendValid goes on from i with s[i:] valid UTF-8; s[start:i] is not in
// dst yet.
func appendValid[S ~string | ~[]byte](dst []byte, s S, start, i int) []byte {
	for ; i < len(s); i++ {
		c := s[i]
		if plain[c] {
			continue
		}
		if c == 0xE2 {
			// valid UTF-8: E2 80 A8 and E2 80 A9 are U+2028 and U+2029
			if i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xA8 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xF])
				i += 2
				start = i + 1
			}
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendByte(dst, c)
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// appendByte appends the escape of an ASCII byte that is not plain.
func appendByte(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// appendInvalid goes on from i with s[i:] not valid UTF-8 (s[start:i] is not
// in dst yet): it decodes rune by rune, as encoding/json does, writing \ufffd
// for each byte that starts no valid sequence.
func appendInvalid[S ~string | ~[]byte](dst []byte, s S, start, i int) []byte {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if !ascii[c] {
				dst = append(dst, s[start:i]...)
				dst = appendByte(dst, c)
				start = i + 1
			}
			i++
			continue
		}
		// at most UTFMax bytes: a conversion that short needs no allocation
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			start = i + size
		}
		i += size
	}
	return append(dst, s[start:]...)
}
