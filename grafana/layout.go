package grafana

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Layout picture geometry: Grafana's grid is 24 columns wide; one grid row is
// 30 px high in Grafana, drawn the same here.
const (
	colW    = 40
	rowH    = 30
	margin  = 10
	headerH = 40
)

// layoutSVG draws the dashboard's layout: every panel at its grid position with
// its title, type and the metrics it reads, rows as bands. It is how the README
// shows a dashboard without running Grafana.
func layoutSVG(d *dashboard) []byte {
	panels := d.AllPanels()
	vars := d.SampleVariables()
	bottom := 0
	for _, p := range panels {
		bottom = max(bottom, p.GridPos.Y+p.GridPos.H)
	}
	w := 24*colW + 2*margin
	h := headerH + bottom*rowH + 2*margin
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#111217"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#ccccdc" font-size="18">%s</text>`+"\n", margin, 26, esc(d.Title+"  ("+d.UID+")"))
	names := d.VariableNames()
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#8e8e9e" font-size="11" text-anchor="end">%s</text>`+"\n", w-margin, 26, esc("variables: "+strings.Join(names, ", ")))
	for _, p := range panels {
		g := p.GridPos
		x := margin + g.X*colW
		y := headerH + margin + g.Y*rowH
		pw, ph := g.W*colW-4, g.H*rowH-4
		if p.Type == "row" {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="#22252b"/>`+"\n", x, y, 24*colW-4, rowH-4)
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#ccccdc" font-size="13" font-weight="bold">%s</text>`+"\n", x+8, y+18, esc("▾ "+p.Title))
			continue
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" rx="3" fill="#181b1f" stroke="#2f3238"/>`+"\n", x, y, pw, ph)
		title := p.Title
		if p.Repeat != "" {
			title += " (one per $" + p.Repeat + ")"
		}
		maxChars := pw / 7
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#ccccdc" font-size="12" font-weight="bold">%s</text>`+"\n", x+6, y+16, esc(clip(title, maxChars)))
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#6e9fff" font-size="10">%s</text>`+"\n", x+6, y+30, esc(p.Type))
		line := 0
		for _, m := range panelMetrics(p, vars) {
			ty := y + 46 + line*13
			if ty > y+ph-6 {
				break
			}
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#8e8e9e" font-size="10">%s</text>`+"\n", x+6, ty, esc(clip(m, maxChars+8)))
			line++
		}
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// panelMetrics lists the metric families a panel reads (histogram suffixes
// dropped), sorted.
func panelMetrics(p panel, vars map[string]string) []string {
	seen := map[string]bool{}
	for _, t := range p.Targets {
		names, err := metricNames(expand(t.Expr, vars, 5*time.Second, 10*time.Minute))
		if err != nil {
			continue // the dashboard test reports it; the picture shows what parses
		}
		for _, n := range names {
			for _, s := range []string{"_bucket", "_count", "_sum"} {
				n = strings.TrimSuffix(n, s)
			}
			seen[n] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func clip(s string, n int) string {
	r := []rune(s)
	if n < 2 || len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
