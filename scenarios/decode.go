package scenarios

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/msgload/msgload/internal/suggest"
)

// decoder maps a YAML AST onto Go values by reflection and keeps going after a
// problem, so that a file's problems are all reported at once. It reads the json
// struct tags (the same names the JSON Schema and the YAML encoder use), refuses
// unknown and duplicate fields, and records the position of every field path so
// that checks made after decoding can point at the right line and column.
type decoder struct {
	file    string
	errs    Errors
	pos     map[string]Pos
	bad     map[string]bool // paths with a problem already reported
	anchors map[string]ast.Node
	depth   int
	nodes   int // values decoded, aliases included
}

// maxNodes bounds the values one file may decode to, so that aliases cannot
// expand exponentially ("billion laughs").
const maxNodes = 100_000

// scalarSetter is implemented by value types that parse themselves from a scalar
// (Rate, Duration, Percent).
type scalarSetter interface{ setScalar(string) error }

// nodeDecoder is implemented by types with more than one shape (Target, Clients).
type nodeDecoder interface {
	decodeNode(d *decoder, n ast.Node, path string)
}

func newDecoder(file string) *decoder {
	return &decoder{file: file, pos: map[string]Pos{}, bad: map[string]bool{}, anchors: map[string]ast.Node{}}
}

func posOf(n ast.Node) Pos {
	if n == nil {
		return Pos{}
	}
	t := n.GetToken()
	if t == nil || t.Position == nil {
		return Pos{}
	}
	return Pos{Line: t.Position.Line, Col: t.Position.Column}
}

func (d *decoder) errorf(n ast.Node, path, format string, args ...any) {
	d.bad[path] = true
	p := posOf(n)
	d.errs = append(d.errs, &Error{File: d.file, Line: p.Line, Col: p.Col, Field: path, Msg: fmt.Sprintf(format, args...)})
}

// unwrap resolves anchors, aliases and tags to the node that holds the value.
func (d *decoder) unwrap(n ast.Node, path string) ast.Node {
	for i := 0; i < 16 && n != nil; i++ {
		switch x := n.(type) {
		case *ast.AnchorNode:
			if x.Name != nil {
				d.anchors[x.Name.GetToken().Value] = x.Value
			}
			n = x.Value
		case *ast.AliasNode:
			name := ""
			if x.Value != nil {
				name = x.Value.GetToken().Value
			}
			v, ok := d.anchors[name]
			if !ok {
				d.errorf(n, path, "unknown alias *%s", name)
				return nil
			}
			n = v
		case *ast.TagNode:
			n = x.Value
		case *ast.CommentGroupNode:
			return nil
		default:
			return n
		}
	}
	return n
}

func kindName(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode, nil:
		return "null"
	default:
		return "a scalar"
	}
}

// scalar returns the text of a scalar node.
func scalar(n ast.Node) (string, bool) {
	switch x := n.(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		if x.Value == nil {
			return "", true
		}
		return x.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return n.GetToken().Value, true
	}
	return "", false
}

// mappingValues returns the entries of a mapping node (a single-entry mapping is
// parsed as a bare MappingValueNode).
func mappingValues(n ast.Node) ([]*ast.MappingValueNode, bool) {
	switch x := n.(type) {
	case *ast.MappingNode:
		return x.Values, true
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{x}, true
	}
	return nil, false
}

func keyString(k ast.MapKeyNode) string {
	if k == nil {
		return ""
	}
	if s, ok := scalar(k); ok {
		return s
	}
	if t := k.GetToken(); t != nil {
		return t.Value
	}
	return ""
}

func joinPath(base, field string) string {
	if base == "" {
		return field
	}
	return base + "." + field
}

var (
	scalarSetterType = reflect.TypeFor[scalarSetter]()
	nodeDecoderType  = reflect.TypeFor[nodeDecoder]()
)

// decode fills v (addressable) from n.
func (d *decoder) decode(n ast.Node, v reflect.Value, path string) {
	d.depth++
	defer func() { d.depth-- }()
	if !d.within(n, path) {
		return
	}
	n = d.unwrap(n, path)
	if n == nil {
		return
	}
	if path != "" {
		// a field's position is its key (set by decodeStruct), except for scalars,
		// whose problems are in the value
		_, seen := d.pos[path]
		if _, isScalar := scalar(n); isScalar || !seen {
			d.pos[path] = posOf(n)
		}
	}
	if _, ok := n.(*ast.NullNode); ok {
		return // null leaves the zero value (defaults apply later)
	}
	if d.decodeCustom(n, v, path) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), path)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	default:
		d.decodeScalar(n, v, path)
	}
}

// within reports whether the document is still within the decoder's bounds
// (depth, count of values) at n, saying so once when it is not.
func (d *decoder) within(n ast.Node, path string) bool {
	if d.depth > 64 {
		d.errorf(n, path, "nested too deeply")
		return false
	}
	d.nodes++
	if d.nodes > maxNodes {
		if d.nodes == maxNodes+1 {
			d.errorf(n, path, "more than %d values (aliases expanding too far?)", maxNodes)
		}
		return false
	}
	return true
}

// decodeCustom decodes n through v's own decoder (nodeDecoder, or
// scalarSetter from a scalar); false when v has none.
func (d *decoder) decodeCustom(n ast.Node, v reflect.Value, path string) bool {
	if !v.CanAddr() {
		return false
	}
	pv := v.Addr()
	if pv.Type().Implements(nodeDecoderType) {
		pv.Interface().(nodeDecoder).decodeNode(d, n, path)
		return true
	}
	if !pv.Type().Implements(scalarSetterType) {
		return false
	}
	s, ok := scalar(n)
	if !ok {
		d.errorf(n, path, "want a scalar, got %s", kindName(n))
		return true
	}
	if err := pv.Interface().(scalarSetter).setScalar(s); err != nil {
		d.errorf(n, path, "%v", err)
	}
	return true
}

