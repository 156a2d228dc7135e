package render

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// keyFigure is one row of the key-figure tables (terminal, Markdown, HTML).
type keyFigure struct{ name, value string }

// rateFigure is the achieved rate against the planned one; a plan of no rate
// (a replay keeps its recording's pace) shows the achieved rate alone, never
// "planned 0".
func (s view) rateFigure() keyFigure {
	r := s.Requests
	achieved := showRate(r.AchievedRate, r.Messages > 0, twoDecimals)
	if r.PlannedRate > 0 {
		return keyFigure{"rate achieved / planned", fmt.Sprintf("%s / %s per second", achieved, twoDecimals(r.PlannedRate))}
	}
	why := "no planned rate"
	if s.Run.Profile == "replay" {
		why += ": the recording's pace"
	}
	return keyFigure{"rate achieved", fmt.Sprintf("%s per second (%s)", achieved, why)}
}

func (s view) keyFigures() []keyFigure {
	r, d, rl := s.Requests, s.Delivery, s.RateLimit
	kf := []keyFigure{
		{"requests", fmt.Sprintf("%d (%d messages, %s)", r.Total, r.Messages, s.errorsFigure())},
		s.rateFigure(),
		{"request latency p50 / p95 / p99 / max", showLatenciesOf(r.Latency, summary.NoAnswer, "p50", "p95", "p99", "max")},
		{"from intended send p99", fmt.Sprintf("%s (%d late starts)", r.LatencyIntended.ShowFigure("p99"), r.Late)},
	}
	if rl.Limit > 0 || rl.Rejected429 > 0 { // a rate limit to speak of
		kf = append(kf, keyFigure{"429 answers", fmt.Sprintf("%d (excess accepted %d, limiter: %s)", rl.Rejected429, rl.ExcessAccepted, rl.Algorithm.Verdict)})
	}
	if d.Measured {
		kf = append(kf,
			keyFigure{"delivered / accepted", s.deliveredFigure()},
			keyFigure{"delivery latency p50 / p95 / p99", showLatencies(d.Latency, "p50", "p95", "p99")},
			keyFigure{"duplicates / unmatched / malformed", fmt.Sprintf("%d / %d / %d", d.Duplicates, d.Unmatched, d.Malformed)})
		if d.Latency.Censored > 0 { // survivors only, labelled: never what a threshold reads
			kf = append(kf, keyFigure{"delivery latency p50 / p95 of the delivered alone", showLatencies(d.LatencyDelivered, "p50", "p95")})
		}
	} else {
		kf = append(kf, keyFigure{"delivery", notMeasured + " (delivery: " + d.Via + ")"})
	}
	if o := s.Outcomes; o.NotAccepted > 0 {
		kf = append(kf, keyFigure{"not accepted", fmt.Sprintf("%d of %d (%s)", o.NotAccepted, o.Messages, strings.Join(notAcceptedWhy(o), ", "))})
	}
	id := s.Idempotency
	mismatches, dups := strconv.FormatInt(id.Mismatches, 10), strconv.FormatInt(id.DuplicateDeliveries, 10)
	if !id.MismatchesMeasured() {
		mismatches = noData // nothing compared (reports/nodata.go)
	}
	if !id.Measured {
		dups = notMeasured
	}
	kf = append(kf, keyFigure{"idempotency probes / answers compared / mismatches / duplicate deliveries", fmt.Sprintf("%d / %d / %s / %s", id.Probes, id.Compared, mismatches, dups)})
	if d.Unconfirmed > 0 || d.Refused > 0 || d.Redelivered > 0 { // a delay fault redelivers without refusing
		kf = append(kf, keyFigure{"unconfirmed / refused on purpose / redelivered (retry p50)", fmt.Sprintf("%d / %d / %d (%s)", d.Unconfirmed, d.Refused, d.Redelivered, d.RetryDelay.Show(d.RetryDelay.P50))})
	}
	if s.Incoming.Received > 0 {
		kf = append(kf, keyFigure{"incoming (replies, reply p95)", fmt.Sprintf("%d (%d, %s)", s.Incoming.Received, s.Incoming.Replies, s.Incoming.ReplyLatency.Show(s.Incoming.ReplyLatency.P95))})
	}
	if t := s.Truth; t != nil {
		kf = append(kf, keyFigure{"truth: measurements agree", truthAgrees(t)},
			keyFigure{"truth: latency p95 true / measured", fmt.Sprintf("%s / %s", t.TrueLatency.ShowFigure("p95"), t.MeasuredLatency.ShowFigure("p95"))},
			keyFigure{"truth: lost expected / measured", fmt.Sprintf("%d / %s", t.ExpectedLost, measuredCount(d, t.MeasuredLost))})
	}
	if s.Drift != nil {
		kf = append(kf, keyFigure{"drift", driftText(s.Drift)})
	}
	return s.attackFigures(kf)
}

