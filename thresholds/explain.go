package thresholds

import (
	"iter"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/msgload/msgload/internal/suggest"
)

// Compile errors of expr name Go types ("type reports.Delivery has no field
// lostt"); a scenario author knows summary.json, so explain tells them in its
// words: what the object has, and the nearest name.
var (
	noField     = regexp.MustCompile(`type (\w+)\.(\w+) has no field (\w+)`)
	unknownName = regexp.MustCompile(`unknown name (\w+)`)
)

// vocabulary is what explain needs to know of an environment type.
type vocabulary struct {
	pkg      string              // the package name of the environment's type, as expr prints it
	top      string              // the environment type's name
	fieldsOf map[string][]string // each struct type reachable from the environment → its JSON names
	deep     []string            // dotted paths to every field below the top
}

var vocabularies sync.Map // reflect.Type → *vocabulary

// vocabularyOf returns the vocabulary of environment type t, built once.
func vocabularyOf(t reflect.Type) *vocabulary {
	key := t
	if v, ok := vocabularies.Load(key); ok {
		return v.(*vocabulary)
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	v := &vocabulary{fieldsOf: map[string][]string{}}
	if t != nil && t.Kind() == reflect.Struct {
		v.pkg, v.top = path(t.PkgPath()), t.Name()
		v.walkFields(t)
		v.deep = deepPaths(t)
	}
	actual, _ := vocabularies.LoadOrStore(key, v)
	return actual.(*vocabulary)
}

// path is the last element of a package path: the name expr prints.
func path(pkgPath string) string {
	return pkgPath[strings.LastIndexByte(pkgPath, '/')+1:]
}

// walkFields maps each struct type reachable from t to its JSON names.
func (v *vocabulary) walkFields(t reflect.Type) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || v.fieldsOf[t.Name()] != nil {
		return
	}
	names := []string{}
	v.fieldsOf[t.Name()] = names
	for f, name := range jsonFields(t) {
		names = append(names, name)
		v.walkFields(f.Type)
	}
	slices.Sort(names)
	v.fieldsOf[t.Name()] = names
}

// jsonFields yields the exported fields of struct type t that its JSON holds
// and an expression can read (not `expr:"-"`), with their JSON names.
func jsonFields(t reflect.Type) iter.Seq2[reflect.StructField, string] {
	return func(yield func(reflect.StructField, string) bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() || f.Tag.Get("expr") == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if !yield(f, name) {
				return
			}
		}
	}
}

// deepPaths lists the dotted paths from top through nested objects of its
// package (not lists or maps, which need an index) to every field below the
// top, in order.
func deepPaths(top reflect.Type) []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for f, name := range jsonFields(t) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() {
				walk(ft, prefix+name+".")
				continue
			}
			if prefix != "" {
				out = append(out, prefix+name)
			}
		}
	}
	walk(top, "")
	return out
}

// explain rewrites an expr compile error in the environment's JSON names.
func (v *vocabulary) explain(msg string) string {
	if m := noField.FindStringSubmatch(msg); m != nil && m[1] == v.pkg {
		if names, ok := v.fieldsOf[m[2]]; ok {
			return noField.ReplaceAllString(msg, "no field "+m[3]+hint(m[3], names))
		}
	}
	if m := unknownName.FindStringSubmatch(msg); m != nil && v.pkg != "" {
		top := v.fieldsOf[v.top]
		h := hint(m[1], top)
		// A field written without its object ("lost" for delivery.lost) is
		// named in full when it is nearer than any top-level name.
		_, topD := suggest.Nearest(m[1], top, 1<<20)
		if deeper, d := suggest.NearestPaths(m[1], v.deep, 3); len(deeper) > 0 && d < topD {
			h = ", did you mean " + strings.Join(deeper, " or ") + "? (it has: " + strings.Join(top, ", ") + ")"
		}
		return unknownName.ReplaceAllString(msg, "unknown name "+m[1]+h)
	}
	return msg
}

// hint names the nearest of names to got (when it is near) and lists them all.
func hint(got string, names []string) string {
	s := ""
	if best, _ := suggest.Nearest(got, names, len(got)/2+1); best != "" {
		s = ", did you mean " + best + "?"
	}
	return s + " (it has: " + strings.Join(names, ", ") + ")"
}
