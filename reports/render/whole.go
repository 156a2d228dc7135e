package render

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// wholeView is the whole run's summary (a run with parts) as the writers
// read it.
type wholeView struct{ *reports.RunSummary }

// cardReasons are the whole run's reasons for its verdict card.
func (w wholeView) cardReasons() []cardReason {
	return (view{&reports.Summary{Summary: summary.Summary{VerdictReasons: w.VerdictReasons, Reasons: w.Reasons}}}).cardReasons()
}

// maxCardThresholds bounds the whole run's card: the parts below show all.
const maxCardThresholds = 12

// cardThresholds are the parts' thresholds for the whole run's card, each
// named by its part, the failed ones first, at most maxCardThresholds; more
// says how many are left to the parts below.
func (w wholeView) cardThresholds() (rows []htmlThr, more int) {
	var bad, good []htmlThr
	for i, s := range w.Summaries() {
		if s == nil {
			continue
		}
		for _, t := range s.Thresholds {
			row := htmlThr{t.OK, w.Parts[i].Name + ": " + thresholdText(t)}
			if t.OK {
				good = append(good, row)
			} else {
				bad = append(bad, row)
			}
		}
	}
	all := append(bad, good...)
	if len(all) > maxCardThresholds {
		return all[:maxCardThresholds], len(all) - maxCardThresholds
	}
	return all, 0
}

// BuildRun writes the whole-run files of a run with parts into dir:
// summary.json, report.html, report.md and junit.xml, from the parts'
// summaries (each part's own files are written by Build).
func BuildRun(dir string, parts []reports.PartInput, interrupted bool) (*reports.RunSummary, error) {
	w := reports.NewRunSummary(dir, parts, interrupted)
	return w, writeRunFiles(dir, w)
}

// RebuildRun rebuilds every part of a run with parts from its raw files, then
// the whole run's files. A part that cannot be built (no run.json, a bad
// threshold) stops the rebuild with its error.
func RebuildRun(dir string) (*reports.RunSummary, error) {
	dirs := reports.PartDirs(dir)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: %s has no part directories", reports.ErrNoMeta, dir)
	}
	var parts []reports.PartInput
	interrupted := false
	for _, d := range dirs {
		s, err := Build(d)
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", filepath.Base(d), err)
		}
		interrupted = interrupted || s.Run.Interrupted
		parts = append(parts, reports.PartInput{Name: filepath.Base(d), Dir: d, Summary: s})
	}
	return BuildRun(dir, parts, interrupted)
}

// writeRunFiles writes summary.json, report.html, report.md and junit.xml of
// the whole run w into dir.
func writeRunFiles(dir string, w *reports.RunSummary) error {
	js, err := w.JSON()
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	b := rundir.NewDirBatch(dir)
	if err := writeReportFiles(b, js, wholeView{w}); err != nil {
		return err
	}
	return b.Sync()
}

// wholeTested says what the whole run was.
func (w wholeView) wholeTested() []keyFigure {
	r := w.Run
	rows := []keyFigure{{"scenario", r.Scenario}}
	if r.Description != "" {
		rows[0].value += " — " + r.Description
	}
	var names []string
	for _, p := range w.Parts {
		names = append(names, p.Name)
	}
	rows = append(rows, keyFigure{"parts", fmt.Sprintf("%d, side by side: %s", len(w.Parts), strings.Join(names, ", "))})
	rows = append(rows, buildRows(r.Version, r.Commit, r.CommitTime, r.Host)...)
	when := showTime(r.Start) + " to " + showTime(r.End)
	if r.Interrupted {
		when += " — interrupted"
	}
	rows = append(rows, keyFigure{"ran", when}, keyFigure{"run id", r.ID})
	return rows
}

// partRow is a part's line in the whole run's table.
type partRow struct {
	Name, Dir, API, Verdict, Class, Outcome, DeliveryP95 string
	Sent, Accepted, Delivered, NotDelivered              string
}

