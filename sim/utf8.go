package sim

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// checkUTF8 returns a fieldError naming the first string of the JSON value b
// (already decoded without error) that is not valid UTF-8: raw bytes that
// are not UTF-8, or a \u escape of a lone surrogate. encoding/json replaces
// both with U+FFFD when it decodes into a string, so a check on the decoded
// value cannot see them, and two externalIds differing only there would
// become one. Both seeds take text as UTF-8; every string of the body is
// checked, field names too, so the rule holds for every text field.
func checkUTF8(b []byte) error {
	type frame struct {
		obj  bool
		base string // path of the container
		key  string // current field name (objects)
		idx  int    // current index (arrays)
	}
	var stack []frame
	valuePath := func() string {
		if len(stack) == 0 {
			return "body"
		}
		f := stack[len(stack)-1]
		if f.obj {
			if f.base == "" {
				return f.key
			}
			return f.base + "." + f.key
		}
		return fmt.Sprintf("%s[%d]", f.base, f.idx)
	}
	expectKey := false
	for i := 0; i < len(b); {
		switch b[i] {
		case '{', '[':
			base := ""
			if len(stack) > 0 {
				base = valuePath()
			}
			stack = append(stack, frame{obj: b[i] == '{', base: base})
			expectKey = b[i] == '{'
			i++
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
			i++
		case ',':
			if len(stack) > 0 {
				if stack[len(stack)-1].obj {
					expectKey = true
				} else {
					stack[len(stack)-1].idx++
				}
			}
			i++
		case '"':
			end, ok := scanJSONString(b, i)
			if expectKey && len(stack) > 0 {
				if !ok {
					p := stack[len(stack)-1].base
					if p == "" {
						p = "body"
					}
					return &fieldError{p, "a field name is not valid UTF-8"}
				}
				var k string
				if json.Unmarshal(b[i:end], &k) != nil {
					k = string(b[i+1 : end-1])
				}
				stack[len(stack)-1].key = k
				expectKey = false
			} else if !ok {
				return &fieldError{valuePath(), "not valid UTF-8"}
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

// scanJSONString reads the string starting at b[i] (a quote) and returns the
// offset after its closing quote and whether it is valid UTF-8.
func scanJSONString(b []byte, i int) (end int, ok bool) {
	ok = true
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, ok
		case c == '\\':
			if i+1 < len(b) && b[i+1] == 'u' {
				r, n := hex4(b, i+2)
				i += 6
				if n != 4 {
					continue
				}
				switch {
				case r >= 0xDC00 && r <= 0xDFFF:
					ok = false // a low surrogate alone
				case r >= 0xD800 && r <= 0xDBFF:
					// must be followed by \u and a low surrogate
					if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
						if lo, m := hex4(b, i+2); m == 4 && lo >= 0xDC00 && lo <= 0xDFFF {
							i += 6
							continue
						}
					}
					ok = false
				}
				continue
			}
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				ok = false
			}
			i += size
		}
	}
	return len(b), ok
}

// hex4 reads up to four hex digits at b[i:]; n is how many there were.
func hex4(b []byte, i int) (r rune, n int) {
	for ; n < 4 && i+n < len(b); n++ {
		c := b[i+n]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return r, n
		}
	}
	return r, n
}
