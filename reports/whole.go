package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// Kinds of summary.json: a part's (every run without parts is one part) and a
// whole run's, at the top of a run with parts.
const (
	kindPart = "part"
	KindRun  = "run"
)

// RunSummary is the summary.json at the top of a run with parts: the whole
// run's verdict (the worst part's), every part's verdict and key figures, and
// the totals over the parts. Documented in README.md ("The whole run").
type RunSummary struct {
	Schema         int          `json:"schema"`
	Kind           string       `json:"kind"` // KindRun
	Passed         bool         `json:"ok"`   // Verdict == "pass"
	Verdict        string       `json:"verdict"`
	VerdictReasons []string     `json:"verdict_reasons"` // every part's, "<part>: <reason>"
	Reasons        []Reason     `json:"reasons"`         // the same, whose each is and what to do (Summary.Reasons)
	Run            wholeRunInfo `json:"run"`
	Parts          []partResult `json:"parts"`
	Totals         totals       `json:"totals"`

	summaries []*Summary // the parts' summaries, nil for a part without one
}

// wholeRunInfo is what the whole run is: its id, scenario and build, the
// earliest start and latest end of its parts.
type wholeRunInfo struct {
	ID          string `json:"id"`
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	Version     string `json:"version"`
	Commit      string `json:"commit,omitempty"`
	CommitTime  string `json:"commit_time,omitempty"`
	Host        string `json:"host,omitempty"`
	Start       string `json:"start,omitempty"`
	End         string `json:"end,omitempty"`
	Interrupted bool   `json:"interrupted"`
}

// partResult is one part of the whole run: its verdict and key figures.
type partResult struct {
	Name             string      `json:"name"`
	Dir              string      `json:"dir"` // relative to the run directory
	API              string      `json:"api"`
	Verdict          string      `json:"verdict"`
	VerdictReasons   []string    `json:"verdict_reasons"`
	Reasons          []Reason    `json:"reasons"`
	Requests         int64       `json:"requests"`
	ErrorRate        *float64    `json:"error_rate"` // null: no request was made
	RequestLatency   percentiles `json:"request_latency"`
	DeliveryLatency  percentiles `json:"delivery_latency"`
	Outcomes         outcomes    `json:"outcomes"`
	Thresholds       int         `json:"thresholds"`
	ThresholdsFailed int         `json:"thresholds_failed"`
}

// totals are sums over the parts that have a summary.
type totals struct {
	Requests         int64    `json:"requests"`
	Outcomes         outcomes `json:"outcomes"`
	Thresholds       int      `json:"thresholds"`
	ThresholdsFailed int      `json:"thresholds_failed"`
	PartsPassed      int      `json:"parts_passed"`
	Parts            int      `json:"parts"`
}

// PartInput is one part handed to BuildRun: its directory and its summary, or
// why it has none.
type PartInput struct {
	Name    string
	Dir     string
	Summary *Summary // nil when the part has no report
	Err     error    // why, when Summary is nil
}

