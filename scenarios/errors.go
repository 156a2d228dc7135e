package scenarios

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sentinel errors.
var (
	// errNotFound means the name is neither a built-in scenario nor a readable file.
	errNotFound = errors.New("scenario not found")
	// errInvalid is matched (errors.Is) by every Errors value.
	errInvalid = errors.New("invalid scenario")
)

// Error is one problem in a scenario file. Line and Col are 1-based; 0 when the
// problem has no single place (a missing field is reported at its parent).
type Error struct {
	File      string
	Line, Col int
	Field     string // dotted path: load.rate, message.scenario[1].sender
	Msg       string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one scenario, in file order.
type Errors []*Error

// Error prints one problem per line: "file:line:col: field.path: what is wrong".
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Is makes errors.Is(err, errInvalid) true for any Errors.
func (es Errors) Is(target error) bool { return target == errInvalid }

func (es Errors) sort() {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Line != b.Line {
			// problems without a place go last
			if a.Line == 0 || b.Line == 0 {
				return b.Line == 0 && a.Line != 0
			}
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}
