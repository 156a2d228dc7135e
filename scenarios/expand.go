package scenarios

import (
	"bytes"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// expand replaces ${VAR} and ${VAR:-default} in src with values from getenv,
// outside comments; "$${" stays a literal "${". An unset (or empty) variable
// without a default is an error at its position. Expansion works on the text
// before parsing, so a value may also fill a flow mapping ({ secret: ${S} }).
//
// It is one pass, linear in the text and the values (columns are counted
// from the last place counted, never from the line's start), and it stops as
// soon as the text grows past max bytes: the caller's size check then refuses
// it without the whole expansion being built.
func expand(file string, src []byte, getenv func(string) string, max int) ([]byte, Errors, colMap) {
	if !strings.Contains(string(src), "$") {
		return src, nil, nil
	}
	var errs Errors
	var out bytes.Buffer
	out.Grow(len(src))
	cols := colMap{}
	lines := strings.SplitAfter(string(src), "\n")
	for ln, line := range lines {
		lineStart := out.Len()
		if lineStart > max {
			break
		}
		var orig, exp runeCounter // columns of line and of its expansion
		var quote byte
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				} else if c == '\\' && quote == '"' && i+1 < len(line) {
					out.WriteByte(c)
					i++
					c = line[i]
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
				out.WriteString(line[i:])
				i = len(line)
				continue
			}
			if c != '$' {
				out.WriteByte(c)
				continue
			}
			if strings.HasPrefix(line[i:], "$${") {
				out.WriteString("${")
				i += 2
				continue
			}
			if !strings.HasPrefix(line[i:], "${") {
				out.WriteByte(c)
				continue
			}
			end := strings.IndexByte(line[i:], '}')
			if end < 0 {
				errs = append(errs, &Error{File: file, Line: ln + 1, Col: orig.col(line, i), Msg: "unterminated ${: write ${VAR} or ${VAR:-default}"})
				out.WriteString(line[i:])
				break
			}
			expr := line[i+2 : i+end]
			name, def, hasDef := strings.Cut(expr, ":-")
			if !validVarName(name) {
				errs = append(errs, &Error{File: file, Line: ln + 1, Col: orig.col(line, i), Msg: "bad variable name " + quoteStr(name) + ": want letters, digits and _"})
			} else if v, ok := lookup(getenv, name, def, hasDef); ok {
				sh := shift{expStart: exp.colOf(out.Bytes()[lineStart:]), origStart: orig.col(line, i), origEnd: orig.col(line, i+end+1)}
				out.WriteString(placeValue(v, quote, line[:i], line[i+end+1:]))
				sh.expEnd = exp.colOf(out.Bytes()[lineStart:])
				cols[ln+1] = append(cols[ln+1], sh)
				if out.Len() > max {
					return out.Bytes(), errs, cols // too large: refused by the caller
				}
			} else {
				errs = append(errs, &Error{File: file, Line: ln + 1, Col: orig.col(line, i), Msg: "environment variable " + name + " is not set (write ${" + name + ":-default} to give a default)"})
			}
			i += end
		}
	}
	return out.Bytes(), errs, cols
}

// runeCounter gives 1-based columns, in characters as the YAML parser counts,
// of increasing byte offsets of one line, counting each byte once: counting
// from the line's start at every ${ made 20,000 of them on a line take a
// minute.
type runeCounter struct{ off, runes int }

// col is the column of byte offset i of line; i never decreases.
func (c *runeCounter) col(line string, i int) int {
	c.runes += utf8.RuneCountInString(line[c.off:i])
	c.off = i
	return c.runes + 1
}

// colOf is the column just past the end of b, a text that only grows.
func (c *runeCounter) colOf(b []byte) int {
	c.runes += utf8.RuneCount(b[c.off:])
	c.off = len(b)
	return c.runes + 1
}

// shift records one substitution on a line, in columns: [expStart, expEnd) in
// the expanded text replaced [origStart, origEnd) of the file.
type shift struct{ expStart, expEnd, origStart, origEnd int }

// colMap maps the columns of the expanded text back to the file's, per line,
// so positions point at what the user wrote.
type colMap map[int][]shift

func (m colMap) col(line, col int) int {
	shs := m[line] // in increasing order: the last one starting at or before col decides
	k := sort.Search(len(shs), func(k int) bool { return shs[k].expStart > col }) - 1
	switch {
	case k < 0:
		return col
	case col < shs[k].expEnd:
		return shs[k].origStart // inside a substituted value: the ${ that produced it
	default:
		return col - shs[k].expEnd + shs[k].origEnd
	}
}

// remap moves every position in errs and pos back to the file's columns.
func (m colMap) remap(errs Errors, pos map[string]Pos) {
	if len(m) == 0 {
		return
	}
	for _, e := range errs {
		e.Col = m.col(e.Line, e.Col)
	}
	for k, p := range pos {
		pos[k] = Pos{Line: p.Line, Col: m.col(p.Line, p.Col)}
	}
}

func lookup(getenv func(string) string, name, def string, hasDef bool) (string, bool) {
	if v := getenv(name); v != "" {
		return v, true
	}
	return def, hasDef
}

// placeValue writes a value so that YAML reads it back exactly, whatever it
// holds (a secret may contain '#', ': ', a leading '*' or quotes): inside
// double quotes it is escaped, inside single quotes its quotes are doubled, and
// when it is a whole plain value it becomes a double-quoted string. In the
// middle of a plain value (https://${HOST}/x) it goes in as it is.
func placeValue(v string, quote byte, before, after string) string {
	switch quote {
	case '"':
		q := strconv.Quote(v)
		return q[1 : len(q)-1]
	case '\'':
		return strings.ReplaceAll(v, "'", "''")
	}
	prev := strings.TrimRight(before, " \t")
	next := strings.TrimLeft(after, " \t")
	wholeStart := prev == "" || strings.HasSuffix(prev, ":") || strings.HasSuffix(prev, "[") || strings.HasSuffix(prev, "{") ||
		strings.HasSuffix(prev, ",") || (strings.HasSuffix(prev, "-") && (len(prev) == 1 || prev[len(prev)-2] == ' ' || prev[len(prev)-2] == '\t'))
	wholeEnd := next == "" || next == "\n" || next == "\r\n" || next[0] == ',' || next[0] == ']' || next[0] == '}' ||
		(next[0] == '#' && len(next) < len(after))
	if wholeStart && wholeEnd && !strings.HasPrefix(next, ":") {
		return strconv.Quote(v)
	}
	return v
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func quoteStr(s string) string { return "\"" + s + "\"" }
