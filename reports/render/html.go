package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/thresholds"
)

// latencyBound is a threshold that bounds a latency figure from above:
// `requests.latency.p95 < 1s`, `delivery.by_channel["sms"].p99 <= 1m`.
var latencyBound = regexp.MustCompile(`^\s*(requests\.latency|delivery\.latency|delivery\.by_channel\[["']([^"']+)["']\])\.(p50|p90|p95|p99|max)\s*(<=|<)\s*([0-9][0-9._]*[a-zµ]*)\s*$`)

// bound is a threshold's upper bound on a latency figure.
type bound struct {
	figure  string // requests.latency, delivery.latency, delivery.by_channel
	channel string // for delivery.by_channel
	stat    string // p95 …
	at      float64
	lit     string // the bound as written: 30s
	expr    string
}

// latencyBounds are the thresholds that put an upper bound on a latency: they
// are drawn on the charts of that latency.
func (s view) latencyBounds() []bound {
	var out []bound
	for _, t := range s.Thresholds {
		m := latencyBound.FindStringSubmatch(t.Expr)
		if m == nil {
			continue
		}
		v, err := thresholds.Number(m[5])
		if err != nil || !(v > 0) {
			continue
		}
		fig := m[1]
		if m[2] != "" {
			fig = "delivery.by_channel"
		}
		out = append(out, bound{figure: fig, channel: m[2], stat: m[3], at: v, lit: m[5], expr: strings.TrimSpace(t.Expr)})
	}
	return out
}

// channelLabel names a channel for people: a notification has none, and a
// messaging status that named no channel says so.
func (s view) channelLabel(ch string) string {
	if ch == "none" || ch == "" {
		if s.Run.API == rundir.APINotify {
			return "notifications"
		}
		return "channel not named"
	}
	return ch
}

// chartsHTML are the figures of the charts that apply to the run
// (chartSpecs), their ids prefixed for a part's section of a whole run.
func (s view) chartsHTML(prefix string) []template.HTML {
	var out []template.HTML
	for _, c := range s.chartSpecs() {
		out = append(out, c.html(prefix))
	}
	return out
}

// testedRows say what was tested: the header of every report.
func (s view) testedRows() []keyFigure {
	r, rl := s.Run, s.RateLimit
	var rows []keyFigure
	if r.Description != "" {
		rows = append(rows, keyFigure{"scenario", r.Scenario + " — " + r.Description})
	} else {
		rows = append(rows, keyFigure{"scenario", r.Scenario})
	}
	target := r.Target
	if target == "embedded" {
		target = "the embedded simulator"
	}
	rows = append(rows, keyFigure{"target", fmt.Sprintf("%s API at %s", r.API, target)})
	load := fmt.Sprintf("%s %s/s", r.Profile, twoDecimals(s.Requests.PlannedRate))
	if r.Profile == "" {
		load = twoDecimals(s.Requests.PlannedRate) + "/s"
	}
	if s.Requests.PlannedCount > 0 {
		load += fmt.Sprintf(", %s", plural(s.Requests.PlannedCount, s.Noun()))
	}
	if r.PlannedDur > 0 {
		load += " over " + span(r.PlannedDur)
	}
	rows = append(rows, keyFigure{"planned load", load})
	rows = append(rows, keyFigure{"clients", strconv.Itoa(r.Clients)})
	limit := "none expected"
	if rl.Limit > 0 {
		limit = fmt.Sprintf("%d per %s per client, mode %s", rl.Limit, span(rl.Window), rl.Mode)
	}
	rows = append(rows, keyFigure{"rate limit", limit})
	deliv := "via " + r.DeliveryVia
	if r.DeliveryVia == "sink" && r.Grace > 0 {
		deliv += ", grace " + span(r.Grace)
	}
	rows = append(rows, keyFigure{"delivery", deliv})
	rows = append(rows, buildRows(r.Version, r.Commit, r.CommitTime, r.Host)...)
	when := showTime(r.Start) + " to " + showTime(r.End)
	if r.End == "" {
		when = showTime(r.Start) + " (no end recorded)"
	}
	if r.Interrupted {
		when += " — interrupted"
	}
	rows = append(rows, keyFigure{"ran", when})
	rows = append(rows, keyFigure{"run id", r.ID})
	return rows
}