// newRunSummary puts the parts of a run together: the whole verdict is the
// worst part verdict; a part without a summary is incomplete when the run was
// interrupted and error otherwise.
func newRunSummary(dir string, parts []PartInput, interrupted bool) *RunSummary {
	w := &RunSummary{Schema: schemaVersion, Kind: KindRun, VerdictReasons: []string{}, Reasons: []Reason{}, Parts: []partResult{}}
	w.Run.Interrupted = interrupted
	w.Totals.Outcomes.ByState, w.Totals.Outcomes.Refused = map[string]int64{}, map[string]int64{}
	w.Totals.Outcomes.Measured = true
	name, desc, _ := scenarioName(dir)
	w.Run.Scenario, w.Run.Description = name, desc
	var vs []string
	for _, p := range parts {
		rel, err := filepath.Rel(dir, p.Dir)
		if err != nil {
			rel = p.Dir
		}
		pr := partResult{Name: p.Name, Dir: filepath.ToSlash(rel), VerdictReasons: []string{}, Reasons: []Reason{}}
		s := p.Summary
		w.summaries = append(w.summaries, s)
		w.Totals.Parts++
		if s == nil {
			pr.Verdict = NoReportVerdict(interrupted)
			why := "the part has no report"
			if p.Err != nil {
				why = "the part could not finish: " + p.Err.Error()
			}
			pr.VerdictReasons = append(pr.VerdictReasons, why)
			pr.Reasons = append(pr.Reasons, reason(WhoseEnvironment, pr.Verdict, why, "see the part's log, and run again"))
		} else {
			pr.API, pr.Verdict, pr.VerdictReasons = s.Run.API, s.Verdict, append(pr.VerdictReasons, s.VerdictReasons...)
			pr.Reasons = append(pr.Reasons, s.reasonList()...)
			pr.Requests = s.Requests.Total
			if s.Requests.Total > 0 {
				pr.ErrorRate = &s.Requests.ErrorRate
			}
			pr.RequestLatency, pr.DeliveryLatency, pr.Outcomes = s.Requests.Latency, s.Delivery.Latency, s.Outcomes
			for _, t := range s.Thresholds {
				pr.Thresholds++
				if !t.OK {
					pr.ThresholdsFailed++
				}
			}
			w.addTotals(s, pr)
			w.takeRunInfo(s)
		}
		if pr.Verdict == VerdictPass {
			w.Totals.PartsPassed++
		}
		for _, r := range pr.VerdictReasons {
			w.VerdictReasons = append(w.VerdictReasons, p.Name+": "+r)
		}
		for _, r := range pr.Reasons {
			r.Text = p.Name + ": " + r.Text
			w.Reasons = append(w.Reasons, r)
		}
		vs = append(vs, pr.Verdict)
		w.Parts = append(w.Parts, pr)
	}
	w.Verdict = WorstVerdict(vs...)
	if len(parts) == 0 {
		w.VerdictReasons = append(w.VerdictReasons, "the run has no part")
	}
	w.Passed = w.Verdict == VerdictPass
	return w
}

// cardReasons are the whole run's reasons for its verdict card.
func (w *RunSummary) cardReasons() []cardReason {
	return (&Summary{Summary: summary.Summary{VerdictReasons: w.VerdictReasons, Reasons: w.Reasons}}).cardReasons()
}

// maxCardThresholds bounds the whole run's card: the parts below show all.
const maxCardThresholds = 12

