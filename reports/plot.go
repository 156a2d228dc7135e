package reports

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The charts of report.html are drawn by gonum/plot into SVG (vgsvg), then
// inlined: no image request, no script, nothing the page's
// Content-Security-Policy would block. Text is measured with gonum's embedded
// Liberation Sans and shown in the reader's sans-serif when it is absent.

// Chart size in points; the page scales the SVG to its width (viewBox).
const chartW, chartH = 7.2 * vg.Inch, 2.7 * vg.Inch

var palette = []string{"#2b6cb0", "#c53030", "#2f855a", "#b7791f", "#6b46c1", "#2c7a7b", "#97266d", "#4a5568"}

// limitColor draws the limit line (dashed).
var limitColor = color.RGBA{0xc5, 0x30, 0x30, 0xff}

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// line is one series of a chart.
type line struct {
	name string
	pts  [][2]float64
}

func rgb(hex string) color.RGBA {
	var r, g, b uint8
	fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b)
	return color.RGBA{r, g, b, 0xff}
}

// newPlot is a plot with the report's fonts and a y axis from zero.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 11)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, 9)
		a.Tick.Label.Font = font.From(sans, 8)
	}
	p.Y.Min = 0
	return p
}

// newLegend is drawn beside the plot, not over the data.
func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = font.From(sans, 8)
	l.Top, l.Left = true, true
	l.XOffs = vg.Points(6)
	return l
}

// ticker labels gonum's default ticks with format.
func ticker(format func(float64) string) plot.Ticker {
	return plot.TickerFunc(func(min, max float64) []plot.Tick {
		ts := plot.DefaultTicks{}.Ticks(min, max)
		for i := range ts {
			if ts[i].Label != "" {
				ts[i].Label = format(ts[i].Value)
			}
		}
		return ts
	})
}

// chartMark is a straight line across a chart: a limit or a threshold's bound,
// horizontal at y = at, or vertical at x = at when vertical.
type chartMark struct {
	at       float64
	label    string
	vertical bool
	limit    bool // the scenario's limit (red, long dashes); otherwise a threshold (dark, dash-dot)
}

// thresholdColor draws a threshold's bound.
var thresholdColor = color.RGBA{0x1a, 0x20, 0x2c, 0xff}

// seriesStyle gives p50, p95 and p99 a colour and a dash of their own (so they
// stay apart in grey print and where they overlap); other series a palette
// colour, solid.
func seriesStyle(i int, name string) (color.RGBA, []vg.Length, vg.Length) {
	switch name {
	case "p50":
		return rgb(palette[0]), nil, vg.Points(1.6)
	case "p95":
		return rgb(palette[3]), []vg.Length{vg.Points(6), vg.Points(3)}, vg.Points(1.6)
	case "p99":
		return rgb(palette[1]), []vg.Length{vg.Points(2), vg.Points(2)}, vg.Points(1.6)
	}
	return rgb(palette[i%len(palette)]), nil, vg.Points(1.4)
}

