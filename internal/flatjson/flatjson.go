package flatjson

// Fields calls f with each key and raw value of b, one flat JSON object, in
// order, and reports whether b is such an object and f took every field.
// JSON whitespace may stand between tokens. A key is a string with no escape
// and no control character, given without its quotes. A value is such a
// string, given with its quotes, or a scalar (number, true, false, null)
// given as the bytes up to the next ',' or '}' without the whitespace around
// them — not checked against JSON's grammar: f judges it. An object or array
// as a value, an escape, a control character in a string, a trailing comma or
// anything after the closing brace makes Fields false. Strings are given as
// their bytes, not checked for valid UTF-8 (encoding/json would replace
// invalid bytes): a caller that keeps one checks it. A true Fields does not
// make b valid JSON (a scalar, and UTF-8, are f's to check), but every byte of
// it was seen.
func Fields(b []byte, f func(key, value []byte) bool) bool {
	n := len(b)
	i := skipSpace(b, 0)
	if i >= n || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < n && b[i] == '}' {
		return skipSpace(b, i+1) == n
	}
	for {
		k0, k1, ok := plainString(b, i)
		if !ok {
			return false
		}
		if i = skipSpace(b, k1); i >= n || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if i >= n {
			return false
		}
		v0 := i
		switch b[i] {
		case '"':
			if _, i, ok = plainString(b, i); !ok {
				return false
			}
		case '{', '[', ',', '}':
			return false
		default:
			for i < n && b[i] != ',' && b[i] != '}' && !isSpace(b[i]) {
				i++
			}
		}
		if !f(b[k0+1:k1-1], b[v0:i]) {
			return false
		}
		if i = skipSpace(b, i); i >= n {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == n
		default:
			return false
		}
	}
}

// plainString finds the string that begins at b[i] when it has no escape and
// no control character: the index of its opening quote and the one after its
// closing quote.
func plainString(b []byte, i int) (start, end int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return i, j + 1, true
		case c == '\\' || c < 0x20:
			return 0, 0, false
		}
	}
	return 0, 0, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}
