package ratelimitfield

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// sfItem is one Item of a List: its bare value (a String or a Token, as
// written without quotes: a policy's name) and its parameters (as text).
type sfItem struct {
	value  string
	params map[string]string
}

// maxFieldLen bounds what is parsed (a field is outside input).
const maxFieldLen = 4096

// parseSFList parses a Structured Fields List of Items with parameters;
// inner lists are refused (neither field uses them).
func parseSFList(v string) ([]sfItem, error) {
	if len(v) > maxFieldLen {
		return nil, fmt.Errorf("longer than %d bytes", maxFieldLen)
	}
	p := &sfParser{s: strings.Trim(v, " \t")}
	var items []sfItem
	for p.s != "" {
		it, err := p.item()
		if err != nil {
			return nil, err
		}
		items = append(items, it)
		p.s = strings.TrimLeft(p.s, " \t")
		if p.s == "" {
			break
		}
		if p.s[0] != ',' {
			return nil, fmt.Errorf("want a comma, found %q", p.s[0])
		}
		p.s = strings.TrimLeft(p.s[1:], " \t")
		if p.s == "" {
			return nil, errors.New("a comma ends the list")
		}
	}
	if len(items) == 0 {
		return nil, errors.New("empty")
	}
	return items, nil
}

type sfParser struct{ s string }

func (p *sfParser) item() (sfItem, error) {
	if c := p.s[0]; c != '"' && c != '*' && !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
		return sfItem{}, fmt.Errorf("an item is a policy's name, a String or a Token: found %q", c)
	}
	v, err := p.bare()
	if err != nil {
		return sfItem{}, err
	}
	it := sfItem{value: v, params: map[string]string{}}
	for p.s != "" && p.s[0] == ';' {
		p.s = strings.TrimLeft(p.s[1:], " ")
		k := p.key()
		if k == "" {
			return sfItem{}, errors.New("a parameter without a key")
		}
		val := "?1" // a key alone is true
		if p.s != "" && p.s[0] == '=' {
			p.s = p.s[1:]
			if val, err = p.bare(); err != nil {
				return sfItem{}, fmt.Errorf("parameter %s: %w", k, err)
			}
		}
		it.params[k] = val // the last of a repeated key, as RFC 9651 says
	}
	return it, nil
}

// key is a parameter's key: lowercase letter or *, then lcalpha, digits, _-.*
func (p *sfParser) key() string {
	i := 0
	for i < len(p.s) {
		c := p.s[i]
		ok := c >= 'a' && c <= 'z' || c == '*' || i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.')
		if !ok {
			break
		}
		i++
	}
	k := p.s[:i]
	p.s = p.s[i:]
	return k
}

// bare is a String (unquoted and unescaped), a Token, an Integer, a
// Decimal, a Byte Sequence or a Boolean, as text.
func (p *sfParser) bare() (string, error) {
	if p.s == "" {
		return "", errors.New("a value is missing")
	}
	switch c := p.s[0]; {
	case c == '"':
		return p.str()
	case c == '?':
		if len(p.s) < 2 || p.s[1] != '0' && p.s[1] != '1' {
			return "", errors.New("a boolean is ?0 or ?1")
		}
		v := p.s[:2]
		p.s = p.s[2:]
		return v, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == ':':
		return p.bytes()
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '*':
		i := 1
		for i < len(p.s) && isTokenChar(p.s[i]) {
			i++
		}
		v := p.s[:i]
		p.s = p.s[i:]
		return v, nil
	}
	return "", fmt.Errorf("unexpected %q", p.s[0])
}

// number reads an Integer (at most 15 digits) or a Decimal (at most 12
// digits, a point, 1 to 3 digits), as text.
func (p *sfParser) number() (string, error) {
	i := 0
	if p.s[0] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(p.s) && p.s[i] >= '0' && p.s[i] <= '9' {
			i++
		}
		return i - j
	}
	n := digits()
	if n == 0 || n > 15 {
		return "", fmt.Errorf("not a number of 1 to 15 digits: %q", p.s[:i])
	}
	if i < len(p.s) && p.s[i] == '.' {
		i++
		if f := digits(); n > 12 || f == 0 || f > 3 {
			return "", fmt.Errorf("not a decimal: %q", p.s[:i])
		}
	}
	v := p.s[:i]
	p.s = p.s[i:]
	return v, nil
}

