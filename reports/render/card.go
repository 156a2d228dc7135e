package reports

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/msgload/msgload/thresholds"
)

// The verdict card is the top of every report (terminal, report.md,
// report.html): the verdict, each reason with whose it is and the next step,
// planned against sent, and each threshold as a person reads it —
// `delivery.latency.p95 2.26 s < 5 s (headroom 55 %)`, never a bare float.

// comparison is a threshold of the form `<figure> <op> <literal>`: the only
// form whose limit the card can name (other forms show holds / does not hold).
var comparison = regexp.MustCompile(`^\s*(.+?)\s*(<=|>=|==|!=|<|>)\s*([0-9][0-9._]*(?:[a-zµ]+|%)?)\s*$`)

// A threshold's figure is one of the axis units of plot.go: unitSeconds,
// unitShare (a fraction shown as a percentage) or unitCount.

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
		return unitShare
	case strings.TrimLeft(lit, "0123456789._") != "":
		return unitSeconds // 30s, 200ms, 1m
	}
	last := figure[strings.LastIndexByte(figure, '.')+1:]
	switch last {
	case "p50", "p90", "p95", "p99", "max", "mean":
		return unitSeconds
	}
	if strings.Contains(figure, "latency") || strings.HasSuffix(figure, "_s") {
		return unitSeconds
	}
	return unitCount
}

// show writes v in the check's unit, with a space before the unit: 2.26 s,
// 200 ms, 1.5 %, 12.
func (c thresholdCheck) show(v float64, limit bool) string {
	switch c.unit {
	case unitSeconds:
		if limit {
			return secondsLimit(v)
		}
		return spacedDur(v)
	case unitShare:
		return strconv.FormatFloat(roundSig(100*v), 'f', -1, 64) + " %"
	}
	return twoDecimals(v)
}

// spacedDur is dur with a space before the unit: 2.26 s, 12.3 ms, 850 µs.
func spacedDur(sec float64) string {
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

// secondsLimit shows a limit in seconds as it was written, in the largest
// unit it is whole in: 5 s, 200 ms, 1.5 s, 90 s.
func secondsLimit(sec float64) string {
	switch {
	case sec == 0:
		return "0 s"
	case sec < 1e-3:
		return num(roundSig(sec*1e6)) + " µs"
	case sec < 1:
		return num(roundSig(sec*1e3)) + " ms"
	}
	return num(roundSig(sec)) + " s"
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

// thresholdText is a threshold for people: the figure, its value with its
// unit, how it stands against the limit, and the headroom —
// `delivery.latency.p95 2.26 s < 5 s (headroom 55 %)`; a figure without data
// says why; a threshold of another form says whether it holds and its value.
func thresholdText(t Threshold) string {
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
		return fmt.Sprintf("%s %s (value %s)", t.Expr, word, twoDecimals(t.Value))
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

// planLine is planned against sent, for the card's headline: the load line
// of a count plan, else what was sent at what rate against the planned rate.
func (s *Summary) planLine() string {
	if l := s.loadLine(); l != "" {
		return l
	}
	r := s.Requests
	line := fmt.Sprintf("Sent %s", plural(r.Messages, s.noun()))
	if r.PlannedRate > 0 {
		line += fmt.Sprintf(" at %s/s of %s/s planned", showRate(r.AchievedRate, r.Messages > 0, twoDecimals), twoDecimals(r.PlannedRate))
	}
	return line + "."
}

// cardReason is a reason as the card shows it: whose it is, its text, and
// the next step.
type cardReason struct{ Whose, Text, Next string }

// cardReasons are the verdict's reasons for the card, worst first; a reason
// of an old summary.json, with no whose, says "unknown".
func (s *Summary) cardReasons() []cardReason {
	rs := s.reasonList()
	out := make([]cardReason, len(rs))
	for i, r := range rs {
		w := r.Whose
		if w == "" {
			w = "unknown"
		}
		out[i] = cardReason{Whose: w, Text: r.Text, Next: r.Next}
	}
	return out
}

// cardLines are the card's sentences: planned against sent first, then the
// outcome in words, then the comparison against the baseline (if any).
func (s *Summary) cardLines() []string {
	lines := s.outcomeLines()
	if s.loadLine() == "" { // outcomeLines opens with it when there is one
		lines = append([]string{s.planLine()}, lines...)
	}
	return append(lines, s.baselineLines()...)
}
