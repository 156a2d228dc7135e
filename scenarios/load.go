package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/msgload/msgload/internal/yamlguard"
	"github.com/msgload/msgload/rundir"
)

//go:embed *.yaml
var library embed.FS

// maxFileSize bounds a scenario file, counted while reading it (a device or
// a pipe has no useful stat size). Its nesting and node count are bounded by
// yamlguard.Default before the YAML parser sees it.
const maxFileSize = 1 << 20

// limits bound a scenario's text: maxFileSize, and yamlguard's nesting depth
// and node count.
var limits = yamlguard.Limits{MaxBytes: maxFileSize, MaxDepth: yamlguard.Default.MaxDepth, MaxNodes: yamlguard.Default.MaxNodes}

// Builtins returns the names of the built-in scenarios, sorted.
func Builtins() []string {
	ents, _ := fs.ReadDir(library, ".")
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// builtinSource returns the text of a built-in scenario.
func builtinSource(name string) ([]byte, bool) {
	b, err := library.ReadFile(name + ".yaml")
	return b, err == nil
}

// Load reads a built-in scenario by name ("smoke") or a scenario file by path,
// expands ${VAR} and ${VAR:-default} through getenv, decodes it refusing unknown
// fields, applies defaults and checks it. Every problem is reported at once as
// an Errors value. Built-ins report their file as "scenarios/NAME.yaml".
func Load(nameOrPath string, getenv func(string) string) (*Scenario, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if src, ok := builtinSource(nameOrPath); ok && !strings.ContainsAny(nameOrPath, `/\`) {
		return Parse("scenarios/"+nameOrPath+".yaml", "", src, getenv)
	}
	src, err := yamlguard.ReadFile(nameOrPath, maxFileSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %q is neither a built-in (%s) nor a file", errNotFound, nameOrPath, strings.Join(Builtins(), ", "))
		}
		if errors.Is(err, yamlguard.ErrTooLarge) || errors.Is(err, yamlguard.ErrNotRegular) {
			return nil, Errors{{File: nameOrPath, Msg: err.Error()}}
		}
		return nil, fmt.Errorf("read scenario %q: %w", nameOrPath, err)
	}
	return Parse(nameOrPath, filepath.Dir(nameOrPath), src, getenv)
}

// Parse is Load on text already read: file names it in errors, dir is where
// relative paths in it (CSV recipients, replay files) are resolved ("" for none).
func Parse(file, dir string, src []byte, getenv func(string) string) (*Scenario, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	src = yamlguard.StripBOM(src)
	// bound the text before the parser sees it: its cost grows with the
	// square of the nesting
	if ge := yamlguard.Check(src, limits); ge != nil {
		return nil, Errors{guardError(file, ge)}
	}
	expanded, errs, cols := expand(file, src, getenv, int(limits.MaxBytes))
	if ge := yamlguard.Check(expanded, limits); ge != nil {
		// values of ${VAR} crossed a bound
		e := guardError(file, ge)
		e.Msg = "after ${VAR} expansion: " + e.Msg
		cols.remap(Errors{e}, nil)
		errs = append(errs, e)
		errs.sort()
		return nil, errs
	}
	f, err := parser.ParseBytes(expanded, 0)
	if err != nil {
		se := syntaxError(file, err)
		cols.remap(Errors{se}, nil)
		errs = append(errs, se)
		errs.sort()
		return nil, errs
	}
	d := newDecoder(file)
	s := &Scenario{File: file}
	var body ast.Node
	docs := 0
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if _, isComment := doc.Body.(*ast.CommentGroupNode); isComment {
			continue
		}
		docs++
		if docs == 1 {
			body = doc.Body
		} else {
			d.errorf(doc.Body, "", "a scenario file holds one YAML document; use parts: for several")
		}
	}
	if body == nil {
		d.errs = append(d.errs, &Error{File: file, Msg: "empty scenario file"})
	} else {
		d.decode(body, reflectValue(s), "")
	}
	cols.remap(d.errs, d.pos) // positions as written, before ${VAR} expansion
	errs = append(errs, d.errs...)
	// the parser read invalid UTF-8 as U+FFFD: find it in the text and name
	// the field it is in
	for _, p := range yamlguard.InvalidUTF8(expanded, 20) {
		col := p.Col
		if cols != nil {
			col = cols.col(p.Line, p.Col)
		}
		field := fieldAt(d.pos, p.Line, col)
		d.bad[field] = true
		errs = append(errs, &Error{File: file, Line: p.Line, Col: col, Field: field, Msg: "not valid UTF-8"})
	}
	s.pos, s.dir = d.pos, dir
	c := &checker{file: file, dir: dir, pos: d.pos, bad: d.bad}
	if body != nil {
		if s.Name == "" {
			s.Name = strings.TrimSuffix(path.Base(filepath.ToSlash(file)), path.Ext(file))
		}
		c.scenario(s, "")
		errs = append(errs, c.errs...)
	}
	errs = dropShadowed(errs)
	if len(errs) > 0 {
		errs.sort()
		return nil, errs
	}
	return s, nil
}

// dropShadowed removes the problems on a line where a ${VAR} could not be
// expanded: the missing variable is the one problem there (a "required" or a
// bad empty value would only repeat it).
func dropShadowed(errs Errors) Errors {
	envLines := map[int]bool{}
	for _, e := range errs {
		if e.Field == "" && strings.HasPrefix(e.Msg, "environment variable ") {
			envLines[e.Line] = true
		}
	}
	if len(envLines) == 0 {
		return errs
	}
	out := errs[:0]
	for _, e := range errs {
		if e.Field != "" && envLines[e.Line] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Validate checks s again after a caller changed it (for example a flag that
// overrides maxMessages or the target); it returns Errors or nil.
func (s *Scenario) Validate() error {
	c := &checker{file: s.File, dir: s.dir, pos: s.pos}
	c.scenario(s, "")
	if len(c.errs) > 0 {
		c.errs.sort()
		return c.errs
	}
	return nil
}

// fieldAt is the field whose position is nearest before line:col on that
// line ("" when none is on it).
func fieldAt(pos map[string]Pos, line, col int) string {
	best, bestCol := "", 0
	for path, p := range pos {
		if p.Line != line || p.Col > col {
			continue
		}
		if p.Col > bestCol || (p.Col == bestCol && len(path) > len(best)) {
			best, bestCol = path, p.Col
		}
	}
	return best
}

func guardError(file string, ge *yamlguard.Error) *Error {
	return &Error{File: file, Line: ge.Line, Col: ge.Col, Msg: ge.Msg}
}

func syntaxError(file string, err error) *Error {
	var te interface {
		GetToken() *token.Token
		GetMessage() string
	}
	if errors.As(err, &te) {
		e := &Error{File: file, Msg: "YAML: " + te.GetMessage()}
		if t := te.GetToken(); t != nil && t.Position != nil {
			e.Line, e.Col = t.Position.Line, t.Position.Column
		}
		return e
	}
	return &Error{File: file, Msg: "YAML: " + err.Error()}
}

// checker applies the defaults (defaults.go) and the derived values, then
// checks (checks.go), collecting every problem with its position.
type checker struct {
	file, dir string
	pos       map[string]Pos
	bad       map[string]bool // paths the decoder already reported
	errs      Errors
}

// errorf reports a problem at field path p, or at its nearest parent with a
// known position.
func (c *checker) errorf(p, format string, args ...any) {
	if c.bad[p] {
		return // one problem per field: the decoder's is the precise one
	}
	e := &Error{File: c.file, Field: p, Msg: fmt.Sprintf(format, args...)}
	for q := p; ; {
		if pos, ok := c.pos[q]; ok {
			e.Line, e.Col = pos.Line, pos.Col
			break
		}
		i := strings.LastIndexAny(q, ".[")
		if i < 0 {
			break
		}
		q = q[:i]
	}
	c.errs = append(c.errs, e)
}

func (c *checker) set(p string) bool { _, ok := c.pos[p]; return ok }

var (
	apis     = []string{rundir.APIMessaging, rundir.APINotify}
	profiles = []string{"constant", "ramp", "steps", "sine", "replay"}
	// replay: the formats replay.Load reads, and the externalId modes
	replayFormats     = []string{"auto", "msgload", "har", "vegeta"}
	replayExternalIDs = []string{"new", "keep"}
	modes             = []string{"respect", "exceed"}
	channels          = rundir.Channels()
	mediaTypes        = rundir.AttachmentTypes()
	states            = rundir.States()
	algorithms        = []string{"fixed", "sliding", "token-bucket"}
	fills             = []string{"ascii", "cyrillic", "emoji"}
	deliveryVia       = []string{"sink", "poll", "none"}
)

func (c *checker) oneOf(p, v string, allowed []string) bool {
	if !slices.Contains(allowed, v) {
		c.errorf(p, "%q is not one of %s", v, strings.Join(allowed, ", "))
		return false
	}
	return true
}
