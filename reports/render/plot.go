package render

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/msgload/msgload/reports"
)

// The charts are described once (chartSpec) and drawn twice: in report.html
// by uPlot, embedded below with the data inline, interactive (drag to zoom,
// double-click to reset, hover for values) and one self-contained file; in
// report.md as SVG files written by svg.go, static, beside it. uPlot replaced
// gonum/plot, whose fonts and PDF/LaTeX back-ends made a fifth of the binary.

// uPlot 1.6.32 (MIT, Leon Sorokin; uplot/LICENSE), from `npm pack uplot@1.6.32`.
var (
	//go:embed uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed uplot/uPlot.min.css
	uplotCSS string
	//go:embed uplot/charts.js
	chartsJS string
)

// chartCSS is the page's own style of a chart: the figure, its legend and the
// list of the lines a chart carries (limits, thresholds).
const chartCSS = `figure.chart{margin:10px 0 18px}figure.chart figcaption{font:600 13px system-ui,sans-serif;margin:0 0 4px}
figure.chart .plot{width:100%;min-height:180px}figure.chart .u-legend{font-size:12px}
figure.chart .u-legend th,figure.chart .u-legend td{width:auto;background:none;border:0;padding:2px 4px;font-weight:500}
figure.chart ul.marks{margin:2px 0 0;padding:0;list-style:none;font-size:12px;color:#4a5568}figure.chart svg{width:100%;max-width:760px;height:auto;display:block}
`

// scriptHash is the CSP source that lets exactly this inline script run.
func scriptHash(js string) string {
	h := sha256.Sum256([]byte(js))
	return "'sha256-" + base64.StdEncoding.EncodeToString(h[:]) + "'"
}

