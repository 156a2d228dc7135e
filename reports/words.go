package reports

import (
	"math"
	"strconv"
	"strings"
)

// The words the analysis says its reasons in, which the writers
// (reports/render) say the same way.

// Num shows a figure as Go writes it shortest, without an exponent: 0.5,
// 120, 0.000001.
func Num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// TwoDecimals shows a figure to two decimals at most (5.71, 1500), for rates
// and chart ticks: summary.json keeps the full figure.
func TwoDecimals(f float64) string { return Num(math.Round(f*100) / 100) }

// MDEscape keeps a value from breaking a Markdown table. Outside code spans
// `<` and `>` become entities, which CommonMark renders as the characters.
func MDEscape(s string) string { return mdEscaper.Replace(s) }

// mdEscaper is built once: a Replacer built a call cost its byte table (eight
// allocations) for every cell of report.md. A Replacer is safe for concurrent use.
var mdEscaper = strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;")

// oneOr is one when n is 1, else many: the word that agrees with a count
// ("has"/"have", "its"/"their").
func oneOr(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Plural is "1 attempt", "2 attempts".
func Plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.FormatInt(n, 10) + " " + noun + "s"
}
