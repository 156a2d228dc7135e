package thresholds

import "github.com/expr-lang/expr/ast"

// UpperBound returns the fixed path of the figure the expression bounds from
// above, when the whole expression is one comparison of a field with a
// literal that holds only while the field stays under (or at) a number:
// `f < c`, `f <= c`, `f == c`, or the same written the other way round
// (`c > f`). ok is false for any other shape. A live evaluator uses it to
// tell a threshold that can never hold again once it fails (the bounded
// figure only grows) from one that may recover.
func (e *Expr) UpperBound() (path []any, ok bool) {
	bin, isBin := e.prog.Node().(*ast.BinaryNode)
	if !isBin {
		return nil, false
	}
	op := bin.Operator
	field, lit := bin.Left, bin.Right
	if isNumber(field) && !isNumber(lit) {
		field, lit = lit, field
		op = map[string]string{">": "<", ">=": "<=", "==": "=="}[op]
	}
	if op != "<" && op != "<=" && op != "==" || !isNumber(lit) {
		return nil, false
	}
	m, isMember := field.(*ast.MemberNode)
	if !isMember {
		return nil, false
	}
	p := memberPath(m)
	return p, p != nil
}

// isNumber says whether n is a number literal (a rewritten duration,
// percentage or size is one).
func isNumber(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		return true
	case *ast.UnaryNode:
		return x.Operator == "-" && isNumber(x.Node)
	}
	return false
}

// Compares says whether the expression is a comparison whose left side can be
// evaluated alone (Left).
func (e *Expr) Compares() bool { return e.left != nil }