// errorsFigure is the requests' error rate: "1.20% errors"; in exceed mode
// the 429s the scenario sends for are apart, not errors: "62.60% answered
// 429, as exceed mode expects; 0.40% other errors".
func (s view) errorsFigure() string {
	r, rl := s.Requests, s.RateLimit
	pct := func(v float64) string { return strconv.FormatFloat(100*v, 'f', 2, 64) + "%" }
	if r.Total == 0 {
		return noData + " errors"
	}
	n429 := r.Errors[rundir.ClassHTTP429]
	if rl.Mode != "exceed" || rl.Limit <= 0 || n429 == 0 {
		return pct(r.ErrorRate) + " errors"
	}
	var errs int64
	for _, n := range r.Errors {
		errs += n
	}
	total := float64(r.Total)
	return fmt.Sprintf("%s answered 429, as exceed mode expects; %s other errors", pct(float64(n429)/total), pct(float64(errs-n429)/total))
}

// deliveredFigure is "17 / 20 (1 FAILED, 2 UNDELIVERED, no final status 0, of which late 0)".
func (s view) deliveredFigure() string {
	o, d := s.Outcomes, s.Delivery
	var parts []string
	for _, st := range reports.SortedStates(o.ByState) {
		if !rundir.Delivered(st) {
			parts = append(parts, fmt.Sprintf("%d %s", o.ByState[st], st))
		}
	}
	parts = append(parts, fmt.Sprintf("no final status %d, of which late %d", o.NoFinalStatus, d.Late))
	return fmt.Sprintf("%d / %d (%s)", o.Delivered, d.Expected, strings.Join(parts, ", "))
}

// showLatencies shows the figures names of p joined by " / ", a lower bound
// as "> 5.00s", then how many had no final status ("> 5.00s / > 5.00s (38 of
// 40 without a final status)"); one "no data" when p is empty.
func showLatencies(p percentiles, names ...string) string {
	return showLatenciesOf(p, summary.NoFinalStatus, names...)
}

// showLatenciesOf is showLatencies with what the censored values lacked
// (summary.NoFinalStatus, summary.NoAnswer).
func showLatenciesOf(p percentiles, what string, names ...string) string {
	if !p.Has() {
		return noData
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p.ShowFigure(n)
	}
	return strings.Join(out, " / ") + p.CensoredNoteOf(what)
}

// measuredCount shows a delivery count, or "not measured".
func measuredCount(d summary.Delivery, n int64) string {
	if !d.Measured {
		return notMeasured
	}
	return strconv.FormatInt(n, 10)
}

// Terminal writes the short summary of s printed at the end of `msgload run`.
func Terminal(w io.Writer, s *reports.Summary) { TerminalWith(w, s, TerminalOptions{}) }

// TerminalOptions are how the terminal summary is written. The caller decides
// them from the process state (cmd/): nothing here looks at the terminal or
// the environment.
type TerminalOptions struct {
	// Color paints the verdict (PASS green, FAIL and ERROR red, INCOMPLETE
	// yellow) and the threshold marks with ANSI escapes.
	Color bool
}

