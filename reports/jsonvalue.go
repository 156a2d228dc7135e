package reports

import "bytes"

// members calls f with each key and raw value of b, one JSON object, in
// order, and reports whether b is such an object and f took every member:
// flatjson.Fields where a value may be any JSON value — an object or array is
// given whole, brackets included, a string with its quotes and escapes. Every
// value is checked against JSON's grammar as json.Unmarshal checks a
// document (escapes, numbers, literals, no control character in a string;
// invalid UTF-8 passes, as there), so a true members means b is valid JSON. A
// key is given without its quotes and has no escape (a key with one makes
// members false); nesting deeper than maxValueDepth does too.
func members(b []byte, f func(key, v []byte) bool) bool {
	n := len(b)
	i := spaceEnd(b, 0)
	if i >= n || b[i] != '{' {
		return false
	}
	if i = spaceEnd(b, i+1); i < n && b[i] == '}' {
		return spaceEnd(b, i+1) == n
	}
	for {
		k1 := stringEnd(b, i)
		if k1 < 0 || bytes.IndexByte(b[i:k1], '\\') >= 0 {
			return false
		}
		key := b[i+1 : k1-1]
		if i = spaceEnd(b, k1); i >= n || b[i] != ':' {
			return false
		}
		v0 := spaceEnd(b, i+1)
		v1 := valueEnd(b, v0, 0)
		if v1 < 0 || !f(key, b[v0:v1]) {
			return false
		}
		if i = spaceEnd(b, v1); i >= n {
			return false
		}
		switch b[i] {
		case ',':
			i = spaceEnd(b, i+1)
		case '}':
			return spaceEnd(b, i+1) == n
		default:
			return false
		}
	}
}

// maxValueDepth is the deepest nesting members reads (json.Unmarshal reads
// 10,000 levels: a deeper payload goes to it).
const maxValueDepth = 64

// valueEnd is the index after the JSON value that begins at b[i], -1 when
// none does (depth: how many arrays and objects hold it).
func valueEnd(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return stringEnd(b, i)
	case c == '{' || c == '[':
		if depth == maxValueDepth {
			return -1
		}
		return containerEnd(b, i, depth+1)
	case c == 't':
		return literalEnd(b, i, "true")
	case c == 'f':
		return literalEnd(b, i, "false")
	case c == 'n':
		return literalEnd(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return numberEnd(b, i)
	}
	return -1
}

// containerEnd is valueEnd of the object or array that opens at b[i].
func containerEnd(b []byte, i, depth int) int {
	closer := byte(']')
	if b[i] == '{' {
		closer = '}'
	}
	n := len(b)
	if i = spaceEnd(b, i+1); i < n && b[i] == closer {
		return i + 1
	}
	for {
		if closer == '}' {
			if i = stringEnd(b, i); i < 0 {
				return -1
			}
			if i = spaceEnd(b, i); i >= n || b[i] != ':' {
				return -1
			}
			i = spaceEnd(b, i+1)
		}
		if i = valueEnd(b, i, depth); i < 0 {
			return -1
		}
		if i = spaceEnd(b, i); i >= n {
			return -1
		}
		switch b[i] {
		case ',':
			i = spaceEnd(b, i+1)
		case closer:
			return i + 1
		default:
			return -1
		}
	}
}

// stringEnd is valueEnd of the string that opens at b[i]: its escapes are
// JSON's, it holds no control character.
func stringEnd(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1
		case c < 0x20:
			return -1
		case c == '\\':
			if j = escapeEnd(b, j); j < 0 {
				return -1
			}
		}
	}
	return -1
}

// escapeEnd is the index of the last byte of the escape at b[j] (a
// backslash), -1 when it is not one of JSON's.
func escapeEnd(b []byte, j int) int {
	if j+1 >= len(b) {
		return -1
	}
	switch b[j+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return j + 1
	case 'u':
		if j+5 >= len(b) {
			return -1
		}
		for _, h := range b[j+2 : j+6] {
			if !isHex(h) {
				return -1
			}
		}
		return j + 5
	}
	return -1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// literalEnd is valueEnd of the literal lit at b[i].
func literalEnd(b []byte, i int, lit string) int {
	if !bytes.HasPrefix(b[i:], []byte(lit)) {
		return -1
	}
	return i + len(lit)
}

// numberEnd is valueEnd of a number in JSON's grammar at b[i]; what follows
// it is the caller's to check (a digit after a leading 0 is not a number).
func numberEnd(b []byte, i int) int {
	n := len(b)
	if b[i] == '-' {
		i++
	}
	switch {
	case i < n && b[i] == '0':
		i++
	case i < n && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return -1
	}
	if i < n && b[i] == '.' {
		j := digitsEnd(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digitsEnd(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// spaceEnd is the index of the first byte from i that is not JSON's
// whitespace.
func spaceEnd(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
