package reports

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// ErrBadThreshold means a threshold expression does not compile or does not
// give a yes or no.
var ErrBadThreshold = errors.New("bad threshold")

// Threshold expressions read summary fields by their JSON names
// (delivery.latency.p95, requests.codes["429"]); a duration literal (30s, 250ms,
// 1m) stands for its seconds and a percentage (1%) for its fraction, since
// summary.json keeps latencies in seconds and shares as fractions.

// rewriteLiterals turns duration and percentage literals outside string
// literals into plain numbers.
func rewriteLiterals(src string) (string, error) {
	var b strings.Builder
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return "", fmt.Errorf("unterminated string at %d", i+1)
			}
			b.WriteString(src[i : j+1])
			i = j + 1
		case isDigit(c) && (i == 0 || !isIdent(src[i-1]) && src[i-1] != '.'):
			j := i
			for j < len(src) && (isDigit(src[j]) || src[j] == '.' || src[j] == '_') {
				j++
			}
			num := src[i:j]
			k := j // a unit, possibly compound: 1m30s
			for k < len(src) && (isIdent(src[k]) || src[k] == '.' || src[k] == 0xc2 || src[k] == 0xb5) {
				k++
			}
			unit := src[j:k]
			switch {
			case unit != "":
				d, err := time.ParseDuration(num + unit)
				if err != nil {
					return "", fmt.Errorf("%q: not a number or a duration", num+unit)
				}
				b.WriteString(strconv.FormatFloat(d.Seconds(), 'g', -1, 64))
				i = k
			case j < len(src) && src[j] == '%' && !followsOperand(src[j+1:]):
				f, err := strconv.ParseFloat(strings.ReplaceAll(num, "_", ""), 64)
				if err != nil {
					return "", fmt.Errorf("%q: not a percentage", num+"%")
				}
				b.WriteString(strconv.FormatFloat(f/100, 'g', -1, 64))
				i = j + 1
			default:
				b.WriteString(num)
				i = j
			}
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// followsOperand reports whether rest starts (after spaces) with something a
// modulo operator could take: then "%" is the operator, not a percentage.
func followsOperand(rest string) bool {
	rest = strings.TrimLeft(rest, " \t")
	return rest != "" && (isIdent(rest[0]) || rest[0] == '(' || rest[0] == '.')
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdent(c byte) bool  { return isDigit(c) || isLetter(c) || c == '_' }

// compiled is a threshold ready to run: the whole expression, and its left side
// when the expression is a comparison (the value reported beside the verdict).
type compiled struct {
	src        string
	prog, left *vm.Program
	paths      [][]any // fixed paths of the fields it reads, for the no-data rule (nodata.go)
}

// CheckThreshold says what is wrong with a threshold expression (an unknown
// field, a syntax error, a result that is not true or false), or nil: scenario
// validation calls it so a mistyped threshold stops the run before it starts.
func CheckThreshold(src string) error {
	_, err := compileBool(src)
	return err
}

// compileBool compiles src against the summary's fields to a program that
// yields true or false; a compile error is explained in summary.json's names.
func compileBool(src string) (*vm.Program, error) {
	code, err := rewriteLiterals(src)
	if err != nil {
		return nil, err
	}
	prog, err := expr.Compile(code, expr.Env(Summary{}), expr.AsBool())
	if err != nil {
		return nil, errors.New(explain(err.Error()))
	}
	return prog, nil
}

// CompileThreshold checks one threshold expression against the summary's fields.
func CompileThreshold(src string) (*compiled, error) {
	prog, err := compileBool(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadThreshold, src, err)
	}
	if at := computedLatencyRead(prog.Node()); at != "" {
		return nil, fmt.Errorf("%w: %s: %s reads a latency through a computed path, so a figure without data could not be told from 0: name it (delivery.by_channel[\"sms\"].p95)", ErrBadThreshold, src, at)
	}
	c := &compiled{src: src, prog: prog, paths: memberPaths(prog.Node())}
	if bin, ok := prog.Node().(*ast.BinaryNode); ok {
		switch bin.Operator {
		case "<", "<=", ">", ">=", "==", "!=":
			if left, err := expr.Compile(bin.Left.String(), expr.Env(Summary{})); err == nil {
				c.left = left
			}
		}
	}
	return c, nil
}

func (c *compiled) eval(s *Summary) Threshold {
	t := Threshold{Expr: c.src}
	var why []string
	for _, p := range c.paths {
		if r := s.noData(p); r != "" {
			name := pathString(p)
			if !slices.Contains(t.NoData, name) {
				t.NoData = append(t.NoData, name)
				why = append(why, name+": "+r)
			}
		}
	}
	if len(why) > 0 {
		t.Error = "no data: " + strings.Join(why, "; ")
		return t
	}
	out, err := expr.Run(c.prog, *s)
	if err != nil {
		t.Error = err.Error()
		return t
	}
	t.OK, _ = out.(bool)
	if t.OK {
		t.Value = 1
	}
	if c.left != nil {
		if v, err := expr.Run(c.left, *s); err == nil {
			if f, ok := toFloat(v); ok {
				t.Value = round6(f)
			}
		}
	}
	return t
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
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Evaluate compiles every threshold first (any that does not compile is bad
// input, reported together), then evaluates them all against s and sets the
// verdict (and ok).
func (s *Summary) Evaluate(exprs []string) error {
	progs := make([]*compiled, 0, len(exprs))
	var errs []error
	for _, e := range exprs {
		c, err := CompileThreshold(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		progs = append(progs, c)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	s.Thresholds = make([]Threshold, 0, len(progs))
	for _, c := range progs {
		s.Thresholds = append(s.Thresholds, c.eval(s))
	}
	s.decide()
	return nil
}
