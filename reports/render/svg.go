package render

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// The SVG charts: report.md's chart files (rundir.ChartFile), and the funnel
// inside report.html. Plain SVG 1.1 with the text in the reader's sans-serif:
// no fonts to carry, nothing measured, so labels are kept short and the
// legend wraps by an estimate of 7 px a character.

// SVG geometry, in px of the viewBox.
const (
	svgW       = 720.0
	svgH       = 300.0
	svgLeft    = 66.0 // room for the y tick labels
	svgRight   = 18.0
	svgTop     = 34.0 // the title
	svgBottom  = 44.0 // x tick labels and the x axis label
	svgLegendH = 18.0 // one row of legend
)

// esc escapes text for an SVG (XML) text node or attribute.
func esc(s string) string { return template.HTMLEscapeString(s) }

// niceTicks are about n round values (1, 2 or 5 × 10^k apart) from lo to hi.
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// legendEntry is one entry of an SVG chart's legend: a sample of its stroke
// and its name.
type legendEntry struct {
	name, color string
	dash        string // stroke-dasharray, "" solid
	width       float64
}

// legendRows lays the entries out in rows across the width.
func legendRows(entries []legendEntry) [][]legendEntry {
	var rows [][]legendEntry
	var row []legendEntry
	x := svgLeft
	for _, e := range entries {
		w := legendEntryW(e.name)
		if len(row) > 0 && x+w > svgW-svgRight {
			rows, row, x = append(rows, row), nil, svgLeft
		}
		row = append(row, e)
		x += w
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// legendEntryW is an entry's width: the sample, the name at about 7 px a
// character, and a gap.
func legendEntryW(name string) float64 { return 46 + 7*float64(len([]rune(name))) }

// writeLegend draws the rows of entries from y = top down.
func writeLegend(b *strings.Builder, rows [][]legendEntry, top float64) {
	for i, row := range rows {
		y := top + float64(i)*svgLegendH
		x := svgLeft
		for _, e := range row {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>`, x, y, x+22, y, e.color, e.width, dashAttr(e.dash))
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="12">%s</text>`, x+27, y+4, esc(e.name))
			x += legendEntryW(e.name)
		}
	}
}

func dashAttr(d string) string {
	if d == "" {
		return ""
	}
	return ` stroke-dasharray="` + d + `"`
}

func dashString(d []float64) string {
	var parts []string
	for _, v := range d {
		parts = append(parts, num(v))
	}
	return strings.Join(parts, " ")
}

// tick is an axis label: the unit's figure without trailing zeros (40ms, 2.5s).
func tick(unit string, v float64) string {
	t := show(unit, v)
	if unit != unitSeconds || !strings.Contains(t, ".") {
		return t
	}
	i := strings.IndexFunc(t, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
	if i < 0 {
		return t
	}
	n := strings.TrimRight(strings.TrimRight(t[:i], "0"), ".")
	return n + t[i:]
}

// svg draws the chart as an SVG document; as a file of its own (file) with
// the XML declaration first and its title drawn at the top, inline in
// report.html without (the figure's caption says it).
func (c chartSpec) svg(file bool) []byte {
	var body string
	if c.isFunnel {
		body = c.svgBars(file)
	} else {
		body = c.svgLines()
	}
	if file {
		return []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + body + "\n")
	}
	return []byte(body)
}

// svgOpen starts the document: size, title (the accessible name), and, when
// shown, the chart's title at the top.
func svgOpen(b *strings.Builder, title string, h float64, shown bool) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" font-family="system-ui,-apple-system,'Segoe UI',Arial,sans-serif" fill="#1a202c">`, svgW, h, svgW, h)
	fmt.Fprintf(b, `<title>%s</title><rect width="100%%" height="100%%" fill="#fff"/>`, esc(title))
	if shown {
		fmt.Fprintf(b, `<text x="%.1f" y="20" font-size="14" font-weight="600">%s</text>`, svgLeft, esc(title))
	}
}

// frame is the plot area of a lines chart and the ranges it shows.
type frame struct {
	xmin, xmax, ytop float64
	xt, yt           []float64 // the ticks
}

// Plot area of a lines chart, in px of the viewBox.
const (
	plotL, plotR = svgLeft, svgW - svgRight
	plotT, plotB = svgTop, svgH - svgBottom
)

func (f frame) sx(v float64) float64 { return plotL + (v-f.xmin)/(f.xmax-f.xmin)*(plotR-plotL) }
func (f frame) sy(v float64) float64 { return plotB - v/f.ytop*(plotB-plotT) }