// bytes reads a Byte Sequence (:base64:), as written.
func (p *sfParser) bytes() (string, error) {
	end := strings.IndexByte(p.s[1:], ':')
	if end < 0 {
		return "", errors.New("a byte sequence is not closed")
	}
	v := p.s[:end+2]
	for _, c := range v[1 : len(v)-1] {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return "", fmt.Errorf("not base64 in a byte sequence: %q", c)
		}
	}
	p.s = p.s[end+2:]
	return v, nil
}

func isTokenChar(c byte) bool {
	return c > ' ' && c < 0x7f && !strings.ContainsRune(`"(),;<=>?@[\]{}`, rune(c)) || c == ':' || c == '/'
}

// str reads a quoted String: printable ASCII, \" and \\ the only escapes.
func (p *sfParser) str() (string, error) {
	var b strings.Builder
	for i := 1; i < len(p.s); i++ {
		switch c := p.s[i]; {
		case c == '\\':
			if i+1 >= len(p.s) || p.s[i+1] != '"' && p.s[i+1] != '\\' {
				return "", errors.New(`a string escapes only \" and \\`)
			}
			i++
			b.WriteByte(p.s[i])
		case c == '"':
			p.s = p.s[i+1:]
			return b.String(), nil
		case c < ' ' || c >= 0x7f:
			return "", errors.New("a string holds printable ASCII only")
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("a string is not closed")
}

// Policy is one item of RateLimit-Policy: a named quota.
type Policy struct {
	Name string // the item's String or Token
	Q    int64  // the quota: requests (or units) per window
	W    int64  // the window in seconds; 0 when not given
}

// Limit is one item of RateLimit: what is left of a policy's quota.
type Limit struct {
	Name string // the policy it speaks of
	R    int64  // the quota remaining
	T    int64  // seconds until the quota resets; -1 when not given
}

// ParsePolicy reads RateLimit-Policy: a List of Items, each a policy's name
// with q required (a non-negative Integer) and w a positive Integer when
// given. Anything else — a bare Integer item (the drafts before 08:
// `100;w=60`), a Decimal, a trailing comma, an unclosed String — is an
// error saying what is wrong, never a policy read from part of it.
func ParsePolicy(v string) ([]Policy, error) {
	items, err := parseSFList(v)
	if err != nil {
		return nil, fmt.Errorf("RateLimit-Policy: %w", err)
	}
	ps := make([]Policy, 0, len(items))
	for _, it := range items {
		q, err := intParam(it, "q", true)
		if err != nil {
			return nil, fmt.Errorf("RateLimit-Policy %q: %w", it.value, err)
		}
		w, err := intParam(it, "w", false)
		if err != nil || w == 0 && it.params["w"] != "" {
			return nil, fmt.Errorf("RateLimit-Policy %q: w is a window of seconds, not zero", it.value)
		}
		ps = append(ps, Policy{Name: it.value, Q: q, W: w})
	}
	return ps, nil
}

// ParseLimit reads RateLimit: a List of Items, each a policy's name with r
// required and t a non-negative Integer (delay-seconds) when given; anything
// else is an error, as ParsePolicy's.
func ParseLimit(v string) ([]Limit, error) {
	items, err := parseSFList(v)
	if err != nil {
		return nil, fmt.Errorf("RateLimit: %w", err)
	}
	ls := make([]Limit, 0, len(items))
	for _, it := range items {
		r, err := intParam(it, "r", true)
		if err != nil {
			return nil, fmt.Errorf("RateLimit %q: %w", it.value, err)
		}
		t := int64(-1)
		if _, ok := it.params["t"]; ok {
			if t, err = intParam(it, "t", true); err != nil {
				return nil, fmt.Errorf("RateLimit %q: %w", it.value, err)
			}
		}
		ls = append(ls, Limit{Name: it.value, R: r, T: t})
	}
	return ls, nil
}

// intParam is the non-negative Integer parameter k of it (0 when absent
// and not required).
func intParam(it sfItem, k string, required bool) (int64, error) {
	v, ok := it.params[k]
	if !ok {
		if required {
			return 0, fmt.Errorf("no %s (required)", k)
		}
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%s is not a non-negative integer", k, v)
	}
	return n, nil
}
