package scenarios

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// schemaNode is the subset of JSON Schema the generated schema uses.
type schemaNode struct {
	Ref                  string                 `json:"$ref"`
	Type                 string                 `json:"type"`
	Enum                 []any                  `json:"enum"`
	Pattern              string                 `json:"pattern"`
	Minimum              *float64               `json:"minimum"`
	Maximum              *float64               `json:"maximum"`
	Properties           map[string]*schemaNode `json:"properties"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
	Required             []string               `json:"required"`
	Items                *schemaNode            `json:"items"`
	OneOf                []*schemaNode          `json:"oneOf"`
	Defs                 map[string]*schemaNode `json:"$defs"`
}

// check returns the problems of v against n (a small validator for the
// keywords above; enough to tell whether editors would accept a file).
func (n *schemaNode) check(root *schemaNode, v any, path string) []string {
	if n.Ref != "" {
		return root.Defs[strings.TrimPrefix(n.Ref, "#/$defs/")].check(root, v, path)
	}
	if len(n.OneOf) > 0 {
		matched := 0
		for _, o := range n.OneOf {
			if len(o.check(root, v, path)) == 0 {
				matched++
			}
		}
		if matched == 0 {
			return []string{fmt.Sprintf("%s: %v matches no alternative", path, v)}
		}
	}
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, path+": "+fmt.Sprintf(f, a...)) }
	num, isNum := toFloat(v)
	switch n.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad("want an object")
			return errs
		}
		for _, r := range n.Required {
			if _, ok := m[r]; !ok {
				bad("missing %s", r)
			}
		}
		for k, val := range m {
			if p, ok := n.Properties[k]; ok {
				errs = append(errs, p.check(root, val, path+"."+k)...)
				continue
			}
			switch string(n.AdditionalProperties) {
			case "false":
				bad("unknown field %s", k)
			case "", "true":
			default:
				var ap schemaNode
				_ = json.Unmarshal(n.AdditionalProperties, &ap)
				errs = append(errs, ap.check(root, val, path+"."+k)...)
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			bad("want an array")
			return errs
		}
		for i, e := range a {
			if n.Items != nil {
				errs = append(errs, n.Items.check(root, e, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			bad("want a string, got %T", v)
			return errs
		}
		if n.Pattern != "" && !regexp.MustCompile(n.Pattern).MatchString(s) {
			bad("%q does not match %s", s, n.Pattern)
		}
	case "integer", "number":
		if !isNum || n.Type == "integer" && num != float64(int64(num)) {
			bad("want %s, got %v", n.Type, v)
			return errs
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("want a boolean")
		}
	}
	if isNum && n.Minimum != nil && num < *n.Minimum || isNum && n.Maximum != nil && num > *n.Maximum {
		bad("%v out of range", v)
	}
	if len(n.Enum) > 0 {
		found := false
		for _, e := range n.Enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			bad("%v not in %v", v, n.Enum)
		}
	}
	return errs
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// TestSchemaAcceptsBuiltins checks the built-in files against the generated
// schema: what the loader accepts, an editor using the schema accepts too;
// and the schema refuses what the loader refuses for its shape.
func TestSchemaAcceptsBuiltins(t *testing.T) {
	b, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	var root schemaNode
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	for _, n := range Builtins() {
		src, _ := builtinSource(n)
		var v any
		if err := yaml.Unmarshal(src, &v); err != nil {
			t.Fatal(err)
		}
		if errs := root.check(&root, v, n); len(errs) > 0 {
			t.Errorf("the schema refuses built-in %s:\n%s", n, strings.Join(errs, "\n"))
		}
	}
	for _, bad := range []struct{ src, want string }{
		{"api: notify\nlaod: {}\n", "unknown field laod"},                               // a typo
		{"api: sms\n", "not in"},                                                        // a bad enum
		{"api: notify\nload: { rate: fast }\n", "does not match"},                       // a bad rate
		{"api: notify\nclients: 0\n", "matches no alternative"},                         // a count below 1
		{"api: messaging\nmessage: { scenario: [{ sender: x }] }\n", "missing channel"}, // a required field
	} {
		var v any
		if err := yaml.Unmarshal([]byte(bad.src), &v); err != nil {
			t.Fatal(err)
		}
		if errs := strings.Join(root.check(&root, v, "f"), "\n"); !strings.Contains(errs, bad.want) {
			t.Errorf("%q: schema errors %q, want %q", bad.src, errs, bad.want)
		}
	}
}