// frame is the x range of the data and of the bounds drawn to scale, and the
// y range from zero to the largest of them (a share's 0..1), each widened to
// a round tick.
func (c chartSpec) frame(placed []placedMark) frame {
	xmax, ymax, points := c.extent()
	xmin := math.Inf(1)
	for _, l := range c.lines {
		for _, p := range l.pts {
			if finite(p[0]) && finite(p[1]) {
				xmin = min(xmin, p[0])
			}
		}
	}
	if points == 0 {
		xmin, xmax = 0, 1
	}
	ytop := ymax
	for _, m := range placed {
		if !m.off && m.vertical {
			xmax = max(xmax, m.at)
		} else if !m.off {
			ytop = max(ytop, m.at)
		}
	}
	if c.yunit == unitShare || !(ytop > 0) {
		ytop = 1
	}
	if !(xmax > xmin) {
		xmax = xmin + 1
	}
	yt := niceTicks(0, ytop*1.02, 5)
	if c.yunit != unitShare && yt[len(yt)-1] < ytop {
		step := ytop / 5
		if len(yt) > 1 {
			step = yt[1] - yt[0]
		}
		yt = append(yt, yt[len(yt)-1]+step)
	}
	return frame{xmin: xmin, xmax: xmax, ytop: max(ytop, yt[len(yt)-1]), xt: niceTicks(xmin, xmax, 6), yt: yt}
}

