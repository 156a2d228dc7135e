package thresholds

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Threshold expressions read summary fields by their JSON names
// (delivery.latency.p95, requests.codes["429"]); a duration literal (30s, 250ms,
// 1m) stands for its seconds, a percentage (1%) for its fraction and a size
// (512kB, 1.5MiB) for its bytes, since summary.json keeps latencies in seconds,
// shares as fractions and memory in bytes.

// sizeUnits are the byte units a size literal may end in, matched exactly:
// case tells 1m (a minute) from 1MB, and 1Mb (bits or bytes?) is refused
// rather than guessed.
var sizeUnits = map[string]float64{
	"B":  1,
	"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
}

// rewriteLiterals turns duration, percentage and size literals outside string
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
			case sizeUnits[unit] != 0:
				// The whole unit text must be a size unit: 1MB30s is not a
				// compound and falls to the error below.
				f, err := strconv.ParseFloat(strings.ReplaceAll(num, "_", ""), 64)
				if err != nil {
					return "", fmt.Errorf("%q: not a size", num+unit)
				}
				b.WriteString(strconv.FormatFloat(f*sizeUnits[unit], 'g', -1, 64))
				i = k
			case unit != "":
				d, err := time.ParseDuration(num + unit)
				if err != nil {
					return "", fmt.Errorf("%q: not a number, a duration or a size", num+unit)
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
// 1% → 0.01, 1MB → 1e6 (bytes), 1_000 → 1000. The report reads a threshold's
// bound with it to draw the bound on a chart.
func Number(lit string) (float64, error) {
	code, err := rewriteLiterals(lit)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(strings.ReplaceAll(code, "_", ""), 64)
}
