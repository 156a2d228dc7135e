package reports

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/thresholds"
)

func secondsAxis(v float64) string { return dur(v) }
func countAxis(v float64) string   { return num(math.Round(v*100) / 100) }

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
func (s *Summary) latencyBounds() []bound {
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
func (s *Summary) channelLabel(ch string) string {
	if ch == "none" || ch == "" {
		if s.Run.API == rundir.APINotify {
			return "notifications"
		}
		return "channel not named"
	}
	return ch
}

// chartsApply says which charts apply to the run: a chart with nothing to say
// about it is not drawn.
func (s *Summary) chartsHTML(prefix string) []template.HTML {
	c := s.charts
	if c == nil {
		c = &charts{}
	}
	xs := c.Buckets
	toLine := func(name string, ys []float64) line {
		l := line{name: name}
		for i, v := range ys {
			if i < len(xs) {
				l.pts = append(l.pts, [2]float64{xs[i], v})
			}
		}
		return l
	}
	bounds := s.latencyBounds()
	var out []template.HTML
	if len(xs) > 0 && len(c.Codes) > 0 {
		var codes []line
		for _, k := range sortedKeys(c.Codes) {
			codes = append(codes, toLine(k, c.Codes[k]))
		}
		out = append(out, svgLines(prefix+"chart-rate", "Requests per second by answer", "seconds since start", "requests/s", codes, nil, countAxis))
		lat := []line{toLine("p50", c.LatP50), toLine("p95", c.LatP95), toLine("p99", c.LatP99)}
		var marks []chartMark
		for _, b := range bounds {
			if b.figure == "requests.latency" {
				marks = append(marks, chartMark{at: b.at, label: "threshold " + b.stat + " < " + b.lit})
			}
		}
		out = append(out, svgLines(prefix+"chart-latency", "Request latency percentiles over time", "seconds since start", "latency", lat, marks, secondsAxis))
	}
	// The sliding window only tells something of a limit that refused or was exceeded.
	if c.Limit > 0 && len(c.Window) > 0 && (s.RateLimit.Rejected429 > 0 || s.RateLimit.ExcessAccepted > 0) {
		var win []line
		for _, k := range sortedKeys(c.Window) {
			win = append(win, line{name: k, pts: c.Window[k]})
		}
		out = append(out, svgLines(prefix+"chart-window", "Accepted per sliding window, per client", "seconds since start", "accepted in window", win,
			[]chartMark{{at: c.Limit, label: "limit " + num(c.Limit), limit: true}}, countAxis))
	}
	if s.Delivery.Measured && len(c.DeliveryCDF) > 0 {
		var cdf []line
		for _, k := range sortedKeys(c.DeliveryCDF) {
			cdf = append(cdf, line{name: s.channelLabel(k), pts: c.DeliveryCDF[k]})
		}
		var marks []chartMark
		for _, b := range bounds {
			switch b.figure {
			case "delivery.latency":
				marks = append(marks, chartMark{at: b.at, vertical: true, label: "threshold " + b.stat + " < " + b.lit})
			case "delivery.by_channel":
				marks = append(marks, chartMark{at: b.at, vertical: true, label: b.channel + " " + b.stat + " < " + b.lit})
			}
		}
		out = append(out, svgLines(prefix+"chart-delivery", "Delivery latency distribution per channel (cumulative)", "latency (s)", "share delivered", cdf, marks, func(v float64) string { return num(math.Round(v*100)) + "%" }))
	}
	if s.Delivery.Measured && s.Run.DeliveryVia == "sink" && len(c.Events) > 0 && len(xs) > 0 {
		var ev []line
		for _, k := range sortedKeys(c.Events) {
			ev = append(ev, toLine(k, c.Events[k]))
		}
		out = append(out, svgLines(prefix+"chart-events", "Callbacks and webhooks per second", "seconds since start", "events/s", ev, nil, countAxis))
	}
	// The funnel is a cascade's: a chain of more than one channel that delivered something.
	if c.chain > 1 && funnelHasData(c.Funnel) {
		out = append(out, svgBars(prefix+"chart-funnel", "Failover funnel: messages reaching each channel", c.Funnel))
	}
	return out
}

func funnelHasData(f []funnelStage) bool {
	for _, st := range f {
		if st.Reached > 0 || st.Terminal > 0 {
			return true
		}
	}
	return false
}

// testedRows say what was tested: the header of every report.
func (s *Summary) testedRows() []keyFigure {
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
		load += fmt.Sprintf(", %s", plural(s.Requests.PlannedCount, s.noun()))
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
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{{.Title}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#1a202c;padding:0 12px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}h3{font-size:15px;margin:20px 0 6px}
.v{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600}
.pass{background:#2f855a}.fail{background:#c53030}.incomplete{background:#b7791f}.error{background:#553c9a}
table{border-collapse:collapse;width:100%;margin:6px 0}td,th{border-bottom:1px solid #e2e8f0;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f7fafc;width:32%}code{font:12px ui-monospace,monospace;background:#f7fafc;padding:1px 4px}
table.tested th{background:none;color:#4a5568;font-weight:500;width:18%}
.outcome{font-size:16px;margin:10px 0}.outcome p{margin:4px 0}
table.counts td{text-align:right;width:9%}table.counts th{width:auto}
.chart{width:100%;height:auto;display:block;margin:10px 0 18px}.chart .t{font:600 13px system-ui,sans-serif}
.muted{color:#718096}.part{border-top:3px solid #e2e8f0;margin-top:36px}
</style></head><body>
`

// partBody is the report of one part (a run without parts is one): the header
// of what was tested, the verdict in words, the outcome counts, key figures,
// thresholds, the charts that apply, then the tables.
const partBody = `{{define "part"}}<table class="tested">{{range .Tested}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<div class="outcome" id="{{.Prefix}}outcome">{{range .Outcome}}<p>{{.}}</p>{{end}}</div>
<table class="counts" id="{{.Prefix}}counts"><tr>{{range .Counts}}<th>{{.Name}}</th>{{end}}</tr><tr>{{range .Counts}}<td>{{.Value}}</td>{{end}}</tr></table>
<h3>Key figures</h3>
<table>{{range .Key}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
{{if .S.Thresholds}}<h3>Thresholds</h3>
<table><tr><th></th><th>Threshold</th><th>Value</th></tr>{{range .Thr}}<tr><td>{{if .OK}}✓{{else}}✗{{end}}</td><td><code>{{.Expr}}</code></td><td>{{.Value}}{{if .Error}} — {{.Error}}{{end}}</td></tr>{{end}}</table>{{end}}
{{range .S.Warnings}}<p><b>Warning:</b> {{.}}</p>{{end}}
{{if .Charts}}<h3>Charts</h3>
{{range .Charts}}{{.}}
{{end}}{{end}}
{{if .ShowLimit}}<h3>Rate limit</h3>
<p>Limiter: <b>{{.S.RateLimit.Algorithm.Verdict}}</b>.{{range .S.RateLimit.Algorithm.Evidence}} {{.}}.{{end}}</p>
<table><tr><th>Client</th><th>Sent</th><th>Accepted</th><th>429</th><th>Max accepted per window</th><th>Excess</th><th>First 429</th></tr>
{{range .S.RateLimit.Clients}}<tr><td>{{.ClientID}}</td><td>{{.Sent}}</td><td>{{.Accepted}}</td><td>{{.Rejected429}}</td><td>{{.MaxAccepted}}</td><td>{{.ExcessAccepted}}</td><td>{{.First429At}}</td></tr>{{end}}</table>
{{if .S.RateLimit.Rejected429}}{{with .S.RateLimit.RetryAfter}}<p>Retry-After: {{.Present}} present, {{.Missing}} missing, {{.Correct}} correct, {{.TooShort}} too short, {{.TooLong}} too long, {{.Invalid}} unreadable.</p>{{end}}{{end}}{{end}}
{{if .Lat}}<h3>Delivery latency</h3>
<table><tr><th>By</th><th>Count</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>{{range .Lat}}<tr><td>{{.Name}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P95}}</td><td>{{.P99}}</td><td>{{.Max}}</td></tr>{{end}}</table>{{end}}
{{if .Steps}}<h3>Failover steps</h3>
<table><tr><th>Step</th><th>Messages</th><th>p50</th><th>p95</th></tr>{{range .Steps}}<tr><td>{{.Name}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P95}}</td></tr>{{end}}</table>{{end}}
{{with .S.Truth}}<h3>Against the simulator's ground truth</h3>
{{if .Agrees}}{{if deref .Agrees}}<p>The measurements agree with the truth.</p>{{else}}<p class="bad">The measurements disagree with the truth:</p><ul>{{range .Disagreements}}<li>{{.}}</li>{{end}}</ul>{{end}}{{else}}<p>Not compared: {{range .Disagreements}}{{.}} {{end}}</p>{{end}}
<p>Simulator limiter: {{.Algorithm}}. Messages: {{.Messages}}. Lost expected (no record ending the message reached the sink by the deadline) {{.ExpectedLost}}, measured {{.MeasuredLost}}. Duplicate callbacks expected {{.ExpectedDuplicates}}, measured {{.MeasuredDuplicates}}. Messages delivered twice (ended under two ids) expected {{.ExpectedDuplicateDeliveries}}, measured {{.MeasuredDuplicateDeliveries}}. Duplicate sends downstream {{.DuplicateSends}}. Limiter windows where measured and true counts differ: {{.WindowMismatches}} of {{len .Windows}}.</p>{{end}}{{end}}`

var tmplFuncs = template.FuncMap{"deref": func(b *bool) bool { return b != nil && *b }}

var htmlTmpl = template.Must(template.Must(template.New("report").Funcs(tmplFuncs).Parse(partBody)).Parse(htmlHead + `<h1>msgload — {{.S.Run.Scenario}} <span class="v {{.Class}}">{{.Verdict}}</span></h1>
{{if .Reasons}}<ul class="reasons">{{range .Reasons}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{template "part" .}}
<p class="muted">Built from the run directory alone by <code>msgload report</code>; summary.json holds every figure.</p>
</body></html>
`))

type htmlKey struct{ Name, Value string }
type htmlThr struct {
	OK                 bool
	Expr, Value, Error string
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
func (s *Summary) htmlView(prefix string) map[string]any {
	rows := func(kf []keyFigure) []htmlKey {
		out := make([]htmlKey, 0, len(kf))
		for _, k := range kf {
			out = append(out, htmlKey{k.name, k.value})
		}
		return out
	}
	var thr []htmlThr
	for _, t := range s.Thresholds {
		v, e := thresholdValue(t), t.Error
		if len(t.NoData) > 0 {
			v, e = t.Error, ""
		}
		thr = append(thr, htmlThr{t.OK, t.Expr, v, e})
	}
	var steps []htmlStep
	for _, st := range s.Delivery.Failover.Steps {
		steps = append(steps, htmlStep{st.From + " → " + st.To, st.Time.showFigure("p50"), st.Time.showFigure("p95"), st.Count})
	}
	var lat []htmlLat
	row := func(name string, p percentiles) htmlLat {
		return htmlLat{name, p.showFigure("p50"), p.showFigure("p95"), p.showFigure("p99"), p.showFigure("max"), p.countText()}
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
	return map[string]any{"S": s, "Prefix": prefix, "Verdict": s.verdictWord(), "Class": strings.ToLower(s.verdictWord()),
		"Title": "msgload " + s.Run.Scenario + " " + s.Run.ID, "Reasons": s.reasonLines(),
		"Tested": rows(s.testedRows()), "Outcome": s.outcomeLines(), "Counts": rows(s.outcomeCounts()),
		"Key": rows(s.keyFigures()), "Charts": s.chartsHTML(prefix), "Steps": steps, "Lat": lat, "Thr": thr, "ShowLimit": showLimit}
}

// WriteHTML writes report.html: one self-contained page, inline CSS and SVG, that
// loads nothing from anywhere.
func (s *Summary) WriteHTML(w io.Writer) error {
	return htmlTmpl.Execute(w, s.htmlView(""))
}

// buildRows are the header's rows on the msgload that ran: version and commit,
// and the host.
func buildRows(version, commit, commitTime, host string) []keyFigure {
	ver := version
	if ver == "" {
		ver = "unknown"
	}
	if commit != "" {
		ver += ", commit " + commit
		if commitTime != "" {
			ver += " of " + commitTime
		}
	} else {
		ver += ", commit unknown (built without VCS information)"
	}
	rows := []keyFigure{{"msgload", ver}}
	if host != "" {
		rows = append(rows, keyFigure{"host", host})
	}
	return rows
}
