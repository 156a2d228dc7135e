package yamlguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrTooLarge means the text is longer than Limits.MaxBytes.
	ErrTooLarge = errors.New("too large")
	// ErrNotRegular is a path that is not a regular file (a FIFO, a device):
	// refused before it is opened.
	ErrNotRegular = errors.New("not a regular file")
	// errTooDeep means the text nests deeper than Limits.MaxDepth.
	errTooDeep = errors.New("nested too deeply")
	// errTooManyNodes means the text holds more than Limits.MaxNodes nodes.
	errTooManyNodes = errors.New("too many nodes")
)

// Limits are the bounds Check applies.
type Limits struct {
	// MaxBytes bounds the length of the text.
	MaxBytes int64
	// MaxDepth bounds the nesting: block levels (indentation, "- " entries)
	// plus open flow collections ([ and {).
	MaxDepth int
	// MaxNodes bounds the nodes: collections, entries, keys and scalars,
	// counted from their indicators (an upper estimate of what a parser builds).
	MaxNodes int
}

// Default are the bounds of scenario files and the simulator's configuration:
// 1 MiB, 32 levels (a real file nests under 10), 100 000 nodes (a real file
// has a few hundred).
var Default = Limits{MaxBytes: 1 << 20, MaxDepth: 32, MaxNodes: 100_000}

// Error is a bound crossed at a place in the text. Line and Col are 1-based
// (Col counts runes); both are 0 for ErrTooLarge from Read.
type Error struct {
	Line, Col int
	Err       error // ErrTooLarge, errTooDeep or errTooManyNodes
	Msg       string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// read reads r to its end, but never more than max+1 bytes: past max it
// stops and returns an *Error wrapping ErrTooLarge, so an endless reader
// (/dev/zero, a pipe) costs max bytes of memory, not all of it.
func read(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &Error{Err: ErrTooLarge, Msg: fmt.Sprintf("larger than %d bytes (reading stopped there)", max)}
	}
	return b, nil
}

// StripBOM drops a UTF-8 byte order mark at the start of src (editors on
// Windows write one): the YAML library would read it as part of the first key
// ("\ufeffname: unknown field").
func StripBOM(src []byte) []byte { return bytes.TrimPrefix(src, []byte("\ufeff")) }

// ReadFile is Read on the file at path; whatever the file's stat size says
// (0 for /dev/zero), at most max+1 bytes are read. A path that is not a
// regular file (a FIFO, a device) is refused before it is opened: opening a
// FIFO blocks until a writer comes, reading a device may never end.
func ReadFile(path string, max int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &Error{Err: ErrNotRegular, Msg: "not a regular file (a FIFO, device or socket is refused)"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, max)
}

// Check scans src once, without building anything, and returns the first
// place where it crosses a bound of l, or nil. It follows YAML closely enough
// to know which [ { ' " | > are indicators (not text inside a quoted or plain
// scalar, a comment or a block scalar); where it cannot tell, it counts, so
// it may over-estimate depth and nodes but does not miss nesting a parser
// would build.
func Check(src []byte, l Limits) *Error {
	s := scanner{src: src, lim: l}
	if l.MaxBytes > 0 && int64(len(src)) > l.MaxBytes {
		return &Error{Line: 1, Col: 1, Err: ErrTooLarge, Msg: fmt.Sprintf("larger than %d bytes", l.MaxBytes)}
	}
	return s.run()
}

type scanner struct {
	src []byte
	lim Limits

	line      int // 1-based number of the current line
	lineStart int // offset of the current line

	block []int // columns of the open block levels, increasing
	flow  int   // open flow collections
	nodes int
	quote byte // open quoted scalar: ' or ", 0 for none

	// block scalar (| or >) in progress
	inBlockScalar bool
	scalarParent  int // its content is indented more than this
	scalarIndent  int // indentation of its content, -1 until the first line

	// a plain scalar of the previous line may continue on lines indented
	// more than plainParent
	plainOpen   bool
	plainParent int

	// dangling: the previous line ended with a node property (a tag, an
	// anchor) after block indicators, the node itself to come. The YAML
	// library then nests the next line under it whatever its indentation,
	// so that line's levels are counted from the deepest open one.
	dangling bool
}