func (w wholeView) partRows() []partRow {
	var rows []partRow
	for i, p := range w.Parts {
		row := partRow{Name: p.Name, Dir: p.Dir, API: p.API, Verdict: strings.ToUpper(p.Verdict), Class: p.Verdict}
		if s := w.Summaries()[i]; s != nil {
			o := s.Outcomes
			row.Sent, row.Accepted = fmt.Sprint(o.Messages), fmt.Sprint(o.Accepted)
			row.Delivered = measuredCount(s.Delivery, o.Delivered)
			row.NotDelivered = measuredCount(s.Delivery, o.Accepted-o.Delivered)
			row.DeliveryP95 = s.Delivery.Latency.ShowFigure("p95")
			row.Outcome = strings.Join(view{s}.outcomeLines(), " ")
		} else {
			row.Sent, row.Accepted, row.Delivered, row.NotDelivered, row.DeliveryP95 = "–", "–", "–", "–", noData
			row.Outcome = strings.Join(p.VerdictReasons, "; ")
		}
		rows = append(rows, row)
	}
	return rows
}

// wholeTmpl is parsed on first use (htmlTmpl says why).
var wholeTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.Must(template.New("whole").Funcs(tmplFuncs).Parse(partBody)).Parse(htmlHead + `<h1>msgload — {{.W.Run.Scenario}} <span class="v {{.Class}}">{{.Verdict}}</span></h1>
<section class="card" id="card">
{{if .Card}}<ul class="reasons">{{range .Card}}<li><span class="whose">{{.Whose}}</span> {{inline .Text}}{{if .Next}}<br><span class="next">Next: {{inline .Next}}</span>{{end}}</li>{{end}}</ul>{{end}}
<p class="outcome">{{.Headline}}</p>
{{if .Thr}}<table class="thr" id="thresholds">{{range .Thr}}<tr><td class="mark">{{if .OK}}✓{{else}}✗{{end}}</td><td>{{.Text}}</td></tr>{{end}}</table>{{end}}
{{if .More}}<p class="muted">… {{.More}} more thresholds in the parts below.</p>{{end}}
</section>
<table class="tested">{{range .Tested}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<h2>Parts</h2>
<table class="parts"><tr><th>Part</th><th>API</th><th>Verdict</th><th>Sent</th><th>Accepted</th><th>Delivered</th><th>Not delivered</th><th>Delivery p95</th></tr>
{{range .Rows}}<tr><td><a href="#part-{{.Name}}">{{.Name}}</a></td><td>{{.API}}</td><td><span class="v {{.Class}}">{{.Verdict}}</span></td><td>{{.Sent}}</td><td>{{.Accepted}}</td><td>{{.Delivered}}</td><td>{{.NotDelivered}}</td><td>{{.DeliveryP95}}</td></tr>
<tr><td></td><td colspan="7" class="muted">{{.Outcome}}</td></tr>{{end}}</table>
{{range .Parts}}<section class="part" id="part-{{.Name}}"><h2>{{.Name}} <span class="v {{.View.Class}}">{{.View.Verdict}}</span> <span class="muted">— its own files in <code>{{.Dir}}/</code></span></h2>
{{template "part" .View}}</section>
{{end}}
<p class="muted">Built from the run directory alone by <code>msgload report</code>; summary.json holds the whole verdict, each part's summary.json every figure.</p>
</body></html>
`))
})

// headline is the whole verdict in words.
func (w wholeView) headline() string {
	t := w.Totals
	line := fmt.Sprintf("%d of %d parts passed.", t.PartsPassed, t.Parts)
	o := t.Outcomes
	var planned int64 // the parts' plans: sent is said against them
	for _, s := range w.Summaries() {
		if s != nil {
			planned += s.Requests.PlannedCount
		}
	}
	if o.Messages > 0 && planned > 0 {
		line += fmt.Sprintf(" Over all parts: %s sent of %s planned (%s), %d accepted", reports.Thousands(o.Messages), reports.Thousands(planned), reports.Percent(float64(o.Messages), float64(planned)), o.Accepted)
	} else if o.Messages > 0 {
		line += fmt.Sprintf(" Over all parts: %d sent, %d accepted", o.Messages, o.Accepted)
		if o.Measured {
			line += fmt.Sprintf(", %d delivered, %d accepted but not delivered", o.Delivered, o.Accepted-o.Delivered)
		}
		if o.GaveUp > 0 {
			line += fmt.Sprintf(", %d gave up after retries", o.GaveUp)
		}
		line += "."
	}
	return line
}

