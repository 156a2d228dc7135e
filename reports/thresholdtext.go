package reports

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/msgload/msgload/thresholds"
)

// A threshold as a person reads it — `delivery.latency.p95 2.26 s < 5 s
// (headroom 55 %)`, never a bare float: the verdict's reasons say it so, and
// every report's card shows it the same way (reports/render).

// How a figure's value is shown, and a chart's axis: a latency in seconds, a
// count (or a rate, or seconds since the start), or a share (0..1 shown as a
// percentage).
const (
	UnitSeconds = "s"     // a latency: 1.2ms, 3.00s
	UnitCount   = "n"     // a count or a rate, and seconds since the start
	UnitShare   = "share" // 0..1 shown as a percentage, the axis held at 0..100 %
)

// comparison is a threshold of the form `<figure> <op> <literal>`: the only
// form whose limit the card can name (other forms show holds / does not hold).
var comparison = regexp.MustCompile(`^\s*(.+?)\s*(<=|>=|==|!=|<|>)\s*([0-9][0-9._]*(?:[a-zµ]+|%)?)\s*$`)

// shownRel is how an operator reads, and its negation (what a failed
// threshold's value is against its limit).
var shownRel = map[string][2]string{
	"<": {"<", "≥"}, "<=": {"≤", ">"}, ">": {">", "≤"}, ">=": {"≥", "<"}, "==": {"=", "≠"}, "!=": {"≠", "="},
}

// thresholdCheck is a threshold of the comparison form, read for people.
type thresholdCheck struct {
	figure, op string
	value, at  float64
	unit       string
}

// parseCheck reads t as a comparison, or reports false.
func parseCheck(t Threshold) (thresholdCheck, bool) {
	m := comparison.FindStringSubmatch(t.Expr)
	if m == nil {
		return thresholdCheck{}, false
	}
	at, err := thresholds.Number(m[3])
	if err != nil {
		return thresholdCheck{}, false
	}
	return thresholdCheck{figure: m[1], op: m[2], value: t.Value, at: at, unit: unitOf(m[1], m[3])}, true
}

// unitOf says what a figure measures: seconds (a latency, or a limit written
// with a time unit), a share (an error rate, or a limit written in %), or a
// count.
func unitOf(figure, lit string) string {
	switch {
	case strings.HasSuffix(lit, "%") || strings.HasSuffix(figure, "error_rate"):
		return UnitShare
	case strings.TrimLeft(lit, "0123456789._") != "":
		return UnitSeconds // 30s, 200ms, 1m
	}
	last := figure[strings.LastIndexByte(figure, '.')+1:]
	switch last {
	case "p50", "p90", "p95", "p99", "max", "mean":
		return UnitSeconds
	}
	if strings.Contains(figure, "latency") || strings.HasSuffix(figure, "_s") {
		return UnitSeconds
	}
	return UnitCount
}

// show writes v in the check's unit, with a space before the unit: 2.26 s,
// 200 ms, 1.5 %, 12.
func (c thresholdCheck) show(v float64, limit bool) string {
	switch c.unit {
	case UnitSeconds:
		if limit {
			return SecondsLimit(v)
		}
		return SpacedDur(v)
	case UnitShare:
		return strconv.FormatFloat(roundSig(100*v), 'f', -1, 64) + " %"
	}
	return TwoDecimals(v)
}

// SpacedDur is dur with a space before the unit: 2.26 s, 12.3 ms, 850 µs.
func SpacedDur(sec float64) string {
	d := dur(sec)
	if d == "0" {
		return "0 s"
	}
	if strings.Contains(d, "m") && !strings.HasSuffix(d, "ms") {
		return d // 2m5s
	}
	i := strings.IndexFunc(d, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	return d[:i] + " " + d[i:]
}

// SecondsLimit shows a limit in seconds as it was written, in the largest
// unit it is whole in: 5 s, 200 ms, 1.5 s, 90 s.
func SecondsLimit(sec float64) string {
	switch {
	case sec == 0:
		return "0 s"
	case sec < 1e-3:
		return Num(roundSig(sec*1e6)) + " µs"
	case sec < 1:
		return Num(roundSig(sec*1e3)) + " ms"
	}
	return Num(roundSig(sec)) + " s"
}

// margin is the headroom of a threshold that holds ("headroom 55 %": how far
// the value is from its limit, as a share of the limit), or by how much it
// misses ("over by 42 %"); "" for an equality or a limit of 0, where a share
// means nothing.
func (c thresholdCheck) margin(ok bool) string {
	if c.at == 0 || c.op == "==" || c.op == "!=" {
		return ""
	}
	share := (c.at - c.value) / math.Abs(c.at) // room under an upper bound
	if c.op == ">" || c.op == ">=" {
		share = -share
	}
	pct := func(f float64) string {
		f = math.Abs(100 * f)
		if f >= 10 {
			return strconv.FormatFloat(math.Round(f), 'f', 0, 64) + " %"
		}
		return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) + " %"
	}
	switch {
	case ok:
		return "headroom " + pct(share)
	case share == 0:
		return "at the limit"
	case c.op == "<" || c.op == "<=":
		return "over by " + pct(share)
	}
	return "under by " + pct(share)
}

// ThresholdText is a threshold for people: the figure, its value with its
// unit, how it stands against the limit, and the headroom —
// `delivery.latency.p95 2.26 s < 5 s (headroom 55 %)`; a figure without data
// says why; a threshold of another form says whether it holds and its value.
func ThresholdText(t Threshold) string {
	switch {
	case len(t.NoData) > 0:
		return t.Expr + " — " + t.Error
	case t.Error != "":
		return t.Expr + " — could not be evaluated: " + t.Error
	}
	c, ok := parseCheck(t)
	if !ok {
		word := "holds"
		if !t.OK {
			word = "does not hold"
		}
		return fmt.Sprintf("%s %s (value %s)", t.Expr, word, TwoDecimals(t.Value))
	}
	rel := shownRel[c.op][0]
	if !t.OK {
		rel = shownRel[c.op][1]
	}
	line := fmt.Sprintf("%s %s %s %s", c.figure, c.show(c.value, false), rel, c.show(c.at, true))
	if m := c.margin(t.OK); m != "" {
		line += " (" + m + ")"
	}
	return line
}

// ThresholdFigures are t's value and limit with their units, as junit.xml's
// properties give them (`2.26 s`, `5 s`): the value "null" for a figure
// without data or a threshold that could not be evaluated; the limit "" for
// a threshold that is not a comparison.
func ThresholdFigures(t Threshold) (value, limit string) {
	value = "null"
	if c, ok := parseCheck(t); ok {
		limit = c.show(c.at, true)
		if len(t.NoData) == 0 && t.Error == "" {
			value = c.show(c.value, false)
		}
	} else if len(t.NoData) == 0 && t.Error == "" {
		value = Num(t.Value)
	}
	return value, limit
}