// svgLines draws the lines on shared axes from zero (a share's y axis held
// at 0..100 %), the marks to scale or, beyond markReach, as an arrow at the
// edge with a label that says where the data end.
func (c chartSpec) svgLines() string {
	placed := c.placeMarks()
	f := c.frame(placed)
	var entries []legendEntry
	for i, l := range c.lines {
		color, dash := seriesStyle(i, l.name)
		entries = append(entries, legendEntry{l.name, color, dashString(dash), 1.8})
	}
	rows := legendRows(entries)
	var b strings.Builder
	title := c.title
	if _, _, points := c.extent(); points == 0 {
		title += " — no data in this run"
	}
	h := svgH + float64(len(rows))*svgLegendH
	if c.note != "" {
		h += svgLegendH
	}
	svgOpen(&b, title, h, true)
	c.svgAxes(&b, f)
	c.svgSeries(&b, f)
	for _, m := range placed {
		c.svgMark(&b, m, f)
	}
	writeLegend(&b, rows, svgH-4)
	if c.note != "" { // a line of its own under the legend
		fmt.Fprintf(&b, `<text class="note" x="%.1f" y="%.1f" font-size="11" fill="#4a5568">%s</text>`, svgLeft, svgH+float64(len(rows))*svgLegendH, esc(c.note))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// svgAxes draws the grid, the ticks and the axis labels.
func (c chartSpec) svgAxes(b *strings.Builder, f frame) {
	for _, v := range f.yt {
		y := f.sy(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e2e8f0"/>`, plotL, y, plotR, y)
		fmt.Fprintf(b, `<text class="ytick" x="%.1f" y="%.1f" font-size="11" text-anchor="end">%s</text>`, plotL-6, y+4, esc(tick(c.yunit, v)))
	}
	for _, v := range f.xt {
		x := f.sx(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#4a5568"/>`, x, plotB, x, plotB+4)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle">%s</text>`, x, plotB+16, esc(tick(c.xunit, v)))
	}
	fmt.Fprintf(b, `<path d="M%.1f %.1fV%.1fH%.1f" fill="none" stroke="#4a5568"/>`, plotL, plotT, plotB, plotR)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle">%s</text>`, (plotL+plotR)/2, plotB+34, esc(c.xlabel))
	fmt.Fprintf(b, `<text transform="translate(14 %.1f) rotate(-90)" font-size="12" text-anchor="middle">%s</text>`, (plotT+plotB)/2, esc(c.ylabel))
}

// svgSeries draws each line as a path; a NaN y breaks it (no data is a gap).
// A point with a gap on each side would be a path of one move, which draws
// nothing: it is drawn as a dot of the line's colour.
func (c chartSpec) svgSeries(b *strings.Builder, f frame) {
	for i, l := range c.lines {
		var d strings.Builder
		var lone [][2]float64
		drawn := func(j int) bool { return j >= 0 && j < len(l.pts) && finite(l.pts[j][0]) && finite(l.pts[j][1]) }
		for j, p := range l.pts {
			if !drawn(j) {
				continue
			}
			x, y := f.sx(p[0]), f.sy(p[1])
			if !drawn(j-1) && !drawn(j+1) {
				lone = append(lone, [2]float64{x, y})
				continue
			}
			cmd := "L"
			if !drawn(j - 1) {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", cmd, x, y)
		}
		color, dash := seriesStyle(i, l.name)
		if d.Len() > 0 {
			fmt.Fprintf(b, `<path class="series" d="%s" fill="none" stroke="%s" stroke-width="1.8" stroke-linejoin="round"%s><title>%s</title></path>`, d.String(), color, dashAttr(dashString(dash)), esc(l.name))
		}
		for _, p := range lone {
			fmt.Fprintf(b, `<circle class="series lone" cx="%.1f" cy="%.1f" r="2" fill="%s"><title>%s</title></circle>`, p[0], p[1], color, esc(l.name))
		}
	}
}

// svgMark draws one limit or threshold: a dashed line with its label, or
// beyond markReach an arrow at the edge and a label naming where the data end.
func (c chartSpec) svgMark(b *strings.Builder, m placedMark, f frame) {
	color, dash := thresholdColor, "7 2 1.5 2"
	class := "threshold"
	if m.limit {
		color, dash, class = limitColor, "5 3", "limit"
	}
	switch {
	case m.off:
		arrow := "↑ "
		if m.vertical {
			arrow = "→ "
		}
		fmt.Fprintf(b, `<text class="%s off" x="%.1f" y="%.1f" font-size="11" fill="%s" text-anchor="end">%s</text>`, class, plotR-4, plotT+12, color, esc(arrow+m.note(c.unitOf(m))))
	case m.vertical:
		x := f.sx(m.at)
		fmt.Fprintf(b, `<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.4" stroke-dasharray="%s"/>`, class, x, plotT, x, plotB, color, dash)
		anchor, dx := "start", 4.0
		if x > (plotL+plotR)/2 {
			anchor, dx = "end", -4
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" fill="%s" text-anchor="%s">%s</text>`, x+dx, plotT+12, color, anchor, esc(m.label))
	default:
		y := f.sy(m.at)
		fmt.Fprintf(b, `<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.4" stroke-dasharray="%s"/>`, class, plotL, y, plotR, y, color, dash)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" fill="%s" text-anchor="end">%s</text>`, plotR-4, y-4, color, esc(m.label))
	}
}

// barsDrawn counts the funnel's bars with something on them.
func (c chartSpec) barsDrawn() int {
	n := 0
	for _, s := range c.funnel {
		if s.Reached > 0 {
			n++
		}
		if s.Terminal > 0 {
			n++
		}
	}
	return n
}

// svgBars draws the failover funnel: per stage, first on top, a bar of the
// messages that reached the channel (blue) and one of those whose final state
// came on it (green); each bar's title gives its count on hover.
func (c chartSpec) svgBars(titled bool) string {
	const stageH, barH, nameW = 34.0, 11.0, 110.0
	n := len(c.funnel)
	var top int64
	for _, s := range c.funnel {
		top = max(top, s.Reached, s.Terminal)
	}
	ticks := niceTicks(0, float64(max(top, 1)), 5)
	xtop := max(float64(top), ticks[len(ticks)-1], 1)
	pl, pr, pt := nameW+10, svgW-svgRight-40, 8.0
	if titled {
		pt = svgTop + 4
	}
	pb := pt + float64(max(n, 1))*stageH
	h := pb + 40 + svgLegendH
	sx := func(v float64) float64 { return pl + v/xtop*(pr-pl) }
	var b strings.Builder
	title := c.title
	if n == 0 {
		title += " — no delivery events in this run"
	}
	svgOpen(&b, title, h, titled)
	for _, v := range ticks {
		x := sx(v)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e2e8f0"/>`, x, pt, x, pb)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle">%s</text>`, x, pb+16, esc(num(math.Round(v))))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle">messages</text>`, (pl+pr)/2, pb+32)
	bar := func(y float64, v int64, color, what, channel string) {
		w := sx(float64(v)) - pl
		fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %d %s</title></rect>`, pl, y, w, barH, color, esc(channel), v, esc(what))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11">%d</text>`, pl+w+4, y+barH-1.5, v)
	}
	for i, s := range c.funnel {
		y := pt + float64(i)*stageH + 5
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="end">%s</text>`, pl-8, y+barH+3, esc(s.Channel))
		bar(y, s.Reached, palette[0], "reached", s.Channel)
		bar(y+barH+1, s.Terminal, palette[2], "final state here", s.Channel)
	}
	fmt.Fprintf(&b, `<path d="M%.1f %.1fV%.1fH%.1f" fill="none" stroke="#4a5568"/>`, pl, pt, pb, pr)
	writeLegend(&b, legendRows([]legendEntry{{"reached", palette[0], "", 8}, {"final state here", palette[2], "", 8}}), h-10)
	b.WriteString(`</svg>`)
	return b.String()
}
