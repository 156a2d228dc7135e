package reports

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
)

// Chart geometry (SVG user units).
const (
	chartW, chartH = 720, 260
	padL, padR     = 60, 130
	padT, padB     = 28, 34
)

var palette = []string{"#2b6cb0", "#c53030", "#2f855a", "#b7791f", "#6b46c1", "#2c7a7b", "#97266d", "#4a5568"}

// line is one series of a chart.
type line struct {
	name string
	pts  [][2]float64
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// svgLines draws series as lines on shared axes; hline draws a dashed limit.
// A shares chart (ylabel "share …") keeps its y axis at 0..100%.
func svgLines(id, title, xlabel, ylabel string, lines []line, hline float64, yfmt func(float64) string) template.HTML {
	var b strings.Builder
	xmax, ymax := 0.0, hline
	for _, l := range lines {
		for _, p := range l.pts {
			xmax, ymax = max(xmax, p[0]), max(ymax, p[1])
		}
	}
	xmax, ymax = niceMax(xmax), niceMax(ymax*1.05)
	if strings.HasPrefix(ylabel, "share") {
		ymax = 1
	}
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	x := func(v float64) float64 { return padL + v/xmax*pw }
	y := func(v float64) float64 { return padT + ph - v/ymax*ph }
	fmt.Fprintf(&b, `<svg id="%s" class="chart" role="img" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">`, id, chartW, chartH)
	fmt.Fprintf(&b, `<title>%s</title><text x="%d" y="18" class="t">%s</text>`, template.HTMLEscapeString(title), padL, template.HTMLEscapeString(title))
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%s" y1="%s" y2="%s" class="g"/><text x="%d" y="%s" class="a" text-anchor="end">%s</text>`,
			padL, f1(padL+pw), f1(y(v)), f1(y(v)), padL-4, f1(y(v)+4), template.HTMLEscapeString(yfmt(v)))
		xv := xmax * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%s" y="%d" class="a" text-anchor="middle">%s</text>`, f1(x(xv)), chartH-padB+14, num(math.Round(xv*100)/100))
	}
	fmt.Fprintf(&b, `<text x="%s" y="%d" class="a" text-anchor="middle">%s</text>`, f1(padL+pw/2), chartH-4, template.HTMLEscapeString(xlabel))
	fmt.Fprintf(&b, `<text x="12" y="%s" class="a" transform="rotate(-90 12 %s)" text-anchor="middle">%s</text>`, f1(padT+ph/2), f1(padT+ph/2), template.HTMLEscapeString(ylabel))
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="%s" class="frame"/>`, padL, padT, f1(pw), f1(ph))
	if hline > 0 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%s" y1="%s" y2="%s" class="limit"/><text x="%s" y="%s" class="a">limit %s</text>`,
			padL, f1(padL+pw), f1(y(hline)), f1(y(hline)), f1(padL+pw+4), f1(y(hline)+4), num(hline))
	}
	for i, l := range lines {
		col := palette[i%len(palette)]
		var pts []string
		for _, p := range l.pts {
			pts = append(pts, f1(x(p[0]))+","+f1(y(p[1])))
		}
		if len(pts) == 1 {
			pts = append(pts, pts[0])
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.6" points="%s"/>`, col, strings.Join(pts, " "))
		ly := padT + 12 + 16*i
		fmt.Fprintf(&b, `<rect x="%s" y="%d" width="10" height="10" fill="%s"/><text x="%s" y="%d" class="a">%s</text>`,
			f1(padL+pw+8), ly-9, col, f1(padL+pw+22), ly, template.HTMLEscapeString(l.name))
	}
	if len(lines) == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="a" text-anchor="middle">no data in this run</text>`, f1(padL+pw/2), f1(padT+ph/2))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// svgBars draws a horizontal funnel: one pair of bars (reached, terminal) per stage.
func svgBars(id, title string, stages []FunnelStage) template.HTML {
	var b strings.Builder
	h := padT + 30*max(len(stages), 1) + padB
	fmt.Fprintf(&b, `<svg id="%s" class="chart" role="img" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">`, id, chartW, h)
	fmt.Fprintf(&b, `<title>%s</title><text x="%d" y="18" class="t">%s</text>`, template.HTMLEscapeString(title), padL, template.HTMLEscapeString(title))
	top := int64(1)
	for _, s := range stages {
		top = max(top, s.Reached)
	}
	pw := float64(chartW - padL - padR - 40)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="%d" class="frame"/>`, padL+40, padT, f1(pw), 30*max(len(stages), 1))
	for i, s := range stages {
		y := padT + 30*i + 5
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="a" text-anchor="end">%s</text>`, padL+36, y+14, template.HTMLEscapeString(s.Channel))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="10" fill="%s"><title>reached %d</title></rect>`, padL+40, y, f1(max(1, pw*float64(s.Reached)/float64(top))), palette[0], s.Reached)
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%s" height="10" fill="%s"><title>final state here %d</title></rect>`, padL+40, y+11, f1(max(1, pw*float64(s.Terminal)/float64(top))), palette[2], s.Terminal)
		fmt.Fprintf(&b, `<text x="%s" y="%d" class="a">%d reached, %d final</text>`, f1(padL+44+pw), y+14, s.Reached, s.Terminal)
	}
	if len(stages) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="a" text-anchor="middle">no delivery events in this run</text>`, chartW/2, padT+18)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

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

var htmlTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>msgload {{.S.Run.Scenario}} {{.S.Run.ID}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#1a202c;padding:0 12px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.v{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:600}
.pass{background:#2f855a}.fail{background:#c53030}
table{border-collapse:collapse;width:100%;margin:6px 0}td,th{border-bottom:1px solid #e2e8f0;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f7fafc}code{font:12px ui-monospace,monospace;background:#f7fafc;padding:1px 4px}
.chart{width:100%;height:auto;display:block;margin:10px 0 18px}.chart .t{font:600 13px system-ui,sans-serif}
.chart .a{font:10px system-ui,sans-serif;fill:#4a5568}.chart .g{stroke:#edf2f7}.chart .frame{fill:none;stroke:#cbd5e0}
.chart .limit{stroke:#c53030;stroke-dasharray:6 4;stroke-width:1.5}.muted{color:#718096}
</style></head><body>
<h1>msgload — {{.S.Run.Scenario}} <span class="v {{if .OK}}pass{{else}}fail{{end}}">{{if .OK}}PASS{{else}}FAIL{{end}}</span></h1>
<p class="muted">Run <code>{{.S.Run.ID}}</code> · {{.S.Run.API}} API at {{.S.Run.Target}} · {{.S.Run.Start}} · delivery via {{.S.Run.DeliveryVia}}{{if .S.Run.Interrupted}} · <b>interrupted</b>{{end}} · msgload {{.S.Run.Version}}</p>
<h2>Key figures</h2>
<table>{{range .Key}}<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}</table>
{{if .S.Thresholds}}<h2>Thresholds</h2>
<table><tr><th></th><th>Threshold</th><th>Value</th></tr>{{range .S.Thresholds}}<tr><td>{{if .OK}}✓{{else}}✗{{end}}</td><td><code>{{.Expr}}</code></td><td>{{.Value}}{{if .Error}} — {{.Error}}{{end}}</td></tr>{{end}}</table>{{end}}
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
<p>Simulator limiter: {{.Algorithm}}. Messages: {{.Messages}}. Lost expected (every terminal callback dropped or failed) {{.ExpectedLost}}, measured {{.MeasuredLost}}. Duplicate sends downstream {{.DuplicateSends}}. Limiter windows where measured and true counts differ: {{.WindowMismatches}} of {{len .Windows}}.</p>{{end}}
<p class="muted">Built from the run directory alone by <code>msgload report</code>; summary.json holds every figure.</p>
</body></html>
`))

type htmlKey struct{ Name, Value string }
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
	var steps []htmlStep
	for _, st := range s.Delivery.Failover.Steps {
		steps = append(steps, htmlStep{st.From + " → " + st.To, dur(st.Time.P50), dur(st.Time.P95), st.Count})
	}
	var lat []htmlLat
	row := func(name string, p Percentiles) htmlLat {
		return htmlLat{name, dur(p.P50), dur(p.P95), dur(p.P99), dur(p.Max), p.Count}
	}
	for _, k := range sortedKeys(s.Delivery.ByChannel) {
		lat = append(lat, row("channel "+k, s.Delivery.ByChannel[k]))
	}
	for _, k := range sortedKeys(s.Delivery.ByState) {
		lat = append(lat, row("state "+k, s.Delivery.ByState[k]))
	}
	return htmlTmpl.Execute(w, map[string]any{"S": s, "OK": s.OK(), "Key": key, "Charts": s.chartsHTML(), "Steps": steps, "Lat": lat})
}