// svgLines draws series as lines on shared axes, and marks across them.
// A shares chart (ylabel "share …") keeps its y axis at 0..100%.
func svgLines(id, title, xlabel, ylabel string, lines []line, marks []chartMark, yfmt func(float64) string) template.HTML {
	p, lg := newPlot(title, xlabel, ylabel), newLegend()
	p.Y.Tick.Marker = ticker(yfmt)
	p.X.Tick.Marker = ticker(twoDecimals)
	xmax, ymax, drawn := 0.0, 0.0, 0
	for i, l := range lines {
		xy := make(plotter.XYs, 0, len(l.pts))
		for _, pt := range l.pts {
			if !math.IsNaN(pt[0]) && !math.IsNaN(pt[1]) && !math.IsInf(pt[0], 0) && !math.IsInf(pt[1], 0) {
				xy = append(xy, plotter.XY{X: pt[0], Y: pt[1]})
				xmax, ymax = max(xmax, pt[0]), max(ymax, pt[1])
			}
		}
		if len(xy) == 0 {
			continue
		}
		pl, err := plotter.NewLine(xy)
		if err != nil {
			continue
		}
		pl.Color, pl.Dashes, pl.Width = seriesStyle(i, l.name)
		p.Add(pl)
		lg.Add(l.name, pl)
		drawn++
	}
	share := strings.HasPrefix(ylabel, "share")
	for _, m := range marks {
		if !(m.at > 0) || math.IsInf(m.at, 0) {
			continue
		}
		var pts plotter.XYs
		if m.vertical {
			top := 1.0
			if !share {
				top = max(ymax, 1)
			}
			pts = plotter.XYs{{X: m.at, Y: 0}, {X: m.at, Y: top}}
			xmax = max(xmax, m.at)
			p.X.Max = max(p.X.Max, m.at*1.05)
		} else {
			pts = plotter.XYs{{X: 0, Y: m.at}, {X: max(xmax, 1), Y: m.at}}
			p.Y.Max = max(p.Y.Max, m.at*1.1)
		}
		ml, err := plotter.NewLine(pts)
		if err != nil {
			continue
		}
		if m.limit {
			ml.Color, ml.Width, ml.Dashes = limitColor, vg.Points(1.2), []vg.Length{vg.Points(5), vg.Points(3)}
		} else {
			ml.Color, ml.Width, ml.Dashes = thresholdColor, vg.Points(1.2), []vg.Length{vg.Points(7), vg.Points(2), vg.Points(1.5), vg.Points(2)}
		}
		p.Add(ml)
		lg.Add(m.label, ml)
	}
	if share {
		p.Y.Min, p.Y.Max = 0, 1
	}
	if drawn == 0 {
		p.Title.Text = title + " — no data in this run"
		p.X.Min, p.X.Max, p.Y.Max = 0, 1, math.Max(p.Y.Max, 1)
	}
	return render(id, title, p, &lg, chartH)
}

// svgBars draws a horizontal funnel: one pair of bars (reached, final state
// here) per stage, first stage on top.
func svgBars(id, title string, stages []funnelStage) template.HTML {
	p, lg := newPlot(title, "messages", ""), newLegend()
	p.X.Tick.Marker = ticker(func(v float64) string { return num(math.Round(v)) })
	n := len(stages)
	if n == 0 {
		p.Title.Text = title + " — no delivery events in this run"
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		return render(id, title, p, &lg, chartH/2)
	}
	reached, final := make(plotter.Values, n), make(plotter.Values, n)
	names := make([]string, n)
	for i, s := range stages {
		j := n - 1 - i // the first stage at the top
		reached[j], final[j], names[j] = float64(s.Reached), float64(s.Terminal), s.Channel
	}
	w := vg.Points(9)
	for _, v := range []struct {
		vals  plotter.Values
		name  string
		color string
		off   vg.Length
	}{{reached, "reached", palette[0], w / 2}, {final, "final state here", palette[2], -w / 2}} {
		b, err := plotter.NewBarChart(v.vals, w)
		if err != nil {
			continue
		}
		b.Horizontal, b.Offset = true, v.off
		b.Color, b.LineStyle.Width = rgb(v.color), 0
		p.Add(b)
		lg.Add(v.name, b)
	}
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4 // room above and below the outer bars
	p.X.Min = 0
	h := vg.Length(n)*vg.Points(32) + vg.Points(70)
	return render(id, title, p, &lg, h)
}

// legendW is the strip right of the plot that holds the legend.
const legendW = 1.8 * vg.Inch

// render draws p at the chart width and height h, its legend in a strip on
// the right, and returns the SVG with the page's id, class, role and title.
func render(id, title string, p *plot.Plot, lg *plot.Legend, h vg.Length) template.HTML {
	c := vgsvg.New(chartW, h)
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, -legendW, 0, 0))
	lg.Draw(draw.Crop(dc, chartW-legendW, 0, 0, -vg.Points(22)))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return template.HTML(fmt.Sprintf(`<p>chart %s could not be drawn: %s</p>`, template.HTMLEscapeString(id), template.HTMLEscapeString(err.Error())))
	}
	s := b.String()
	if _, body, ok := strings.Cut(s, "<svg "); ok {
		s = body // without the XML header and the svg element's own start
	}
	// gonum writes a font family only; add generic fallbacks for readers without Liberation.
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", `font-family:'Liberation Sans',Arial,sans-serif;`)
	return template.HTML(fmt.Sprintf(`<svg id="%s" class="chart" role="img" %s`, id, strings.Replace(s, ">",
		">"+"<title>"+template.HTMLEscapeString(title)+"</title>", 1)))
}