// WriteHTML writes the whole run's report.html: the verdict first, then each part.
func (w wholeView) WriteHTML(out io.Writer) error {
	type partView struct {
		Name, Dir string
		View      map[string]any
	}
	var parts []partView
	for i, p := range w.Parts {
		if s := w.Summaries()[i]; s != nil {
			parts = append(parts, partView{p.Name, p.Dir, (view{s}).htmlView(p.Name + "-")})
		}
	}
	tested := make([]htmlKey, 0)
	for _, k := range w.wholeTested() {
		tested = append(tested, htmlKey{k.name, k.value})
	}
	v := strings.ToUpper(reports.WorstVerdict(w.Verdict))
	thr, more := w.cardThresholds()
	return wholeTmpl().Execute(out, map[string]any{"W": w.RunSummary, "Title": "msgload " + w.Run.Scenario + " " + w.Run.ID,
		"Verdict": v, "Class": strings.ToLower(v), "Headline": w.headline(), "Card": w.cardReasons(), "Thr": thr, "More": more, "Tested": tested, "Rows": w.partRows(), "Parts": parts})
}

// WriteMarkdown writes the whole run's report.md: the verdict, the parts, then
// each part's own report.
func (w wholeView) WriteMarkdown(out io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## msgload %s: %s\n\n%s\n\n", mdEscape(w.Run.Scenario), strings.ToUpper(reports.WorstVerdict(w.Verdict)), mdEscape(w.headline()))
	mdReasons(&b, w.cardReasons())
	if thr, more := w.cardThresholds(); len(thr) > 0 {
		b.WriteString("| | Threshold |\n|---|---|\n")
		for _, t := range thr {
			fmt.Fprintf(&b, "| %s | %s |\n", mark(t.OK), mdEscape(t.Text))
		}
		if more > 0 {
			fmt.Fprintf(&b, "\n… %d more thresholds in the parts below.\n", more)
		}
		b.WriteString("\n")
	}
	b.WriteString("| What was tested | |\n|---|---|\n")
	for _, k := range w.wholeTested() {
		fmt.Fprintf(&b, "| %s | %s |\n", mdEscape(k.name), mdEscape(k.value))
	}
	b.WriteString("\n| Part | API | Verdict | Sent | Accepted | Delivered | Not delivered | Delivery p95 | Outcome |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range w.partRows() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(r.Name), r.API, r.Verdict, r.Sent, r.Accepted, r.Delivered, r.NotDelivered, r.DeliveryP95, mdEscape(r.Outcome))
	}
	for i, s := range w.Summaries() {
		if s == nil {
			continue
		}
		var pb bytes.Buffer
		if err := (view{s}).WriteMarkdown(&pb); err != nil {
			return err
		}
		// Each part's report one heading level down, its charts in its directory.
		part := strings.ReplaceAll("\n"+partChartLinks(pb.String(), w.Parts[i].Dir), "\n#", "\n##")
		b.WriteString(part)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// WriteJUnit writes the whole run's junit.xml: one suite per part (its verdict,
// then its thresholds); a part without a report is one suite with an error.
func (w wholeView) WriteJUnit(out io.Writer) error {
	var doc reports.JUnitSuites // the strict JUnit schema allows no attributes on testsuites
	for i, p := range w.Parts {
		var suite reports.JUnitSuite
		if s := w.Summaries()[i]; s != nil {
			suite = (view{s}).junitSuite(i)
			suite.Name = junitSuiteName(s.Run.Scenario, p.Name)
		} else {
			msg := strings.ToUpper(p.Verdict) + ": " + strings.Join(p.VerdictReasons, "; ")
			f := &reports.JUnitFailure{Message: msg, Type: p.Verdict, Text: msg}
			c := reports.JUnitCase{Name: "msgload verdict: " + strings.ToUpper(p.Verdict), Classname: "msgload." + p.Name, Time: "0"}
			suite = reports.JUnitSuite{Name: junitSuiteName(w.Run.Scenario, p.Name), Package: "msgload", ID: i, Tests: 1,
				Timestamp: reports.JUnitTimestamp(w.Run.Start), Hostname: "localhost", Time: "0",
				Properties: []reports.JUnitProperty{{Name: "run.id", Value: w.Run.ID}, {Name: "part", Value: p.Name}, {Name: "verdict", Value: p.Verdict}}}
			if p.Verdict == reports.VerdictError {
				c.Error = f
				suite.Errors++
			} else {
				c.Failure = f
				suite.Fails++
			}
			suite.Cases = []reports.JUnitCase{c}
		}
		doc.Suites = append(doc.Suites, suite)
	}
	return reports.WriteJUnitDoc(out, doc)
}
