package thresholds

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

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

// Number is the value a literal of the language stands for: 30s → 30 (seconds),
// 1% → 0.01, 1_000 → 1000. The report reads a threshold's bound with it to draw
// the bound on a chart.
func Number(lit string) (float64, error) {
	code, err := rewriteLiterals(lit)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(strings.ReplaceAll(code, "_", ""), 64)
}
