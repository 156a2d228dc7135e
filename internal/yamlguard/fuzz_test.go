package yamlguard

import (
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// astDepth is how deep collections nest in what the YAML library built.
func astDepth(n ast.Node, budget *int) int {
	*budget--
	if n == nil || *budget < 0 {
		return 0
	}
	deepest := func(ns ...ast.Node) int {
		d := 0
		for _, c := range ns {
			d = max(d, astDepth(c, budget))
		}
		return d
	}
	switch x := n.(type) {
	case *ast.MappingNode:
		var ns []ast.Node
		for _, v := range x.Values {
			ns = append(ns, v.Key, v.Value)
		}
		return 1 + deepest(ns...)
	case *ast.MappingValueNode:
		return 1 + deepest(x.Key, x.Value)
	case *ast.SequenceNode:
		return 1 + deepest(x.Values...)
	case *ast.AnchorNode:
		return deepest(x.Value)
	case *ast.TagNode:
		return deepest(x.Value)
	case *ast.MappingKeyNode:
		return deepest(x.Value)
	}
	return 0
}

// FuzzCheck: Check never panics, and what it lets through never nests
// deeper in the parser's tree than the bound: the scan may over-estimate,
// never miss.
func FuzzCheck(f *testing.F) {
	f.Add("a:\n  b: [1, {c: d}]\n  e:\n    - f\n    - - g\n")
	f.Add("a: |\n  [[[[\nb: 'x[' # [[\nc: \"{{\"\n")
	f.Add("- - - - - - - - - - x\n")
	f.Add("a: " + "[[[[[[[[[[[[" + "]]]]]]]]]]]]")
	f.Add("? [a, [b]]\n: {c: [d]}\n")
	f.Add("a: &x [1, [2]]\nb: !!seq [*x]\n")
	f.Add("a: b\n  [c\n")
	lim := Limits{MaxBytes: 1 << 16, MaxDepth: 6, MaxNodes: 2000}
	f.Fuzz(func(t *testing.T, src string) {
		if Check([]byte(src), lim) != nil {
			return
		}
		file, err := func() (f *ast.File, err error) {
			defer func() {
				if recover() != nil {
					f, err = nil, errPanic
				}
			}()
			return parser.ParseBytes([]byte(src), 0)
		}()
		if err != nil || file == nil {
			return
		}
		for _, doc := range file.Docs {
			budget := 100_000
			if d := astDepth(doc.Body, &budget); d > lim.MaxDepth {
				t.Fatalf("passed, but the parser built %d levels (bound %d):\n%s", d, lim.MaxDepth, src)
			}
		}
	})
}

var errPanic = &Error{Msg: "parser panicked"}
