package reports

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
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
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			names = append(names, name)
			walk(f.Type)
		}
		slices.Sort(names)
		m[t.Name()] = names
	}
	walk(reflect.TypeFor[Summary]())
	return m
}()

// explain rewrites an expr compile error in summary.json's terms.
func explain(msg string) string {
	if m := noField.FindStringSubmatch(msg); m != nil {
		if names, ok := fieldsOf[m[1]]; ok {
			return noField.ReplaceAllString(msg, "no field "+m[2]+hint(m[2], names))
		}
	}
	if m := unknownName.FindStringSubmatch(msg); m != nil {
		return unknownName.ReplaceAllString(msg, "unknown name "+m[1]+hint(m[1], fieldsOf["Summary"]))
	}
	return msg
}

// hint names the nearest of names to got (when it is near) and lists them all.
func hint(got string, names []string) string {
	best, bestD := "", len(got)/2+2
	for _, n := range names {
		if d := editDistance(strings.ToLower(got), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	s := ""
	if best != "" {
		s = ", did you mean " + best + "?"
	}
	return s + " (it has: " + strings.Join(names, ", ") + ")"
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
