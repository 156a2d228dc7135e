package reports

import (
	"iter"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/msgload/msgload/internal/suggest"
)

// Compile errors of expr name Go types ("type reports.Delivery has no field
// lostt"); a scenario author knows summary.json, so explain tells them in its
// words: what the object has, and the nearest name.
var (
	noField     = regexp.MustCompile(`type reports\.(\w+) has no field (\w+)`)
	unknownName = regexp.MustCompile(`unknown name (\w+)`)
)

// fieldsOf maps each struct type reachable from Summary to its JSON names.
var fieldsOf = func() map[string][]string {
	m := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || m[t.Name()] != nil {
			return
		}
		names := []string{}
		m[t.Name()] = names
		for f, name := range jsonFields(t) {
			names = append(names, name)
			walk(f.Type)
		}
		slices.Sort(names)
		m[t.Name()] = names
	}
	walk(reflect.TypeFor[Summary]())
	return m
}()

// jsonFields yields the exported fields of struct type t that summary.json
// holds, with their JSON names.
func jsonFields(t reflect.Type) iter.Seq2[reflect.StructField, string] {
	return func(yield func(reflect.StructField, string) bool) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
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

// explain rewrites an expr compile error in summary.json's terms.
func explain(msg string) string {
	if m := noField.FindStringSubmatch(msg); m != nil {
		if names, ok := fieldsOf[m[1]]; ok {
			return noField.ReplaceAllString(msg, "no field "+m[2]+hint(m[2], names))
		}
	}
	if m := unknownName.FindStringSubmatch(msg); m != nil {
		top := fieldsOf["Summary"]
		h := hint(m[1], top)
		// A field written without its object ("lost" for delivery.lost) is
		// named in full when it is nearer than any top-level name.
		_, topD := suggest.Nearest(m[1], top, 1<<20)
		if deeper, d := suggest.NearestPaths(m[1], deepPaths, 3); len(deeper) > 0 && d < topD {
			h = ", did you mean " + strings.Join(deeper, " or ") + "? (it has: " + strings.Join(top, ", ") + ")"
		}
		return unknownName.ReplaceAllString(msg, "unknown name "+m[1]+h)
	}
	return msg
}

// deepPaths lists the dotted paths from Summary through nested objects (not
// lists or maps, which need an index) to every field below the top, in order.
var deepPaths = func() []string {
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
	walk(reflect.TypeFor[Summary](), "")
	return out
}()

// hint names the nearest of names to got (when it is near) and lists them all.
func hint(got string, names []string) string {
	s := ""
	if best, _ := suggest.Nearest(got, names, len(got)/2+1); best != "" {
		s = ", did you mean " + best + "?"
	}
	return s + " (it has: " + strings.Join(names, ", ") + ")"
}
