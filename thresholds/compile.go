package thresholds

import (
	"errors"
	"math"
	"reflect"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// Expr is a threshold ready to run: the whole expression, and its left side
// when the expression is a comparison (the value reported beside the verdict).
type Expr struct {
	src        string
	prog, left *vm.Program
}

// Compile compiles src against env's fields to an expression that yields true
// or false. A compile error is explained in env's JSON names.
func Compile(src string, env any) (*Expr, error) {
	prog, err := compileBool(src, env)
	if err != nil {
		return nil, err
	}
	e := &Expr{src: src, prog: prog}
	if bin, ok := prog.Node().(*ast.BinaryNode); ok {
		switch bin.Operator {
		case "<", "<=", ">", ">=", "==", "!=":
			if left, err := expr.Compile(bin.Left.String(), expr.Env(env)); err == nil {
				e.left = left
			}
		}
	}
	return e, nil
}

// compileBool compiles src, its literals rewritten, to a program that yields
// true or false.
func compileBool(src string, env any) (*vm.Program, error) {
	code, err := rewriteLiterals(src)
	if err != nil {
		return nil, err
	}
	prog, err := expr.Compile(code, expr.Env(env), expr.AsBool())
	if err != nil {
		return nil, errors.New(vocabularyOf(reflect.TypeOf(env)).explain(err.Error()))
	}
	return prog, nil
}

// String returns the expression as written.
func (e *Expr) String() string { return e.src }

// Run evaluates the expression against env (a value of the type it was
// compiled against).
func (e *Expr) Run(env any) (bool, error) {
	out, err := expr.Run(e.prog, env)
	if err != nil {
		return false, err
	}
	ok, _ := out.(bool)
	return ok, nil
}

// Left evaluates the left side of a comparison against env: the figure the
// threshold judged. ok is false when the expression is not a comparison or
// its left side is not a finite number (or a yes or no, read as 1 or 0).
func (e *Expr) Left(env any) (v float64, ok bool) {
	if e.left == nil {
		return 0, false
	}
	out, err := expr.Run(e.left, env)
	if err != nil {
		return 0, false
	}
	return toFloat(out)
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		return x, true
	case float32:
		return float64(x), true
	case *float64: // a figure that may be null (the drift's slopes)
		if x == nil {
			return 0, false
		}
		return toFloat(*x)
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