func (s *scanner) errAt(i int, err error, msg string) *Error {
	return &Error{Line: s.line, Col: utf8.RuneCount(s.src[s.lineStart:i]) + 1, Err: err, Msg: msg}
}

func (s *scanner) depth() int { return len(s.block) + s.flow }

func (s *scanner) deep(i int) *Error {
	if s.lim.MaxDepth > 0 && s.depth() > s.lim.MaxDepth {
		return s.errAt(i, errTooDeep, fmt.Sprintf("nested more than %d levels deep", s.lim.MaxDepth))
	}
	return nil
}

func (s *scanner) node(i int) *Error {
	s.nodes++
	if s.lim.MaxNodes > 0 && s.nodes > s.lim.MaxNodes {
		return s.errAt(i, errTooManyNodes, fmt.Sprintf("more than %d nodes", s.lim.MaxNodes))
	}
	return nil
}

// level opens a block level at column col (closing the deeper ones).
func (s *scanner) level(i, col int) *Error {
	for len(s.block) > 0 && s.block[len(s.block)-1] > col {
		s.block = s.block[:len(s.block)-1]
	}
	if len(s.block) == 0 || s.block[len(s.block)-1] < col {
		s.block = append(s.block, col)
		return s.deep(i)
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// skipProperty skips the node property (a tag or an anchor) at j and the
// spaces after it. A bare "&" takes the next word as its name in the YAML
// library ("! & 00" is a tag and the anchor "00", the node still to come:
// found by FuzzCheck), so that word is skipped too, unless it is a "- " or
// "? " indicator (counting it may over-estimate, never miss).
func (s *scanner) skipProperty(j, end int) int {
	src := s.src
	bareAnchor := src[j] == '&' && (j+1 == end || isSpace(src[j+1]))
	j = s.skipWord(j, end)
	indicator := j < end && (src[j] == '-' || src[j] == '?') && (j+1 == end || isSpace(src[j+1]))
	if bareAnchor && !indicator {
		j = s.skipWord(j, end)
	}
	return j
}

// skipWord skips the word at j and the spaces after it.
func (s *scanner) skipWord(j, end int) int {
	for j < end && !isSpace(s.src[j]) {
		j++
	}
	for j < end && isSpace(s.src[j]) {
		j++
	}
	return j
}

func (s *scanner) run() *Error {
	src := s.src
	for off := 0; off < len(src); {
		// A line ends at \n, or at a \r not followed by \n: YAML takes a lone
		// carriage return as a line break too (found by FuzzCheck: a line of
		// "- - - …" after a lone \r passed as blank).
		end := off
		for end < len(src) && src[end] != '\n' && !(src[end] == '\r' && (end+1 == len(src) || src[end+1] != '\n')) {
			end++
		}
		s.line++
		s.lineStart = off
		if err := s.scanLine(off, end); err != nil {
			return err
		}
		off = end + 1
	}
	return nil
}

// scanLine scans src[start:end], one line without its newline.
func (s *scanner) scanLine(start, end int) *Error {
	src := s.src
	ind := start
	for ind < end && (src[ind] == ' ' || src[ind] == '\t') {
		ind++
	}
	indent := ind - start
	blank := ind == end || src[ind] == '\r' || src[ind] == '#'

	if s.inBlockScalar {
		if ind == end || src[ind] == '\r' {
			return nil // blank lines belong to the scalar
		}
		if s.scalarIndent < 0 && indent > s.scalarParent {
			s.scalarIndent = indent
		}
		if s.scalarIndent >= 0 && indent >= s.scalarIndent {
			return nil
		}
		s.inBlockScalar = false
	}
	i := start
	if s.quote == 0 && s.flow == 0 {
		if blank {
			return nil // comments and blank lines do not end a plain scalar
		}
		if s.plainOpen && indent > s.plainParent {
			return nil // continuation of a multi-line plain scalar
		}
		s.plainOpen = false
		if indent == 0 && end-start >= 3 && (string(src[start:start+3]) == "---" || string(src[start:start+3]) == "...") &&
			(end-start == 3 || isSpace(src[start+3])) {
			s.block = s.block[:0] // a new document
			// The rest of the line is a node like any line's: "--- - - x"
			// nests as "- - x" does (found by FuzzCheck: "--- ! - - - - - - -"
			// passed a depth bound of 6 with 7 levels).
			i = start + 3
			for i < end && isSpace(src[i]) {
				i++
			}
			if i == end || src[i] == '#' {
				return nil
			}
			var done bool
			var err *Error
			if i, done, err = s.indicators(i, start, end, 0); err != nil || done {
				return err
			}
		} else if indent == 0 && src[start] == '%' {
			return nil // a directive
		} else {
			// block levels: the line's indentation, then each "- " or "? "
			// indicator opens one more at the column after it
			i = ind
			off := 0 // added to this line's columns (see dangling)
			if s.dangling && len(s.block) > 0 && s.block[len(s.block)-1] >= indent {
				off = s.block[len(s.block)-1] + 1 - indent
			}
			s.dangling = false
			var done bool
			var err *Error
			if i, done, err = s.indicators(i, start, end, off); err != nil || done {
				return err
			}
		}
	}
	return s.scanTokens(i, end, s.quote == 0)
}

// indicators opens the block levels of a line from i: one at i's column
// (plus off), then one after each "- " or "? " indicator, node properties
// between them included. It returns where the rest of the line begins, or
// done when nothing but a comment is left.
func (s *scanner) indicators(i, start, end, off int) (next int, done bool, err *Error) {
	src := s.src
	for {
		if err := s.level(i, i-start+off); err != nil {
			return i, false, err
		}
		// Node properties (a tag "!x", an anchor "&a") before an
		// indicator do not end the run of indicators: "- !t - - x"
		// nests as deep as "- - - x" (found by FuzzCheck).
		for j := i; j < end && (src[j] == '!' || src[j] == '&'); {
			j = s.skipProperty(j, end)
			if j < end && (src[j] == '-' || src[j] == '?') && (j+1 == end || isSpace(src[j+1])) {
				i = j
				if err := s.level(i, i-start+off); err != nil {
					return i, false, err
				}
			}
			if j == end || src[j] == '#' {
				s.dangling = true
			}
		}
		if i < end && (src[i] == '-' || src[i] == '?') && (i+1 == end || isSpace(src[i+1])) {
			if err := s.node(i); err != nil {
				return i, false, err
			}
			i++
			for i < end && isSpace(src[i]) {
				i++
			}
			if i == end || src[i] == '#' {
				return i, true, nil
			}
			continue
		}
		break
	}
	return i, false, nil
}

// scanTokens scans the rest of a line from i; atStart says a node may begin
// at i (so [ { ' " | > & ! * there are indicators).
func (s *scanner) scanTokens(i, end int, atStart bool) *Error {
	src := s.src
	plain := false // inside a plain scalar
	for i < end {
		c := src[i]
		if s.quote != 0 {
			switch {
			case c == '\\' && s.quote == '"':
				i += 2
				continue
			case c == '\'' && s.quote == '\'' && i+1 < end && src[i+1] == '\'':
				i += 2
				continue
			case c == s.quote:
				s.quote = 0
				atStart, plain = false, false
			}
			i++
			continue
		}
		if isSpace(c) {
			i++
			continue
		}
		if c == '#' && (i == s.lineStart || isSpace(src[i-1])) {
			break // a comment
		}
		if s.flow > 0 {
			switch c {
			case '[', '{':
				s.flow++
				if err := s.deep(i); err != nil {
					return err
				}
				if err := s.node(i); err != nil {
					return err
				}
				atStart, plain = true, false
				i++
				continue
			case ']', '}':
				s.flow--
				atStart, plain = false, false
				i++
				continue
			case ',':
				if err := s.node(i); err != nil {
					return err
				}
				atStart, plain = true, false
				i++
				continue
			case ':':
				atStart, plain = true, false
				i++
				continue
			}
		} else if c == ':' && (i+1 == end || isSpace(src[i+1])) {
			// a block mapping value
			if err := s.node(i); err != nil {
				return err
			}
			atStart, plain = true, false
			i++
			continue
		}
		if !atStart || plain {
			plain = true
			i++
			continue
		}
		// the start of a node
		next, st, pl, done, err := s.nodeStart(i, end)
		if err != nil {
			return err
		}
		if done {
			return nil // a block scalar's header: its indicators and comment
		}
		i, atStart, plain = next, st, pl
	}
	if plain && s.flow == 0 && s.quote == 0 {
		s.plainOpen = true
		s.plainParent = 0
		if len(s.block) > 0 {
			s.plainParent = s.block[len(s.block)-1]
		}
	}
	return nil
}

// nodeStart scans the node that begins at i (scanTokens found one may):
// it returns where to go on and whether a node may still begin there
// (atStart: after an opened flow collection, a quote, an anchor or a tag) or a
// plain scalar goes on (plain); done: a block scalar's header ends the line.
func (s *scanner) nodeStart(i, end int) (next int, atStart, plain, done bool, err *Error) {
	src := s.src
	c := src[i]
	switch c {
	case '[', '{':
		s.flow++
		if err := s.deep(i); err != nil {
			return i, false, false, false, err
		}
		if err := s.node(i); err != nil {
			return i, false, false, false, err
		}
		return i + 1, true, false, false, nil // still atStart
	case '\'', '"':
		if err := s.node(i); err != nil {
			return i, false, false, false, err
		}
		s.quote = c
		return i + 1, true, false, false, nil
	case '|', '>':
		if s.flow == 0 {
			if err := s.node(i); err != nil {
				return i, false, false, false, err
			}
			s.inBlockScalar, s.scalarIndent = true, -1
			s.scalarParent = 0
			if len(s.block) > 0 {
				s.scalarParent = s.block[len(s.block)-1]
			}
			return i, false, false, true, nil
		}
	case '&', '!':
		// an anchor or a tag: the node follows it
		for i < end && !isSpace(src[i]) && (s.flow == 0 || !isFlowIndicator(src[i])) {
			i++
		}
		return i, true, false, false, nil
	}
	if err := s.node(i); err != nil {
		return i, false, false, false, err
	}
	return i + 1, false, true, false, nil
}

func isFlowIndicator(c byte) bool { return c == '[' || c == ']' || c == '{' || c == '}' || c == ',' }

// Pos is a place in the text: 1-based line and column (in runes).
type Pos struct{ Line, Col int }

// InvalidUTF8 returns the place of the first byte that is not UTF-8 on each
// line that has one, at most max places. The YAML library reads such a
// byte as U+FFFD, so after parsing it cannot be seen: a name or a text with
// it would pass as something the file does not say.
func InvalidUTF8(src []byte, max int) []Pos {
	if utf8.Valid(src) {
		return nil
	}
	var out []Pos
	line, lineStart := 1, 0
	for i := 0; i < len(src) && len(out) < max; {
		c := src[i]
		if c == '\n' {
			line, lineStart = line+1, i+1
			i++
			continue
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, Pos{Line: line, Col: utf8.RuneCount(src[lineStart:i]) + 1})
			for i < len(src) && src[i] != '\n' { // one place a line
				i++
			}
			continue
		}
		i += size
	}
	return out
}