// cardThresholds are the parts' thresholds for the whole run's card, each
// named by its part, the failed ones first, at most maxCardThresholds; more
// says how many are left to the parts below.
func (w *RunSummary) cardThresholds() (rows []htmlThr, more int) {
	var bad, good []htmlThr
	for i, s := range w.summaries {
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

// NoReportVerdict is the verdict of a part (or shard) that has no report:
// incomplete when the run was interrupted, error otherwise (an environment
// reason either way). The whole run's summary and the harness's result judge
// such a part by it.
func NoReportVerdict(interrupted bool) string {
	if interrupted {
		return VerdictIncomplete
	}
	return VerdictError
}

func (w *RunSummary) addTotals(s *Summary, pr partResult) {
	t := &w.Totals
	t.Requests += s.Requests.Total
	t.Thresholds += pr.Thresholds
	t.ThresholdsFailed += pr.ThresholdsFailed
	t.Outcomes.Add(s.Outcomes)
	if !s.Delivery.Measured {
		t.Outcomes.Measured = false
	}
}

// takeRunInfo fills what the whole run is from a part: the same id and build,
// the earliest start and latest end (RFC 3339 UTC strings sort by time).
func (w *RunSummary) takeRunInfo(s *Summary) {
	r, pr := &w.Run, s.Run
	if r.ID == "" {
		r.ID, r.Version, r.Commit, r.CommitTime, r.Host = pr.ID, pr.Version, pr.Commit, pr.CommitTime, pr.Host
	}
	if pr.Start != "" && (r.Start == "" || pr.Start < r.Start) {
		r.Start = pr.Start
	}
	if pr.End != "" && pr.End > r.End {
		r.End = pr.End
	}
	r.Interrupted = r.Interrupted || pr.Interrupted
}

// scenarioName reads the name and description of the resolved scenario at the
// top of a run directory.
func scenarioName(dir string) (name, desc string, parts []string) {
	b, err := rundir.ReadFile(filepath.Join(dir, rundir.ScenarioFile), rundir.MaxDocBytes)
	if err != nil {
		return filepath.Base(dir), "", nil
	}
	var v struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
		Parts       []struct {
			Name string `yaml:"name"`
		} `yaml:"parts"`
	}
	if yaml.Unmarshal(b, &v) != nil || v.Name == "" {
		return filepath.Base(dir), "", nil
	}
	for _, p := range v.Parts {
		parts = append(parts, p.Name)
	}
	return v.Name, v.Description, parts
}

// OK reports whether the whole verdict is pass.
func (w *RunSummary) OK() bool { return w.Verdict == VerdictPass }

// Line is the one line `msgload run` ends with: "smoke: PASS (2 of 2 parts) — runs/<id>/report.html".
func (w *RunSummary) Line(dir string) string {
	return fmt.Sprintf("%s: %s (%d of %d parts) — %s", w.Run.Scenario, strings.ToUpper(w.Verdict), w.Totals.PartsPassed, w.Totals.Parts,
		filepath.Join(dir, rundir.HTMLFile))
}

// Line is the one line `msgload run` ends with for a run without parts:
// "notify-respect-limit: PASS — runs/<id>/report.html".
func (s *Summary) Line(dir string) string {
	return fmt.Sprintf("%s: %s — %s", s.Run.Scenario, s.verdictWord(), filepath.Join(dir, rundir.HTMLFile))
}

// PartDirs are the part directories of a run with parts (the directories
// below dir holding a run.json), in the order of the scenario's parts, then by
// name; none for a run without parts.
func PartDirs(dir string) []string {
	if _, err := os.Stat(filepath.Join(dir, rundir.MetaFile)); err == nil {
		return nil
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*", rundir.MetaFile))
	var out []string
	for _, f := range found {
		out = append(out, filepath.Dir(f))
	}
	_, _, order := scenarioName(dir)
	rank := func(d string) int {
		for i, n := range order {
			if n == filepath.Base(d) {
				return i
			}
		}
		return len(order)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

// BuildRun writes the whole-run files of a run with parts into dir:
// summary.json, report.html, report.md and junit.xml, from the parts'
// summaries (each part's own files are written by Build).
func BuildRun(dir string, parts []PartInput, interrupted bool) (*RunSummary, error) {
	w := newRunSummary(dir, parts, interrupted)
	return w, w.WriteFiles(dir)
}

// RebuildRun rebuilds every part of a run with parts from its raw files, then
// the whole run's files. A part that cannot be built (no run.json, a bad
// threshold) stops the rebuild with its error.
func RebuildRun(dir string) (*RunSummary, error) {
	dirs := PartDirs(dir)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: %s has no part directories", errNoMeta, dir)
	}
	var parts []PartInput
	interrupted := false
	for _, d := range dirs {
		s, err := Build(d)
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", filepath.Base(d), err)
		}
		interrupted = interrupted || s.Run.Interrupted
		parts = append(parts, PartInput{Name: filepath.Base(d), Dir: d, Summary: s})
	}
	return BuildRun(dir, parts, interrupted)
}

// Summaries are the parts' summaries, in the order of Parts (nil for a part without one).
func (w *RunSummary) Summaries() []*Summary { return w.summaries }

// WriteFiles writes summary.json, report.html, report.md and junit.xml of the whole run.
func (w *RunSummary) WriteFiles(dir string) error {
	js, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	js = append(js, '\n')
	return writeReportFiles(dir, js, w)
}

// wholeTested says what the whole run was.
func (w *RunSummary) wholeTested() []keyFigure {
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

func (w *RunSummary) partRows() []partRow {
	var rows []partRow
	for i, p := range w.Parts {
		row := partRow{Name: p.Name, Dir: p.Dir, API: p.API, Verdict: strings.ToUpper(p.Verdict), Class: p.Verdict}
		if s := w.summaries[i]; s != nil {
			o := s.Outcomes
			row.Sent, row.Accepted = fmt.Sprint(o.Messages), fmt.Sprint(o.Accepted)
			row.Delivered = measuredCount(s.Delivery, o.Delivered)
			row.NotDelivered = measuredCount(s.Delivery, o.Accepted-o.Delivered)
			row.DeliveryP95 = s.Delivery.Latency.ShowFigure("p95")
			row.Outcome = strings.Join(s.outcomeLines(), " ")
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
func (w *RunSummary) headline() string {
	t := w.Totals
	line := fmt.Sprintf("%d of %d parts passed.", t.PartsPassed, t.Parts)
	o := t.Outcomes
	var planned int64 // the parts' plans: sent is said against them
	for _, s := range w.summaries {
		if s != nil {
			planned += s.Requests.PlannedCount
		}
	}
	if o.Messages > 0 && planned > 0 {
		line += fmt.Sprintf(" Over all parts: %s sent of %s planned (%s), %d accepted", thousands(o.Messages), thousands(planned), percent(float64(o.Messages), float64(planned)), o.Accepted)
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
func (w *RunSummary) WriteHTML(out io.Writer) error {
	type partView struct {
		Name, Dir string
		View      map[string]any
	}
	var parts []partView
	for i, p := range w.Parts {
		if s := w.summaries[i]; s != nil {
			parts = append(parts, partView{p.Name, p.Dir, s.htmlView(p.Name + "-")})
		}
	}
	tested := make([]htmlKey, 0)
	for _, k := range w.wholeTested() {
		tested = append(tested, htmlKey{k.name, k.value})
	}
	v := strings.ToUpper(WorstVerdict(w.Verdict))
	thr, more := w.cardThresholds()
	return wholeTmpl().Execute(out, map[string]any{"W": w, "Title": "msgload " + w.Run.Scenario + " " + w.Run.ID,
		"Verdict": v, "Class": strings.ToLower(v), "Headline": w.headline(), "Card": w.cardReasons(), "Thr": thr, "More": more, "Tested": tested, "Rows": w.partRows(), "Parts": parts})
}

// WriteMarkdown writes the whole run's report.md: the verdict, the parts, then
// each part's own report.
func (w *RunSummary) WriteMarkdown(out io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## msgload %s: %s\n\n%s\n\n", mdEscape(w.Run.Scenario), strings.ToUpper(WorstVerdict(w.Verdict)), mdEscape(w.headline()))
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
	for i, s := range w.summaries {
		if s == nil {
			continue
		}
		var pb bytes.Buffer
		if err := s.WriteMarkdown(&pb); err != nil {
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
func (w *RunSummary) WriteJUnit(out io.Writer) error {
	var doc junitSuites // the strict JUnit schema allows no attributes on testsuites
	for i, p := range w.Parts {
		var suite junitSuite
		if s := w.summaries[i]; s != nil {
			suite = s.junitSuite(i)
			suite.Name = junitSuiteName(s.Run.Scenario, p.Name)
		} else {
			msg := strings.ToUpper(p.Verdict) + ": " + strings.Join(p.VerdictReasons, "; ")
			f := &junitFailure{Message: msg, Type: p.Verdict, Text: msg}
			c := junitCase{Name: "msgload verdict: " + strings.ToUpper(p.Verdict), Classname: "msgload." + p.Name, Time: "0"}
			suite = junitSuite{Name: junitSuiteName(w.Run.Scenario, p.Name), Package: "msgload", ID: i, Tests: 1,
				Timestamp: junitTimestamp(w.Run.Start), Hostname: "localhost", Time: "0",
				Properties: []junitProperty{{"run.id", w.Run.ID}, {"part", p.Name}, {"verdict", p.Verdict}}}
			if p.Verdict == VerdictError {
				c.Error = f
				suite.Errors++
			} else {
				c.Failure = f
				suite.Fails++
			}
			suite.Cases = []junitCase{c}
		}
		doc.Suites = append(doc.Suites, suite)
	}
	return writeJUnitDoc(out, doc)
}

// parseRunSummary reads a whole run's summary.json into a Summary of kind run:
// its verdict, and the whole object in Whole.
func parseRunSummary(b []byte) (*Summary, error) {
	var w RunSummary
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadSummary, err)
	}
	if _, ok := verdictRank[w.Verdict]; !ok {
		return nil, fmt.Errorf("%w: whole-run summary with verdict %q", errBadSummary, w.Verdict)
	}
	s := &Summary{Summary: summary.Summary{Schema: w.Schema, Kind: KindRun, Verdict: w.Verdict, VerdictReasons: w.VerdictReasons, Reasons: w.Reasons, Passed: w.Verdict == VerdictPass}, Whole: &w}
	s.Run.ID, s.Run.Scenario, s.Run.Version, s.Run.Start, s.Run.End, s.Run.Interrupted = w.Run.ID, w.Run.Scenario, w.Run.Version, w.Run.Start, w.Run.End, w.Run.Interrupted
	return s, nil
}
