package characterise

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/msgload/msgload/internal/yamlguard"
	"github.com/msgload/msgload/scenarios"
)

// File is a characterisation file: a scenario's own blocks (target, auth,
// clients, sim, …) without a load, and an optional expect: block.
type File struct {
	// Scenario is the file read by the scenarios' loader, with a placeholder
	// load the probes replace (every probe sets its own).
	Scenario *scenarios.Scenario
	Expect   []Expectation // in file order
}

// Expectation is one line of expect: — a rule and the value it should have.
type Expectation struct {
	Rule, Value string
	Line, Col   int
}

// maxFileSize bounds the file as the scenarios' loader does.
const maxFileSize = 1 << 20

// planned are the blocks characterise plans itself: a file that writes them
// is refused at their line (they would be silently replaced).
var planned = []string{"load", "parts", "thresholds", "idempotency", "retry"}

// topKey is a key at the start of a line: a block mapping's top level.
var topKey = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*)\s*:`)

// Load reads a characterisation file. Errors carry file:line:col as the
// scenarios' loader gives them (scenarios.Errors).
func Load(path string, getenv func(string) string) (*File, error) {
	src, err := yamlguard.ReadFile(path, maxFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("characterise: %q: no such file", path)
		}
		return nil, fmt.Errorf("characterise: read %q: %w", path, err)
	}
	return Parse(path, filepath.Dir(path), src, getenv)
}

// Parse is Load on text already read. The expect: block is cut out of the
// text (its lines left empty, so every other position stays where it was
// written) before the scenarios' loader reads the rest, and read on its own
// with only its lines kept.
func Parse(file, dir string, src []byte, getenv func(string) string) (*File, error) {
	src = yamlguard.StripBOM(src)
	lines := strings.SplitAfter(string(src), "\n")
	var errs scenarios.Errors
	from, to := -1, -1
	for i, l := range lines {
		m := topKey.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		switch {
		case from >= 0 && to < 0:
			to = i
		}
		if m[1] == "expect" {
			from, to = i, -1
		}
		if slices.Contains(planned, m[1]) {
			errs = append(errs, &scenarios.Error{File: file, Line: i + 1, Col: 1, Field: m[1],
				Msg: "characterise plans its own " + m[1] + " (a probe at a time, within --budget): remove it"})
		}
	}
	if from >= 0 && to < 0 {
		to = len(lines)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	scen := make([]string, 0, len(lines)+1)
	only := make([]string, 0, len(lines))
	for i, l := range lines {
		in := i >= from && i < to
		scen = append(scen, keepIf(!in, l))
		only = append(only, keepIf(in, l))
	}
	if n := len(scen); n > 0 && !strings.HasSuffix(scen[n-1], "\n") {
		scen[n-1] += "\n"
	}
	// A placeholder load after the last line: the loader wants one, and the
	// probes replace it.
	scen = append(scen, "load: { requests: 1, rate: 1/1s }\n")
	s, err := scenarios.Parse(file, dir, []byte(strings.Join(scen, "")), getenv)
	if err != nil {
		return nil, err
	}
	if len(s.Parts) > 0 {
		return nil, scenarios.Errors{{File: file, Field: "parts", Msg: "characterise plans its own parts: remove them"}}
	}
	exp, err := parseExpect(file, strings.Join(only, ""))
	if err != nil {
		return nil, err
	}
	return &File{Scenario: s, Expect: exp}, nil
}

// keepIf is l when keep, else its line ending alone (the line stays, empty).
func keepIf(keep bool, l string) string {
	if keep {
		return l
	}
	if strings.HasSuffix(l, "\n") {
		return "\n"
	}
	return ""
}

// parseExpect reads the expect: block (the only lines left in text).
func parseExpect(file, text string) ([]Expectation, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	f, err := parser.ParseBytes([]byte(text), 0)
	if err != nil {
		return nil, scenarios.Errors{{File: file, Field: "expect", Msg: err.Error()}}
	}
	var errs scenarios.Errors
	bad := func(n ast.Node, field, format string, args ...any) {
		line, col := pos(n)
		errs = append(errs, &scenarios.Error{File: file, Line: line, Col: col, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	var out []Expectation
	for _, doc := range f.Docs {
		top, ok := doc.Body.(*ast.MappingNode)
		if !ok || len(top.Values) != 1 {
			continue
		}
		ev := top.Values[0].Value
		m, ok := ev.(*ast.MappingNode)
		if !ok {
			bad(ev, "expect", "want a mapping of rule: value (rules: %s)", strings.Join(Rules(), ", "))
			continue
		}
		for _, mv := range m.Values {
			rule := strings.TrimSpace(mv.Key.String())
			field := "expect." + rule
			if !slices.Contains(Rules(), rule) {
				bad(mv.Key, field, "unknown rule (rules: %s)", strings.Join(Rules(), ", "))
				continue
			}
			v, ok := mv.Value.(ast.ScalarNode)
			if !ok {
				bad(mv.Value, field, "want one value")
				continue
			}
			val := strings.Trim(fmt.Sprint(v.GetValue()), " ")
			if msg := checkExpected(rule, val); msg != "" {
				bad(mv.Value, field, "%s", msg)
				continue
			}
			line, col := pos(mv.Key)
			out = append(out, Expectation{Rule: rule, Value: val, Line: line, Col: col})
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// pos is a node's line and column (0, 0 when it has none).
func pos(n ast.Node) (int, int) {
	if n == nil || n.GetToken() == nil || n.GetToken().Position == nil {
		return 0, 0
	}
	p := n.GetToken().Position
	return p.Line, p.Column
}
