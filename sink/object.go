package sink

import (
	"encoding/json"
	"errors"
)

// errNotObject: the value is not one JSON object.
var errNotObject = errors.New("not a JSON object")

// field is one member of a JSON object: its decoded key and its raw value (a
// slice of the input, not a copy).
type field struct {
	key string
	raw json.RawMessage
}

// obj is a JSON object split into its members, in input order. It replaces
// map[string]json.RawMessage on the hot path: no map, no copies of the values.
type obj []field

// get returns the value of key k; with duplicate keys the last one wins, as
// with encoding/json.
func (o obj) get(k string) (json.RawMessage, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == k {
			return o[i].raw, true
		}
	}
	return nil, false
}

// splitObject splits b, which must hold exactly one JSON object and nothing but
// white space around it, into its members. It validates b first (json.Valid),
// so the walk below may rely on well-formed input.
func splitObject(b []byte) (obj, error) {
	if !json.Valid(b) {
		return nil, errNotObject
	}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, errNotObject
	}
	i++
	o := make(obj, 0, 8)
	for {
		i = skipWS(b, i)
		if b[i] == '}' {
			return o, nil
		}
		if b[i] == ',' {
			i = skipWS(b, i+1)
		}
		ks := i
		i = skipString(b, i)
		key, err := decodeKey(b[ks:i])
		if err != nil {
			return nil, err
		}
		i = skipWS(b, i)
		i = skipWS(b, i+1) // the colon
		vs := i
		i = skipValue(b, i)
		o = append(o, field{key: key, raw: b[vs:i]})
	}
}

func decodeKey(raw []byte) (string, error) {
	plain := true
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the (valid) value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default: // number, true, false, null
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
			i++
		}
		return i
	}
}