// chartCSP is the page's Content-Security-Policy: nothing is fetched from
// anywhere (default-src 'none'), and the only scripts that run are uPlot and
// charts.js, named by their hashes; the data blocks are JSON, not scripts.
var chartCSP = template.HTML(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src ` +
	scriptHash(uplotJS) + " " + scriptHash(chartsJS) + `">`)

// chartLib is what the head of report.html carries for its charts: uPlot's
// CSS and the page's, uPlot itself and charts.js, which draws every chart
// from its data when the page has loaded.
var chartLib = template.HTML("<style>" + uplotCSS + "\n" + chartCSS + "</style>\n<script>" + uplotJS + "</script>\n<script>" + chartsJS + "</script>\n")

// Axis units: how a value on an axis is shown, as a threshold's figure is
// (reports.UnitSeconds …).
const (
	unitSeconds = reports.UnitSeconds
	unitCount   = reports.UnitCount
	unitShare   = reports.UnitShare
)

// markReach is how far beyond the data a limit or threshold is still drawn to
// scale: a bound more than three times the data's largest value would press
// the data into the bottom third of the chart (a 200 ms bound over 1 ms
// latencies flattens them against the axis), so it is drawn as a labelled
// arrow at the edge instead, and its list entry says where the data end.
const markReach = 3.0

// markFits says whether a bound at `at` is drawn to scale over data reaching
// dataMax (nothing drawn yet: it always is).
func markFits(at, dataMax float64) bool {
	return !(dataMax > 0) || at <= markReach*dataMax
}

var palette = []string{"#2b6cb0", "#c53030", "#2f855a", "#b7791f", "#6b46c1", "#2c7a7b", "#97266d", "#4a5568"}

// Colours of the lines across a chart.
const (
	limitColor     = "#c53030" // the scenario's limit: red, long dashes
	thresholdColor = "#1a202c" // a threshold's bound: dark, dash-dot
)

// line is one series of a chart: points (x, y), x ascending; NaN y is a gap.
type line struct {
	name string
	pts  [][2]float64
}

// chartMark is a straight line across a chart: a limit or a threshold's bound,
// horizontal at y = at, or vertical at x = at when vertical.
type chartMark struct {
	at       float64
	label    string
	vertical bool
	limit    bool // the scenario's limit; otherwise a threshold
}

// chartSpec is one chart as both report.html and report.md draw it.
type chartSpec struct {
	id, title      string // id: chart-latency; the SVG file is rundir.ChartFile(id)
	xlabel, ylabel string
	xunit, yunit   string
	lines          []line
	marks          []chartMark
	funnel         []funnelStage // a funnel chart: bars, no lines
	isFunnel       bool
	note           string // what the chart's reader must know to read it (a gap's meaning), under its legend
}

// seriesStyle gives p50, p95 and p99 a colour and a dash of their own (so they
// stay apart in grey print and where they overlap); other series a palette
// colour, solid.
func seriesStyle(i int, name string) (color string, dash []float64) {
	switch name {
	case "p50":
		return palette[0], nil
	case "p95":
		return palette[3], []float64{6, 3}
	case "p99":
		return palette[1], []float64{2, 2}
	}
	return palette[i%len(palette)], nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// extent is the largest finite x and y of the lines (0 when none).
func (c chartSpec) extent() (xmax, ymax float64, points int) {
	for _, l := range c.lines {
		for _, p := range l.pts {
			if finite(p[0]) && finite(p[1]) {
				xmax, ymax = max(xmax, p[0]), max(ymax, p[1])
				points++
			}
		}
	}
	return xmax, ymax, points
}

// placedMark is a mark with where it goes: to scale, or off the chart.
type placedMark struct {
	chartMark
	off     bool
	dataMax float64 // the data's reach along the mark's axis
}

// placeMarks applies markReach to every usable mark.
func (c chartSpec) placeMarks() []placedMark {
	xmax, ymax, _ := c.extent()
	var out []placedMark
	for _, m := range c.marks {
		if !(m.at > 0) || math.IsInf(m.at, 0) {
			continue
		}
		reach := ymax
		if m.vertical {
			reach = xmax
		}
		out = append(out, placedMark{m, !markFits(m.at, reach), reach})
	}
	return out
}

// show formats v as the unit's axis shows it.
func show(unit string, v float64) string {
	switch unit {
	case unitSeconds:
		return dur(v)
	case unitShare:
		return num(math.Round(v*100)) + "%"
	}
	return twoDecimals(v)
}

// note is the mark's entry in the chart's list: its label and, off the chart,
// where it is against the data.
func (m placedMark) note(unit string) string {
	if !m.off {
		return m.label
	}
	side := "above this chart"
	if m.vertical {
		side = "right of this chart"
	}
	return m.label + " — " + side + ": the data reach " + show(unit, m.dataMax)
}

// jsonFloat is a figure of the chart data: NaN and ±Inf (no data) are null.
type jsonFloat float64

// MarshalJSON writes null for a value that is not a number.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if !finite(float64(f)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// plotData is what charts.js reads from a chart's JSON block.
type plotData struct {
	X      []jsonFloat  `json:"x"`
	Series []plotSeries `json:"series"`
	XLabel string       `json:"xLabel"`
	YLabel string       `json:"yLabel"`
	XUnit  string       `json:"xUnit"`
	YUnit  string       `json:"yUnit"`
	YTop   float64      `json:"yTop"` // the y axis reaches at least this (a bound drawn to scale)
	Marks  []plotMark   `json:"marks"`
}

type plotSeries struct {
	Name  string      `json:"name"`
	Color string      `json:"color"`
	Dash  []float64   `json:"dash,omitempty"`
	Y     []jsonFloat `json:"y"`
}

type plotMark struct {
	At    float64 `json:"at"`
	Label string  `json:"label"`
	Axis  string  `json:"axis"` // y: horizontal line; x: vertical
	Limit bool    `json:"limit,omitempty"`
	Off   bool    `json:"off,omitempty"` // beyond markReach: an arrow at the edge
}

// join aligns the lines on the union of their x values, as uPlot's data
// wants: one x array, each series a y per x, NaN where it has no point. A
// vertical mark drawn to scale adds its x, so the x axis reaches it.
func (c chartSpec) join(placed []placedMark) ([]float64, [][]float64) {
	var xs []float64
	for _, l := range c.lines {
		for _, p := range l.pts {
			if finite(p[0]) {
				xs = append(xs, p[0])
			}
		}
	}
	for _, m := range placed {
		if m.vertical && !m.off {
			xs = append(xs, m.at)
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	ys := make([][]float64, len(c.lines))
	for i, l := range c.lines {
		ys[i] = make([]float64, len(xs))
		for j := range ys[i] {
			ys[i][j] = math.NaN()
		}
		for _, p := range l.pts {
			if j, ok := slices.BinarySearch(xs, p[0]); ok {
				ys[i][j] = p[1]
			}
		}
	}
	return xs, ys
}

// data is the chart's JSON for charts.js.
func (c chartSpec) data() plotData {
	placed := c.placeMarks()
	xs, ys := c.join(placed)
	d := plotData{XLabel: c.xlabel, YLabel: c.ylabel, XUnit: c.xunit, YUnit: c.yunit, X: floats(xs), Series: []plotSeries{}, Marks: []plotMark{}}
	for i, l := range c.lines {
		color, dash := seriesStyle(i, l.name)
		d.Series = append(d.Series, plotSeries{Name: l.name, Color: color, Dash: dash, Y: floats(ys[i])})
	}
	for _, m := range placed {
		axis := "y"
		if m.vertical {
			axis = "x"
		}
		if !m.off && !m.vertical {
			d.YTop = max(d.YTop, m.at)
		}
		d.Marks = append(d.Marks, plotMark{At: m.at, Label: m.label, Axis: axis, Limit: m.limit, Off: m.off})
	}
	return d
}

func floats(v []float64) []jsonFloat {
	out := make([]jsonFloat, len(v))
	for i, f := range v {
		out[i] = jsonFloat(f)
	}
	return out
}

// html is the chart's figure in report.html, its id prefixed (a part's charts
// in a whole run's page): lines as a uPlot chart drawn from the JSON block by
// charts.js, a funnel as inline SVG (bars need no zoom; each bar's title shows
// its value on hover).
func (c chartSpec) html(prefix string) template.HTML {
	id := template.HTMLEscapeString(prefix + c.id)
	title := template.HTMLEscapeString(c.title)
	if c.isFunnel {
		return template.HTML(`<figure class="chart" id="` + id + `" data-kind="bars" data-drawn="` + strconv.Itoa(c.barsDrawn()) + `"><figcaption>` + title + `</figcaption>` + string(c.svg(false)) + `</figure>`)
	}
	js, err := json.Marshal(c.data())
	if err != nil { // only plain values: cannot happen
		return template.HTML(`<p>chart ` + id + ` could not be drawn: ` + template.HTMLEscapeString(err.Error()) + `</p>`)
	}
	var b strings.Builder
	b.WriteString(`<figure class="chart" id="` + id + `" data-kind="lines"><figcaption>` + title + `</figcaption><div class="plot"></div>`)
	if placed := c.placeMarks(); len(placed) > 0 || c.note != "" {
		b.WriteString(`<ul class="marks">`)
		for _, m := range placed {
			cls := "threshold"
			if m.limit {
				cls = "limit"
			}
			if m.off {
				cls += " off"
			}
			b.WriteString(`<li class="` + cls + `">` + template.HTMLEscapeString(m.note(c.unitOf(m))) + `</li>`)
		}
		if c.note != "" {
			b.WriteString(`<li class="note">` + template.HTMLEscapeString(c.note) + `</li>`)
		}
		b.WriteString(`</ul>`)
	}
	// json.Marshal escapes <, > and &: the block cannot end the script early.
	b.WriteString(`<script type="application/json">` + string(js) + `</script><noscript>This chart needs JavaScript; the SVG files beside report.md show the same.</noscript></figure>`)
	return template.HTML(b.String())
}

// unitOf is the unit of the axis a mark lies across.
func (c chartSpec) unitOf(m placedMark) string {
	if m.vertical {
		return c.xunit
	}
	return c.yunit
}