// decodeSlice fills the list v from the sequence n.
func (d *decoder) decodeSlice(n ast.Node, v reflect.Value, path string) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.errorf(n, path, "want a list, got %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(seq.Values), len(seq.Values))
	for i, e := range seq.Values {
		d.decode(e, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

// decodeMap fills the map v from the mapping n, refusing a key written twice.
func (d *decoder) decodeMap(n ast.Node, v reflect.Value, path string) {
	vals, ok := mappingValues(n)
	if !ok {
		d.errorf(n, path, "want a mapping, got %s", kindName(n))
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(vals))
	seen := map[string]bool{}
	for _, mv := range vals {
		k := keyString(mv.Key)
		if seen[k] {
			d.errorf(mv.Key, joinPath(path, k), "duplicate key %q", k)
			continue
		}
		seen[k] = true
		e := reflect.New(v.Type().Elem()).Elem()
		d.decode(mv.Value, e, joinPath(path, k))
		m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
	}
	v.Set(m)
}

// decodeScalar fills v, a string, bool or number, from the scalar n.
func (d *decoder) decodeScalar(n ast.Node, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		s, ok := scalar(n)
		if !ok {
			d.errorf(n, path, "want a string, got %s", kindName(n))
			return
		}
		v.SetString(s)
	case reflect.Bool:
		if b, ok := n.(*ast.BoolNode); ok {
			v.SetBool(b.Value)
			return
		}
		s, _ := scalar(n)
		b, err := strconv.ParseBool(s)
		if err != nil {
			d.errorf(n, path, "want true or false, got %s", describe(n, s))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		s, ok := scalar(n)
		i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, v.Type().Bits())
		if !ok || err != nil {
			d.errorf(n, path, "want a whole number, got %s", describe(n, s))
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		s, ok := scalar(n)
		f, err := strconv.ParseFloat(s, 64)
		if !ok || err != nil {
			d.errorf(n, path, "want a number, got %s", describe(n, s))
			return
		}
		v.SetFloat(f)
	default:
		d.errorf(n, path, "cannot decode into %s", v.Type())
	}
}

func describe(n ast.Node, s string) string {
	if _, ok := scalar(n); ok {
		return strconv.Quote(s)
	}
	return kindName(n)
}

// fieldIndex maps json names to struct field indexes.
func fieldIndex(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || name == "" {
			continue
		}
		m[name] = i
	}
	return m
}

func (d *decoder) decodeStruct(n ast.Node, v reflect.Value, path string) {
	vals, ok := mappingValues(n)
	if !ok {
		d.errorf(n, path, "want a mapping, got %s", kindName(n))
		return
	}
	idx := fieldIndex(v.Type())
	seen := map[string]bool{}
	for _, mv := range vals {
		k := keyString(mv.Key)
		fp := joinPath(path, k)
		if k == "<<" {
			d.errorf(mv.Key, fp, "merge keys (<<) are not supported")
			continue
		}
		i, ok := idx[k]
		if !ok {
			d.errorf(mv.Key, fp, "unknown field%s", suggestField(k, idx))
			continue
		}
		if seen[k] {
			d.errorf(mv.Key, fp, "duplicate field")
			continue
		}
		seen[k] = true
		d.pos[fp] = posOf(mv.Key)
		d.decode(mv.Value, v.Field(i), fp)
	}
}

// suggestField names the known field closest to k, if any is close.
func suggestField(k string, idx map[string]int) string {
	best, _ := suggest.Nearest(k, slices.Collect(maps.Keys(idx)), 2)
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// decodeNode reads "embedded" or { baseUrl, tokenUrl, metrics, memoryMetric }.
func (t *Target) decodeNode(d *decoder, n ast.Node, path string) {
	if s, ok := scalar(n); ok {
		if s != "embedded" {
			d.errorf(n, path, "want embedded or a mapping { baseUrl, tokenUrl, metrics, memoryMetric }, got %q", s)
			return
		}
		*t = Target{Embedded: true}
		return
	}
	type plain Target
	var p plain
	d.decodeStruct(n, reflect.ValueOf(&p).Elem(), path)
	*t = Target(p)
}

// MarshalYAML writes "embedded" or the mapping.
func (t Target) MarshalYAML() (any, error) {
	if t.Embedded {
		return "embedded", nil
	}
	type plain Target
	return plain(t), nil
}

// IsZero reports whether no target is set.
func (t Target) IsZero() bool {
	return !t.Embedded && t.BaseURL == "" && t.TokenURL == "" && t.Metrics == "" && t.MemoryMetric == ""
}

// decodeNode reads a count or a list of credentials.
func (c *Clients) decodeNode(d *decoder, n ast.Node, path string) {
	if _, ok := n.(*ast.SequenceNode); ok {
		var list []Cred
		d.decode(n, reflect.ValueOf(&list).Elem(), path)
		*c = Clients{N: len(list), List: list}
		return
	}
	s, ok := scalar(n)
	i, err := strconv.Atoi(s)
	if !ok || err != nil || i < 1 {
		d.errorf(n, path, "want a count of at least 1 or a list of { clientId, clientSecret }, got %s", describe(n, s))
		return
	}
	*c = Clients{N: i}
}

// MarshalYAML writes the count, or the list.
func (c Clients) MarshalYAML() (any, error) {
	if c.List != nil {
		return c.List, nil
	}
	return c.N, nil
}

// IsZero reports whether clients is unset.
func (c Clients) IsZero() bool { return c.N == 0 && c.List == nil }