// span shows a planned span as the scenario would write it: 1m, 90s, 2m30s,
// 1.5s.
func span(sec float64) string {
	d := time.Duration(math.Round(sec*1e3)) * time.Millisecond
	v := d.String()
	if strings.HasSuffix(v, "m0s") {
		v = strings.TrimSuffix(v, "0s")
	}
	if strings.HasSuffix(v, "h0m") {
		v = strings.TrimSuffix(v, "0m")
	}
	return v
}

// showTime shows an RFC 3339 time of summary.json to the second, for people:
// 2026-11-23 13:45:31 UTC.
func showTime(v string) string {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return v
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

const htmlHead = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{{chartCSP}}
<title>{{.Title}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:16px auto;max-width:980px;color:#1a202c;padding:0 12px;overflow-wrap:anywhere}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}h3{font-size:15px;margin:20px 0 6px}
.v{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600}
.pass{background:#2f855a}.fail{background:#c53030}.incomplete{background:#b7791f}.error{background:#553c9a}
table{border-collapse:collapse;margin:6px 0;display:block;overflow-x:auto;max-width:100%}td,th{border-bottom:1px solid #e2e8f0;padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:normal}
th{background:#f7fafc}code{font:12px ui-monospace,monospace;background:#f7fafc;padding:1px 4px;overflow-wrap:anywhere}
table.key th{width:40%}
table.tested{font-size:12px;color:#4a5568;margin:4px 0 10px}table.tested tr{display:inline-block;margin:0 14px 0 0}
table.tested th,table.tested td{border:0;padding:0 4px 0 0;background:none;display:inline}table.tested th{font-weight:600}
.card{border:1px solid #e2e8f0;border-radius:6px;padding:8px 12px;margin:8px 0 12px}
.reasons{margin:4px 0;padding-left:20px}.reasons li{margin:4px 0}.next{color:#4a5568}
.whose{display:inline-block;font-size:12px;font-weight:600;padding:0 6px;border-radius:3px;background:#edf2f7}
.outcome{font-size:15px;margin:6px 0}.outcome p{margin:4px 0}
table.thr td.mark{width:1.5em;text-align:center;padding:4px}table.thr td{border-bottom:1px solid #e2e8f0}
table.counts td{text-align:right}
.chart{width:100%;height:auto;display:block;margin:10px 0 18px}.chart .t{font:600 13px system-ui,sans-serif}
.muted{color:#718096}.part{border-top:3px solid #e2e8f0;margin-top:36px}
</style>{{chartLib}}</head><body>
`

// partBody is the report of one part (a run without parts is one): the header
// of what was tested, the verdict in words, the outcome counts, key figures,
// thresholds, the charts that apply, then the tables.
const partBody = `{{define "part"}}<section class="card" id="{{.Prefix}}card">
{{if .Card}}<ul class="reasons">{{range .Card}}<li><span class="whose">{{.Whose}}</span> {{inline .Text}}{{if .Next}}<br><span class="next">Next: {{inline .Next}}</span>{{end}}</li>{{end}}</ul>{{end}}
<div class="outcome" id="{{.Prefix}}outcome">{{range .Outcome}}<p>{{.}}</p>{{end}}</div>
{{if .Thr}}<table class="thr" id="{{.Prefix}}thresholds">{{range .Thr}}<tr><td class="mark">{{if .OK}}✓{{else}}✗{{end}}</td><td>{{.Text}}</td></tr>{{end}}</table>{{end}}
</section>
<table class="tested">{{range .Tested}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<table class="counts" id="{{.Prefix}}counts"><tr>{{range .Counts}}<th>{{.Name}}</th>{{end}}</tr><tr>{{range .Counts}}<td>{{.Value}}</td>{{end}}</tr></table>
<h3>Key figures</h3>
<table class="key">{{range .Key}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
{{if .Ops}}<h3>Per operation</h3>
<table class="ops" id="{{.Prefix}}ops"><tr>{{range .OpHeads}}<th>{{.}}</th>{{end}}</tr>{{range .Ops}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}
{{if .Errs}}<h3>Errors</h3>
<table class="errors" id="{{.Prefix}}errors"><tr>{{range .ErrHeads}}<th>{{.}}</th>{{end}}</tr>{{range .Errs}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>{{end}}
{{range .S.Warnings}}<p><b>Warning:</b> {{.}}</p>{{end}}
{{if .Charts}}<h3>Charts</h3>
{{range .Charts}}{{.}}
{{end}}{{end}}
{{if .ShowLimit}}<h3>Rate limit</h3>
<p>Limiter: <b>{{.Limiter}}</b>{{if .S.RateLimit.Algorithm.Evidence}}, because:{{end}}</p>{{if .S.RateLimit.Algorithm.Evidence}}<ul class="evidence">{{range .S.RateLimit.Algorithm.Evidence}}<li>{{.}}</li>{{end}}</ul>{{end}}
<table class="clients"><tr><th>Client</th><th>Sent</th><th>Accepted</th><th>429</th><th>Limit</th><th>Max accepted per window</th><th>Excess</th><th>First 429</th></tr>
{{range .Clients}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>
{{if .S.RateLimit.Rejected429}}<p>{{.RetryAfter}}</p>{{end}}{{end}}
{{if .Idem}}<h3>Idempotency</h3><p>{{.Idem}}</p>{{end}}
{{if .Lost}}<h3>Lost and late messages</h3><p>{{.Lost}}</p><p>The answers of every lost message (<code>lost.jsonl</code> joined with <code>attempts.jsonl</code>), in the run directory: <code>{{.LostJQ}}</code></p>{{end}}
{{if .Lat}}<h3>Delivery latency</h3>
<table><tr><th>By</th><th>Count</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>{{range .Lat}}<tr><td>{{.Name}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P95}}</td><td>{{.P99}}</td><td>{{.Max}}</td></tr>{{end}}</table>{{end}}
{{if .Steps}}<h3>Failover steps</h3>
<table><tr><th>Step</th><th>Messages</th><th>p50</th><th>p95</th></tr>{{range .Steps}}<tr><td>{{.Name}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P95}}</td></tr>{{end}}</table>{{end}}
{{with .S.Truth}}<h3>Against the simulator's ground truth</h3>
{{if .Agrees}}{{if deref .Agrees}}<p>The measurements agree with the truth{{if .DeliveryNotCompared}}, but the delivery figures were not compared: {{.DeliveryNotCompared}}{{end}}.</p>{{else}}<p class="bad">The measurements disagree with the truth:</p><ul>{{range .Disagreements}}<li>{{.}}</li>{{end}}</ul>{{end}}{{else}}<p>Not compared: {{range .Disagreements}}{{.}} {{end}}</p>{{end}}
<p>Simulator limiter: {{.Algorithm}}. Messages: {{.Messages}}. Lost expected (no record ending the message reached the sink by the deadline) {{.ExpectedLost}}, measured {{.MeasuredLost}}. Duplicate callbacks expected {{.ExpectedDuplicates}}, measured {{.MeasuredDuplicates}}. Messages delivered twice (ended under two ids) expected {{.ExpectedDuplicateDeliveries}}, measured {{.MeasuredDuplicateDeliveries}}. Duplicate sends downstream {{.DuplicateSends}}. Limiter windows where measured and true counts differ: {{.WindowMismatches}} of {{len .Windows}}.</p>{{end}}{{end}}`

var tmplFuncs = template.FuncMap{"deref": func(b *bool) bool { return b != nil && *b }, "inline": inlineHTML,
	"chartCSP": func() template.HTML { return chartCSP }, "chartLib": func() template.HTML { return chartLib }}

// inlineHTML is a reason's text or next step as HTML: escaped, its `code`
// spans (the commands to run) set as code.
func inlineHTML(s string) template.HTML {
	var b strings.Builder
	for i, part := range strings.Split(s, "`") {
		if i%2 == 1 && i < strings.Count(s, "`") {
			b.WriteString("<code>" + template.HTMLEscapeString(part) + "</code>")
			continue
		}
		if i%2 == 1 {
			b.WriteString("`")
		}
		b.WriteString(template.HTMLEscapeString(part))
	}
	return template.HTML(b.String())
}

// htmlTmpl is parsed on first use, not in the package init: every process
// links the reports, and a run only writes its report at the end.
var htmlTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.Must(template.New("report").Funcs(tmplFuncs).Parse(partBody)).Parse(htmlHead + `<h1>msgload — {{.S.Run.Scenario}} <span class="v {{.Class}}">{{.Verdict}}</span></h1>
{{template "part" .}}
<p class="muted">Built from the run directory alone by <code>msgload report</code>; summary.json holds every figure.</p>
</body></html>
`))
})

type htmlKey struct{ Name, Value string }
type htmlThr struct {
	OK   bool
	Text string
}
type htmlLat struct {
	Name, P50, P95, P99, Max string
	Count                    string
}
type htmlStep struct {
	Name, P50, P95 string
	Count          int64
}

// htmlView is what the part template reads.
func (s view) htmlView(prefix string) map[string]any {
	rows := func(kf []keyFigure) []htmlKey {
		out := make([]htmlKey, 0, len(kf))
		for _, k := range kf {
			out = append(out, htmlKey{k.name, k.value})
		}
		return out
	}
	var thr []htmlThr
	for _, t := range s.Thresholds {
		thr = append(thr, htmlThr{t.OK, thresholdText(t)})
	}
	var ops, errs [][]string
	for _, f := range s.Requests.Operations {
		ops = append(ops, opCells(f))
	}
	for _, e := range s.SortedErrors() {
		errs = append(errs, errorCells(e))
	}
	var steps []htmlStep
	for _, st := range s.Delivery.Failover.Steps {
		steps = append(steps, htmlStep{st.From + " → " + st.To, st.Time.ShowFigure("p50"), st.Time.ShowFigure("p95"), st.Count})
	}
	var lat []htmlLat
	row := func(name string, p percentiles) htmlLat {
		return htmlLat{name, p.ShowFigure("p50"), p.ShowFigure("p95"), p.ShowFigure("p99"), p.ShowFigure("max"), p.CountText()}
	}
	if s.Run.API != rundir.APINotify || len(s.Delivery.ByChannel) > 1 {
		for _, k := range sortedKeys(s.Delivery.ByChannel) {
			lat = append(lat, row("channel "+s.channelLabel(k), s.Delivery.ByChannel[k]))
		}
	}
	for _, k := range sortedKeys(s.Delivery.ByState) {
		lat = append(lat, row("state "+k, s.Delivery.ByState[k]))
	}
	showLimit := s.RateLimit.Limit > 0 || s.RateLimit.Rejected429 > 0
	return map[string]any{"S": s.Summary, "Prefix": prefix, "Verdict": s.VerdictWord(), "Class": strings.ToLower(s.VerdictWord()),
		"Title": "msgload " + s.Run.Scenario + " " + s.Run.ID, "Card": s.cardReasons(),
		"Tested": rows(s.testedRows()), "Outcome": s.cardLines(), "Counts": rows(s.outcomeCounts()),
		"Key": rows(s.keyFigures()), "Charts": s.chartsHTML(prefix), "Steps": steps, "Lat": lat, "Thr": thr, "ShowLimit": showLimit,
		"Ops": ops, "OpHeads": opHeads, "Errs": errs, "ErrHeads": errorHeads,
		"Limiter": s.limiterName(), "Clients": s.clientCells(), "RetryAfter": s.retryAfterText(), "Idem": s.idempotencyText(),
		"Lost": s.lostText(), "LostJQ": s.LostJQ()}
}

// WriteHTML writes report.html: one self-contained page, inline CSS, charts and
// their data, that loads nothing from anywhere.
func (s view) WriteHTML(w io.Writer) error {
	return htmlTmpl().Execute(w, s.htmlView(""))
}

// buildRows are the header's rows on the msgload that ran: version and commit,
// and the host.
func buildRows(version, commit, commitTime, host string) []keyFigure {
	ver := version
	if ver == "" {
		ver = "unknown"
	}
	switch {
	case strings.Contains(ver, "commit "):
		// msgload's version already names its commit ("v1.2.0 (commit
		// 0123456789ab, …)"): once is enough in a compact header.
	case commit != "":
		ver += ", commit " + commit
		if commitTime != "" {
			ver += " of " + commitTime
		}
	default:
		ver += ", commit unknown (built without VCS information)"
	}
	rows := []keyFigure{{"msgload", ver}}
	if host != "" {
		rows = append(rows, keyFigure{"host", host})
	}
	return rows
}
