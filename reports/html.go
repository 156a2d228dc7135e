package reports

import (
	"html/template"
	"io"
	"math"
	"strings"
)

func secondsAxis(v float64) string { return dur(v) }
func countAxis(v float64) string   { return num(math.Round(v*100) / 100) }

func (s *Summary) chartsHTML() []template.HTML {
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
	var codes []line
	for _, k := range sortedKeys(c.Codes) {
		codes = append(codes, toLine(k, c.Codes[k]))
	}
	var lat []line
	if len(xs) > 0 {
		lat = []line{toLine("p50", c.LatP50), toLine("p95", c.LatP95), toLine("p99", c.LatP99)}
	}
	var win []line
	for _, k := range sortedKeys(c.Window) {
		win = append(win, line{name: k, pts: c.Window[k]})
	}
	var cdf []line
	for _, k := range sortedKeys(c.DeliveryCDF) {
		cdf = append(cdf, line{name: k, pts: c.DeliveryCDF[k]})
	}
	var ev []line
	for _, k := range sortedKeys(c.Events) {
		ev = append(ev, toLine(k, c.Events[k]))
	}
	return []template.HTML{
		svgLines("chart-rate", "Requests per second by answer", "seconds since start", "requests/s", codes, 0, countAxis),
		svgLines("chart-latency", "Request latency percentiles over time", "seconds since start", "latency", lat, 0, secondsAxis),
		svgLines("chart-window", "Accepted per sliding window, per client", "seconds since start", "accepted in window", win, c.Limit, countAxis),
		svgLines("chart-delivery", "Delivery latency distribution per channel (cumulative)", "latency (s)", "share delivered", cdf, 0, func(v float64) string { return num(math.Round(v*100)) + "%" }),
		svgLines("chart-events", "Callbacks and webhooks per second", "seconds since start", "events/s", ev, 0, countAxis),
		svgBars("chart-funnel", "Failover funnel: messages reaching each channel", c.Funnel),
	}
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{"deref": func(b *bool) bool { return b != nil && *b }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>msgload {{.S.Run.Scenario}} {{.S.Run.ID}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#1a202c;padding:0 12px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.v{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600}
.pass{background:#2f855a}.fail{background:#c53030}.incomplete{background:#b7791f}.error{background:#553c9a}
table{border-collapse:collapse;width:100%;margin:6px 0}td,th{border-bottom:1px solid #e2e8f0;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f7fafc}code{font:12px ui-monospace,monospace;background:#f7fafc;padding:1px 4px}
.chart{width:100%;height:auto;display:block;margin:10px 0 18px}.chart .t{font:600 13px system-ui,sans-serif}
.chart .a{font:10px system-ui,sans-serif;fill:#4a5568}.chart .g{stroke:#edf2f7}.chart .frame{fill:none;stroke:#cbd5e0}
.chart .limit{stroke:#c53030;stroke-dasharray:6 4;stroke-width:1.5}.muted{color:#718096}
</style></head><body>
<h1>msgload — {{.S.Run.Scenario}} <span class="v {{.Class}}">{{.Verdict}}</span></h1>
{{if .S.VerdictReasons}}<ul class="reasons">{{range .S.VerdictReasons}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p class="muted">Run <code>{{.S.Run.ID}}</code> · {{.S.Run.API}} API at {{.S.Run.Target}} · {{.S.Run.Start}} · delivery via {{.S.Run.DeliveryVia}}{{if .S.Run.Interrupted}} · <b>interrupted</b>{{end}} · msgload {{.S.Run.Version}}</p>
<h2>Key figures</h2>
<table>{{range .Key}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
{{if .S.Thresholds}}<h2>Thresholds</h2>
<table><tr><th></th><th>Threshold</th><th>Value</th></tr>{{range .Thr}}<tr><td>{{if .OK}}✓{{else}}✗{{end}}</td><td><code>{{.Expr}}</code></td><td>{{.Value}}{{if .Error}} — {{.Error}}{{end}}</td></tr>{{end}}</table>{{end}}
{{range .S.Warnings}}<p><b>Warning:</b> {{.}}</p>{{end}}
<h2>Charts</h2>
{{range .Charts}}{{.}}
{{end}}
<h2>Rate limit</h2>
<p>Limiter: <b>{{.S.RateLimit.Algorithm.Verdict}}</b>.{{range .S.RateLimit.Algorithm.Evidence}} {{.}}.{{end}}</p>
<table><tr><th>Client</th><th>Sent</th><th>Accepted</th><th>429</th><th>Max accepted per window</th><th>Excess</th><th>First 429</th></tr>
{{range .S.RateLimit.Clients}}<tr><td>{{.ClientID}}</td><td>{{.Sent}}</td><td>{{.Accepted}}</td><td>{{.Rejected429}}</td><td>{{.MaxAccepted}}</td><td>{{.ExcessAccepted}}</td><td>{{.First429At}}</td></tr>{{end}}</table>
{{with .S.RateLimit.RetryAfter}}<p>Retry-After: {{.Present}} present, {{.Missing}} missing, {{.Correct}} correct, {{.TooShort}} too short, {{.TooLong}} too long, {{.Invalid}} unreadable.</p>{{end}}
{{if .Lat}}<h2>Delivery latency</h2>
<table><tr><th>By</th><th>Count</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr>{{range .Lat}}<tr><td>{{.Name}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P95}}</td><td>{{.P99}}</td><td>{{.Max}}</td></tr>{{end}}</table>{{end}}
{{if .S.Delivery.Failover.Steps}}<h2>Failover steps</h2>
<table><tr><th>Step</th><th>Messages</th><th>p50</th><th>p95</th></tr>{{range .Steps}}<tr><td>{{.Name}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P95}}</td></tr>{{end}}</table>{{end}}
{{with .S.Truth}}<h2>Against the simulator's ground truth</h2>
{{if .Agrees}}{{if deref .Agrees}}<p>The measurements agree with the truth.</p>{{else}}<p class="bad">The measurements disagree with the truth:</p><ul>{{range .Disagreements}}<li>{{.}}</li>{{end}}</ul>{{end}}{{else}}<p>Not compared: {{range .Disagreements}}{{.}} {{end}}</p>{{end}}
<p>Simulator limiter: {{.Algorithm}}. Messages: {{.Messages}}. Lost expected (no record ending the message reached the sink by the deadline) {{.ExpectedLost}}, measured {{.MeasuredLost}}. Duplicate callbacks expected {{.ExpectedDuplicates}}, measured {{.MeasuredDuplicates}}. Duplicate sends downstream {{.DuplicateSends}}. Limiter windows where measured and true counts differ: {{.WindowMismatches}} of {{len .Windows}}.</p>{{end}}
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
	Count                    int64
}
type htmlStep struct {
	Name, P50, P95 string
	Count          int64
}

// WriteHTML writes report.html: one self-contained page, inline CSS and SVG, that
// loads nothing from anywhere.
func (s *Summary) WriteHTML(w io.Writer) error {
	var key []htmlKey
	for _, k := range s.keyFigures() {
		key = append(key, htmlKey{k.name, k.value})
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
		steps = append(steps, htmlStep{st.From + " → " + st.To, st.Time.show(st.Time.P50), st.Time.show(st.Time.P95), st.Count})
	}
	var lat []htmlLat
	row := func(name string, p Percentiles) htmlLat {
		return htmlLat{name, p.show(p.P50), p.show(p.P95), p.show(p.P99), p.show(p.Max), p.Count}
	}
	for _, k := range sortedKeys(s.Delivery.ByChannel) {
		lat = append(lat, row("channel "+k, s.Delivery.ByChannel[k]))
	}
	for _, k := range sortedKeys(s.Delivery.ByState) {
		lat = append(lat, row("state "+k, s.Delivery.ByState[k]))
	}
	return htmlTmpl.Execute(w, map[string]any{"S": s, "Verdict": s.verdictWord(), "Class": strings.ToLower(s.verdictWord()), "Key": key, "Charts": s.chartsHTML(), "Steps": steps, "Lat": lat, "Thr": thr})
}
