package thresholds

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// Paths returns the fixed paths of the fields the expression reads: the
// identifier, then each property (a string) or index (an int). A caller can
// look each up before evaluating (reports refuses to judge a figure that has
// no data).
func (e *Expr) Paths() [][]any {
	var paths [][]any
	node := e.prog.Node()
	ast.Walk(&node, visitor(func(n *ast.Node) {
		if m, ok := (*n).(*ast.MemberNode); ok {
			if p := memberPath(m); p != nil {
				paths = append(paths, p)
			}
		}
	}))
	return paths
}

// ComputedRead returns the first place where the expression reads a field
// through a path that is not fixed (a computed map key, a closure over several
// objects) and match(type of the object read, field name) holds; "" when none.
// The type is the interface type when the object is only known at run time
// (values(delivery.by_channel) is []any).
func (e *Expr) ComputedRead(match func(owner reflect.Type, field string) bool) string {
	found := ""
	node := e.prog.Node()
	ast.Walk(&node, visitor(func(n *ast.Node) {
		m, ok := (*n).(*ast.MemberNode)
		if !ok || found != "" || m.Node == nil || memberPath(m) != nil {
			return
		}
		p, ok := m.Property.(*ast.StringNode)
		if !ok {
			return
		}
		if t := m.Node.Type(); t != nil && match(t, p.Value) {
			found = m.String()
		}
	}))
	return found
}

type visitor func(*ast.Node)

func (v visitor) Visit(n *ast.Node) { v(n) }

// memberPath is the fixed path of m, or nil when part of it is computed.
func memberPath(m *ast.MemberNode) []any {
	var prop any
	switch p := m.Property.(type) {
	case *ast.StringNode:
		prop = p.Value
	case *ast.IntegerNode:
		prop = p.Value
	default:
		return nil
	}
	var head []any
	switch n := m.Node.(type) {
	case *ast.IdentifierNode:
		head = []any{n.Value}
	case *ast.MemberNode:
		head = memberPath(n)
	case *ast.ChainNode:
		if mm, ok := n.Node.(*ast.MemberNode); ok {
			head = memberPath(mm)
		}
	}
	if head == nil {
		return nil
	}
	return append(head, prop)
}

// PathString writes a path as a threshold would: delivery.by_channel["sms"].p95.
func PathString(p []any) string {
	var b strings.Builder
	for i, e := range p {
		switch v := e.(type) {
		case string:
			if i > 0 && !isName(v) {
				b.WriteString("[" + strconv.Quote(v) + "]")
				continue
			}
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(v)
		case int:
			b.WriteString("[" + strconv.Itoa(v) + "]")
		}
	}
	return b.String()
}

func isName(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdent(s[i]) {
			return false
		}
	}
	return true
}
