package msgspec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// errBadRecipient is wrapped by recipient pattern and range errors.
var errBadRecipient = errors.New("bad recipient")

// NumberRange is a set of numbers written Prefix + a zero-padded counter from Lo
// to Hi (Width digits) + Suffix: "+7999{0000000-9999999}" or a range from/to.
type NumberRange struct {
	Prefix, Suffix string
	Lo, Hi         uint64
	Width          int
}

// Size is how many numbers the range holds.
func (r NumberRange) Size() uint64 { return r.Hi - r.Lo + 1 }

// ParseRecipient parses a literal number or a pattern with one {LO-HI} digit range.
func ParseRecipient(s string) (NumberRange, error) {
	i := strings.IndexByte(s, '{')
	if i < 0 {
		if strings.ContainsRune(s, '}') {
			return NumberRange{}, fmt.Errorf("%w %q: } without {", errBadRecipient, s)
		}
		if s == "" {
			return NumberRange{}, fmt.Errorf("%w: empty", errBadRecipient)
		}
		return NumberRange{Prefix: s}, nil
	}
	j := strings.IndexByte(s[i:], '}')
	if j < 0 {
		return NumberRange{}, fmt.Errorf("%w %q: { without }", errBadRecipient, s)
	}
	j += i
	if strings.ContainsAny(s[j+1:], "{}") {
		return NumberRange{}, fmt.Errorf("%w %q: only one {LO-HI} range is allowed", errBadRecipient, s)
	}
	lo, hi, ok := strings.Cut(s[i+1:j], "-")
	if !ok || len(lo) != len(hi) || lo == "" || len(lo) > 18 || !allDigits(lo) || !allDigits(hi) {
		return NumberRange{}, fmt.Errorf("%w %q: want {LO-HI} with LO and HI of the same number of digits (1 to 18), like {0000000-9999999}", errBadRecipient, s)
	}
	l, _ := strconv.ParseUint(lo, 10, 64)
	h, _ := strconv.ParseUint(hi, 10, 64)
	if l > h {
		return NumberRange{}, fmt.Errorf("%w %q: LO is above HI", errBadRecipient, s)
	}
	return NumberRange{Prefix: s[:i], Suffix: s[j+1:], Lo: l, Hi: h, Width: len(lo)}, nil
}

// ParseNumberRange parses a range given by its first and last number
// ("+79990000000" to "+79990000999"): they must have the same length and differ
// only in their trailing digits.
func ParseNumberRange(from, to string) (NumberRange, error) {
	if len(from) != len(to) || from == "" {
		return NumberRange{}, fmt.Errorf("%w: from %q and to %q must have the same length", errBadRecipient, from, to)
	}
	// the longest common prefix that ends before the varying digits
	p := 0
	for p < len(from) && from[p] == to[p] {
		p++
	}
	// start of the trailing digit run containing the first difference
	d := len(from)
	for d > 0 && isDigit(from[d-1]) && isDigit(to[d-1]) {
		d--
	}
	if d > p || !allDigits(from[d:]) {
		return NumberRange{}, fmt.Errorf("%w: from %q and to %q must differ only in trailing digits", errBadRecipient, from, to)
	}
	if p == len(from) {
		d = len(from) - 1
		if d < 0 || !isDigit(from[d]) {
			return NumberRange{Prefix: from}, nil
		}
	}
	if len(from)-d > 18 {
		d = len(from) - 18
	}
	l, _ := strconv.ParseUint(from[d:], 10, 64)
	h, _ := strconv.ParseUint(to[d:], 10, 64)
	if l > h {
		return NumberRange{}, fmt.Errorf("%w: from %q is above to %q", errBadRecipient, from, to)
	}
	return NumberRange{Prefix: from[:d], Lo: l, Hi: h, Width: len(from) - d}, nil
}

// AppendNumber appends the i-th number of the range (i taken modulo Size).
func (r NumberRange) AppendNumber(dst []byte, i uint64) []byte {
	dst = append(dst, r.Prefix...)
	if r.Width > 0 {
		n := r.Lo + i%r.Size()
		var buf [20]byte
		b := strconv.AppendUint(buf[:0], n, 10)
		for k := len(b); k < r.Width; k++ {
			dst = append(dst, '0')
		}
		dst = append(dst, b...)
	}
	return append(dst, r.Suffix...)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