// ANSI colours of the verdicts.
const (
	ansiGreen  = "\x1b[32m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

func (o TerminalOptions) paint(color, s string) string {
	if !o.Color {
		return s
	}
	return color + s + ansiReset
}

// Verdict is verdict as the terminal shows it: upper-case ("PASS"), in its
// colour when o.Color; an unknown verdict reads ERROR.
func (o TerminalOptions) Verdict(verdict string) string {
	word := (&reports.Summary{Summary: summary.Summary{Verdict: verdict}}).VerdictWord()
	switch word {
	case "PASS":
		return o.paint(ansiBold+ansiGreen, word)
	case "INCOMPLETE":
		return o.paint(ansiBold+ansiYellow, word)
	default:
		return o.paint(ansiBold+ansiRed, word)
	}
}

func (o TerminalOptions) mark(ok bool) string {
	if ok {
		return o.paint(ansiGreen, mark(ok))
	}
	return o.paint(ansiRed, mark(ok))
}

// TerminalWith writes the summary of s for a terminal as Terminal does, with
// o: the verdict card first (verdict, reasons with whose and next step,
// planned against sent, thresholds with units and headroom), then the key
// figures.
func TerminalWith(w io.Writer, s *reports.Summary, o TerminalOptions) { (view{s}).terminal(w, o) }

// terminal is TerminalWith.
func (s view) terminal(w io.Writer, o TerminalOptions) {
	fmt.Fprintf(w, "run %s (%s, %s): %s\n", s.Run.ID, s.Run.Scenario, s.Run.API, o.Verdict(s.Verdict))
	for _, r := range s.cardReasons() {
		fmt.Fprintf(w, "  ! %s [%s]\n", r.Text, r.Whose)
		if r.Next != "" {
			fmt.Fprintf(w, "      Next: %s\n", r.Next)
		}
	}
	for _, l := range s.cardLines() {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, t := range s.Thresholds {
		fmt.Fprintf(w, "  %s  %s\n", o.mark(t.OK), thresholdText(t))
	}
	width := 0
	kf := s.keyFigures()
	for _, k := range kf {
		width = max(width, len(k.name))
	}
	for _, k := range kf {
		fmt.Fprintf(w, "  %-*s  %s\n", width, k.name, k.value)
	}
	s.terminalTables(w)
	for _, msg := range s.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", msg)
	}
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// mdCode is s as a CommonMark code span, for a table cell: nothing in it is
// escaped but the pipe (GFM tables split on it even there) — `a < b` shows
// `a < b`, never `a &lt; b`. The fence is longer than any run of backticks in s.
func mdCode(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
	run, longest := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdInline is a reason's text or next step in Markdown: its `code` spans (the
// commands to run) kept as they are, the rest escaped.
func mdInline(s string) string {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 { // an unpaired backtick: no span
		return mdEscape(strings.ReplaceAll(s, "`", "\\`"))
	}
	for i := range parts {
		if i%2 == 0 {
			parts[i] = mdEscape(parts[i])
		}
	}
	return strings.Join(parts, "`")
}

// mdTable writes a Markdown table of heads and rows, every cell escaped.
func mdTable(b *strings.Builder, heads []string, rows [][]string) {
	b.WriteString("|")
	for _, h := range heads {
		b.WriteString(" " + mdEscape(h) + " |")
	}
	b.WriteString("\n|" + strings.Repeat("---|", len(heads)) + "\n")
	for _, r := range rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
}

// mdReasons writes the card's reasons as a list: whose each is, its text and
// its next step.
func mdReasons(b *strings.Builder, rs []cardReason) {
	for _, r := range rs {
		fmt.Fprintf(b, "- **%s**: %s", r.Whose, mdInline(r.Text))
		if r.Next != "" {
			fmt.Fprintf(b, "  \n  Next: %s", mdInline(r.Next))
		}
		b.WriteString("\n")
	}
	if len(rs) > 0 {
		b.WriteString("\n")
	}
}

// mdCard writes the verdict card of report.md: the verdict, each reason with
// whose it is and the next step, planned against sent and the outcome, and
// the thresholds with units and headroom.
func (s view) mdCard(b *strings.Builder) {
	fmt.Fprintf(b, "## msgload %s: %s\n\n", mdEscape(s.Run.Scenario), s.VerdictWord())
	mdReasons(b, s.cardReasons())
	for _, l := range s.cardLines() {
		fmt.Fprintf(b, "**%s**\n\n", mdEscape(l))
	}
	if s.Run.Interrupted {
		b.WriteString("**The run was interrupted**: figures cover what ran.\n\n")
	}
	if len(s.Thresholds) > 0 {
		b.WriteString("| | Threshold | Value against the limit |\n|---|---|---|\n")
		for _, t := range s.Thresholds {
			fmt.Fprintf(b, "| %s | %s | %s |\n", mark(t.OK), mdCode(t.Expr), mdEscape(thresholdText(t)))
		}
		b.WriteString("\n")
	}
}

// WriteMarkdown writes report.md, for pull-request comments and release
// notes: CommonMark with GitHub's tables, the verdict card first.
func (s view) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	s.mdCard(&b)
	b.WriteString("| What was tested | |\n|---|---|\n")
	for _, k := range s.testedRows() {
		fmt.Fprintf(&b, "| %s | %s |\n", mdEscape(k.name), mdEscape(k.value))
	}
	b.WriteString("\n| Outcome | Messages |\n|---|---|\n")
	for _, k := range s.outcomeCounts() {
		fmt.Fprintf(&b, "| %s | %s |\n", mdEscape(k.name), mdEscape(k.value))
	}
	b.WriteString("\n| Figure | Value |\n|---|---|\n")
	for _, k := range s.keyFigures() {
		fmt.Fprintf(&b, "| %s | %s |\n", mdEscape(k.name), mdEscape(k.value))
	}
	if len(s.Requests.Operations) > 0 {
		b.WriteString("\n### Per operation\n\n")
		var rows [][]string
		for _, f := range s.Requests.Operations {
			rows = append(rows, opCells(f))
		}
		mdTable(&b, opHeads, rows)
	}
	if errs := s.SortedErrors(); len(errs) > 0 {
		b.WriteString("\n### Errors\n\n")
		var rows [][]string
		for _, e := range errs {
			rows = append(rows, errorCells(e))
		}
		mdTable(&b, errorHeads, rows)
	}
	s.writeChartLinks(&b)
	if len(s.RateLimit.Clients) > 0 {
		b.WriteString("\n### Rate limit per client\n\n")
		mdTable(&b, []string{"Client", "Sent", "Accepted", "429", "Limit", "Max accepted per window", "Excess", "First 429"}, s.clientCells())
		fmt.Fprintf(&b, "\nLimiter: **%s**", mdEscape(s.limiterName()))
		if ev := s.RateLimit.Algorithm.Evidence; len(ev) > 0 {
			b.WriteString(", because:\n\n")
			for _, e := range ev {
				fmt.Fprintf(&b, "- %s\n", mdEscape(e))
			}
		} else {
			b.WriteString(".\n")
		}
		if s.RateLimit.Rejected429 > 0 {
			fmt.Fprintf(&b, "\n%s\n", mdEscape(s.retryAfterText()))
		}
	}
	if t := s.idempotencyText(); t != "" {
		fmt.Fprintf(&b, "\n### Idempotency\n\n%s\n", mdEscape(t))
	}
	if t := s.lostText(); t != "" {
		fmt.Fprintf(&b, "\n### Lost and late messages\n\n%s The answers of every lost message (`lost.jsonl` joined with `attempts.jsonl`), in the run directory:\n\n```sh\n%s\n```\n", mdEscape(t), s.LostJQ())
	}
	if len(s.Delivery.ByChannel) > 0 || len(s.Delivery.ByState) > 0 {
		b.WriteString("\n### Delivery latency\n\n| By | Count | p50 | p95 | p99 | max |\n|---|---|---|---|---|---|\n")
		for _, k := range sortedKeys(s.Delivery.ByChannel) {
			p := s.Delivery.ByChannel[k]
			fmt.Fprintf(&b, "| channel %s | %s | %s | %s | %s | %s |\n", mdEscape(s.channelLabel(k)), p.CountText(), p.ShowFigure("p50"), p.ShowFigure("p95"), p.ShowFigure("p99"), p.ShowFigure("max"))
		}
		for _, k := range sortedKeys(s.Delivery.ByState) {
			p := s.Delivery.ByState[k]
			fmt.Fprintf(&b, "| state %s | %d | %s | %s | %s | %s |\n", mdEscape(k), p.Count, p.Show(p.P50), p.Show(p.P95), p.Show(p.P99), p.Show(p.Max))
		}
	}
	if len(s.Delivery.Failover.Steps) > 0 {
		b.WriteString("\n### Failover\n\n| Step | Messages | p50 | p95 |\n|---|---|---|---|\n")
		for _, st := range s.Delivery.Failover.Steps {
			fmt.Fprintf(&b, "| %s → %s | %d | %s | %s |\n", mdEscape(st.From), mdEscape(st.To), st.Count, st.Time.ShowFigure("p50"), st.Time.ShowFigure("p95"))
		}
	}
	for _, msg := range s.Warnings {
		fmt.Fprintf(&b, "\n> warning: %s\n", mdEscape(msg))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// junitTime is a duration in seconds as an xs:decimal (never an exponent), to
// the millisecond.
func junitTime(sec float64) string {
	if sec <= 0 || math.IsNaN(sec) || math.IsInf(sec, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(sec*1e3)/1e3, 'f', -1, 64)
}

// runSeconds is the whole run, start to end (grace included); the attack's
// length when the end is unknown.
func (s view) runSeconds() float64 {
	a, err1 := time.Parse(time.RFC3339Nano, s.Run.Start)
	b, err2 := time.Parse(time.RFC3339Nano, s.Run.End)
	if err1 == nil && err2 == nil && b.After(a) {
		return b.Sub(a).Seconds()
	}
	return s.Run.Duration
}

// WriteJUnit writes junit.xml: one test case for the run's verdict (failing,
// with its reasons, unless the verdict is pass; an error for the error
// verdict), then one per threshold. The verdict's test case takes the run's
// time (start to end), and so does each threshold's (it judges the whole
// run); each threshold's value and limit are properties of the suite
// (thresholdProperties). hostname is run.json's host ("localhost" when it has none).
func (s view) WriteJUnit(w io.Writer) error {
	return reports.WriteJUnitDoc(w, reports.JUnitSuites{Suites: []reports.JUnitSuite{s.junitSuite(0)}})
}

// junitSuite is the run's suite, id-th of its document: its verdict, then one
// case per threshold.
func (s view) junitSuite(id int) reports.JUnitSuite {
	class := "msgload." + s.Run.Scenario
	host := s.Run.Host
	if strings.TrimSpace(host) == "" {
		host = "localhost"
	}
	name := junitSuiteName(s.Run.Scenario, s.Run.Part)
	runTime := junitTime(s.runSeconds())
	suite := reports.JUnitSuite{
		Name: name, Package: "msgload", ID: id, Timestamp: reports.JUnitTimestamp(s.Run.Start), Hostname: host, Time: runTime,
		Properties: []reports.JUnitProperty{
			{Name: "run.id", Value: s.Run.ID}, {Name: "run.scenario", Value: s.Run.Scenario}, {Name: "run.api", Value: s.Run.API}, {Name: "run.target", Value: s.Run.Target},
			{Name: "run.start", Value: s.Run.Start}, {Name: "run.end", Value: s.Run.End}, {Name: "msgload.version", Value: s.Run.Version}, {Name: "verdict", Value: s.Verdict},
		},
		Cases:     []reports.JUnitCase{},
		SystemOut: strings.Join(s.Warnings, "\n"),
	}
	vc := reports.JUnitCase{Name: "msgload verdict: " + s.VerdictWord(), Classname: class, Time: runTime}
	if !s.OK() {
		msg := s.VerdictWord()
		if len(s.VerdictReasons) > 0 {
			msg += ": " + strings.Join(s.VerdictReasons, "; ")
		}
		f := &reports.JUnitFailure{Message: msg, Type: s.Verdict, Text: strings.Join(s.VerdictReasons, "\n")}
		if f.Type == "" {
			f.Type = "error"
		}
		if s.Verdict == reports.VerdictError || s.Verdict == "" {
			vc.Error = f
			suite.Errors++
		} else {
			vc.Failure = f
			suite.Fails++
		}
	}
	suite.Cases = append(suite.Cases, vc)
	suite.Tests++
	for i, t := range s.Thresholds {
		// A threshold judges the whole run: its case takes the run's time,
		// and its value and limit are the suite's properties (the strict
		// schema gives a passing test case no place for them).
		c := reports.JUnitCase{Name: t.Expr, Classname: class, Time: runTime}
		suite.Properties = append(suite.Properties, thresholdProperties(i+1, t)...)
		switch {
		case len(t.NoData) > 0: // a failure, not an error: the threshold was fine, the figure is absent
			c.Failure = &reports.JUnitFailure{Message: t.Error, Type: "no data", Text: t.Error}
			suite.Fails++
		case t.Error != "":
			c.Error = &reports.JUnitFailure{Message: t.Error, Type: "error", Text: t.Error}
			suite.Errors++
		case !t.OK:
			msg := fmt.Sprintf("%s does not hold: %s", t.Expr, thresholdText(t))
			c.Failure = &reports.JUnitFailure{Message: msg, Type: "threshold", Text: msg}
			suite.Fails++
		}
		suite.Cases = append(suite.Cases, c)
		suite.Tests++
	}
	return suite
}

// junitSuiteName is the one rule naming a suite: "msgload <scenario>", and
// " / <part>" for a part of a run with parts — the same in the part's own
// junit.xml and in the whole run's.
func junitSuiteName(scenario, part string) string {
	name := strings.TrimSpace("msgload " + strings.TrimSpace(scenario))
	if part != "" {
		name += " / " + part
	}
	return name
}

// thresholdProperties are the n-th threshold's properties in junit.xml:
// its expression, value and limit with their units, whether it held, and the
// line the report shows (threshold.1.expr, .value, .limit, .ok, .text).
func thresholdProperties(n int, t summary.Threshold) []reports.JUnitProperty {
	p := "threshold." + strconv.Itoa(n) + "."
	value, limit := reports.ThresholdFigures(t)
	return []reports.JUnitProperty{{Name: p + "expr", Value: t.Expr}, {Name: p + "value", Value: value}, {Name: p + "limit", Value: limit},
		{Name: p + "ok", Value: strconv.FormatBool(t.OK)}, {Name: p + "text", Value: thresholdText(t)}}
}

// truthAgrees says in words whether the measurements agree with the truth.
func truthAgrees(t *summary.TruthReport) string {
	switch {
	case t.Agrees == nil:
		return "not compared (" + strings.Join(t.Disagreements, "; ") + ")"
	case *t.Agrees && t.DeliveryNotCompared != "":
		return "yes, but the delivery figures were not compared: " + t.DeliveryNotCompared
	case *t.Agrees:
		return "yes"
	}
	return "NO: " + strings.Join(t.Disagreements, "; ")
}
