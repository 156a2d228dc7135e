package render

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// figureData is the JSON block of each uPlot chart of a report.html, by id.
func figureData(t *testing.T, page string) map[string]plotData {
	t.Helper()
	re := regexp.MustCompile(`<figure class="chart" id="([^"]+)" data-kind="lines">.*?<script type="application/json">(.*?)</script>`)
	out := map[string]plotData{}
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		var d plotData
		if err := json.Unmarshal([]byte(m[2]), &d); err != nil {
			t.Fatalf("%s: chart data is not JSON: %v", m[1], err)
		}
		out[m[1]] = d
	}
	return out
}

// TestChartsInlineInHTML: report.html carries uPlot and the chart data inline
// — no script, style or image fetched from anywhere — and its
// Content-Security-Policy lets exactly its own inline scripts run.
func TestChartsInlineInHTML(t *testing.T) {
	r := fullRun()
	r.sortEvents()
	_, f := build(t, r)
	page := f[rundir.HTMLFile]
	if strings.Count(page, uplotJS) != 1 || !strings.Contains(page, "uPlot (v1.6.32)") {
		t.Errorf("report.html does not carry uPlot inline once")
	}
	for _, bad := range []string{"<script src", "<link", " src=", `href="http`, "href='http", "@import", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("report.html fetches something: %q", bad)
		}
	}
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]+)">`).FindStringSubmatch(page)
	if csp == nil || !strings.Contains(csp[1], "default-src 'none'") {
		t.Fatalf("no Content-Security-Policy forbidding requests: %v", csp)
	}
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if len(scripts) != 2 {
		t.Errorf("%d inline scripts, want uPlot and charts.js", len(scripts))
	}
	for _, s := range scripts {
		if !strings.Contains(csp[1], scriptHash(s[1])) {
			t.Errorf("the policy does not allow the inline script of %d bytes", len(s[1]))
		}
	}
	data := figureData(t, page)
	want := map[string][]string{
		"chart-rate": {"2xx", "429"}, "chart-latency": {"p50", "p95", "p99"}, "chart-window": {"c1", "c2"},
		"chart-delivery": {"sms", "viber"}, "chart-events": {"callback", "incoming", "malformed"},
	}
	for id, names := range want {
		d, ok := data[id]
		if !ok {
			t.Errorf("no data block for %s (have %v)", id, slices.Sorted(mapsKeys(data)))
			continue
		}
		var got []string
		for _, s := range d.Series {
			got = append(got, s.Name)
			if len(s.Y) != len(d.X) {
				t.Errorf("%s %s: %d values over %d x", id, s.Name, len(s.Y), len(d.X))
			}
		}
		if strings.Join(got, " ") != strings.Join(names, " ") || len(d.X) == 0 {
			t.Errorf("%s: series %v over %d x, want %v", id, got, len(d.X), names)
		}
	}
	if !strings.Contains(page, `id="chart-funnel" data-kind="bars"`) || !strings.Contains(page, "<title>viber: 57 reached</title>") {
		t.Errorf("no funnel with its bars' values")
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// wellFormedSVG reads an SVG file to its end with the XML decoder and says
// its root element.
func wellFormedSVG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Space + " " + se.Name.Local
		}
	}
	if root != "http://www.w3.org/2000/svg svg" {
		t.Errorf("%s: root element %q, want an SVG", path, root)
	}
}

var mdImage = regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`)

// TestChartFilesBesideMarkdown: report.md links an SVG file per chart that
// applies, written beside it, each well-formed SVG; a chart file of an earlier
// build that no longer applies is removed; a whole run's report.md links the
// parts' files in their directories.
func TestChartFilesBesideMarkdown(t *testing.T) {
	r := fullRun()
	r.sortEvents()
	dir := r.write(t)
	stale := filepath.Join(dir, "chart-gone.svg")
	if err := os.WriteFile(stale, []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, f := buildDir(t, dir)
	var linked []string
	for _, m := range mdImage.FindAllStringSubmatch(f[rundir.MarkdownFile], -1) {
		linked = append(linked, m[1])
		wellFormedSVG(t, filepath.Join(dir, m[1]))
	}
	var want []string
	for _, c := range (view{s}).chartSpecs() {
		want = append(want, rundir.ChartFile(c.id))
	}
	if len(want) != 6 || strings.Join(linked, " ") != strings.Join(want, " ") {
		t.Errorf("report.md links %v, want the %d charts %v", linked, len(want), want)
	}
	onDisk, _ := filepath.Glob(filepath.Join(dir, rundir.ChartGlob))
	if len(onDisk) != len(want) {
		t.Errorf("chart files %v, want %v (the stale one removed)", onDisk, want)
	}

	// A whole run: its report.md reaches each part's charts in the part's directory.
	whole := t.TempDir()
	pdir := filepath.Join(whole, "fails")
	if err := os.Rename(dir, pdir); err != nil {
		t.Fatal(err)
	}
	ps, err := Build(pdir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BuildRun(whole, []reports.PartInput{{Name: "fails", Dir: pdir, Summary: ps}}, false); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(whole, rundir.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	links := mdImage.FindAllStringSubmatch(string(md), -1)
	if len(links) != len(want) {
		t.Errorf("the whole report.md links %d charts, want %d", len(links), len(want))
	}
	for _, m := range links {
		if !strings.HasPrefix(m[1], "fails/") {
			t.Errorf("whole report.md links %s, not in the part's directory", m[1])
		}
		wellFormedSVG(t, filepath.Join(whole, m[1]))
	}
	page, err := os.ReadFile(filepath.Join(whole, rundir.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := figureData(t, string(page))["fails-chart-latency"]; !ok || len(d.Series) != 3 || !strings.Contains(string(page), uplotJS) {
		t.Errorf("the whole report.html has no uPlot or no data for the part's latency chart")
	}
	if ms, _ := filepath.Glob(filepath.Join(whole, rundir.ChartGlob)); len(ms) != 0 {
		t.Errorf("chart files written beside the whole report: %v", ms)
	}
}

// fastRun answers every request in about a millisecond, under the one
// latency threshold given.
func fastRun(threshold string) *run {
	r := newRun(rundir.APINotify)
	r.meta.Thresholds = []string{threshold}
	r.meta.Delivery.Via = "none"
	for i := int64(1); i <= 40; i++ {
		r.send(i, "c1", float64(i)/4, 200, 0.0008+0.00001*float64(i%7))
	}
	return r
}

// yTop is the largest y tick of an SVG chart.
func yTop(t *testing.T, svg string) time.Duration {
	t.Helper()
	var top time.Duration
	for _, m := range regexp.MustCompile(`class="ytick"[^>]*>([^<]+)<`).FindAllStringSubmatch(svg, -1) {
		v := strings.ReplaceAll(m[1], "µ", "u")
		if v == "0" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("y tick %q: %v", m[1], err)
		}
		top = max(top, d)
	}
	return top
}

// TestThresholdFarAboveDataIsAnArrow: a 200 ms bound over ~1 ms latencies
// does not stretch the axis (the data would lie flat on it): it is an arrow
// with a label saying where the data end, in the SVG and in report.html's
// chart; a bound within reach (2 ms) is drawn to scale.
func TestThresholdFarAboveDataIsAnArrow(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		off    bool
		within func(time.Duration) bool
	}{
		{"requests.latency.p95 < 200ms", true, func(top time.Duration) bool { return top <= 2*time.Millisecond }},
		{"requests.latency.p95 < 2ms", false, func(top time.Duration) bool { return top >= 2*time.Millisecond && top < 5*time.Millisecond }},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			dir := fastRun(tc.expr).write(t)
			_, f := buildDir(t, dir)
			b, err := os.ReadFile(filepath.Join(dir, rundir.ChartFile("chart-latency")))
			if err != nil {
				t.Fatal(err)
			}
			svg := string(b)
			if top := yTop(t, svg); !tc.within(top) {
				t.Errorf("the latency axis reaches %v", top)
			}
			arrow := strings.Contains(svg, "↑ threshold p95 &lt; ") && strings.Contains(svg, "above this chart: the data reach 8")
			line := strings.Contains(svg, `<line class="threshold"`)
			if arrow != tc.off || line == tc.off {
				t.Errorf("arrow %v, line %v; want off the chart %v", arrow, line, tc.off)
			}
			d := figureData(t, f[rundir.HTMLFile])["chart-latency"]
			if len(d.Marks) != 1 || d.Marks[0].Off != tc.off || (d.YTop > 0) == tc.off {
				t.Errorf("report.html's mark %+v, y top %v; want off the chart %v", d.Marks, d.YTop, tc.off)
			}
		})
	}
}

// TestLatencyChartSaysWhatAGapMeans: when some point of the request latency
// chart is not drawn because its rank fell among requests with no answer
// (their latency unknown), the chart says what a gap means — under its
// legend in the SVG file, in its list in report.html, under its link in
// report.md; a run whose every request was answered has no such line.
func TestLatencyChartSaysWhatAGapMeans(t *testing.T) {
	const note = "A gap means no requests, or a percentile among requests with no answer, whose latency is unknown (6 points)."
	for _, tc := range []struct {
		name string
		r    *run
		want bool
	}{{"timeouts", opsRun(), true}, {"answered", passingRun(), false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.r.write(t)
			s, f := buildDir(t, dir)
			if c := s.Charts(); c == nil || (c.LatCensored > 0) != tc.want {
				t.Fatalf("charts %+v: want censored points %v", c, tc.want)
			}
			b, err := os.ReadFile(filepath.Join(dir, rundir.ChartFile("chart-latency")))
			if err != nil {
				t.Fatal(err)
			}
			if err := xml.Unmarshal(b, new(struct{})); err != nil {
				t.Fatalf("the SVG does not parse: %v", err)
			}
			for name, text := range map[string]string{"chart-latency.svg": string(b), rundir.HTMLFile: f[rundir.HTMLFile], rundir.MarkdownFile: f[rundir.MarkdownFile]} {
				if got := strings.Contains(text, note); got != tc.want {
					t.Errorf("%s says what a gap means: %v, want %v", name, got, tc.want)
				}
			}
		})
	}
}

// A point with a gap on each side (the latency chart's second between two
// whose p95 fell among requests with no answer) is drawn as a dot: as a path
// it would be one move, which draws nothing. Points with a neighbour stay
// on their line, and a gap still breaks it.
func TestLonePointIsDrawn(t *testing.T) {
	nan := math.NaN()
	c := chartSpec{id: "chart-latency", lines: []line{{name: "p95", pts: [][2]float64{
		{0, 1}, {1, 2}, {2, nan}, {3, 4}, {4, nan}, {5, 6}, {6, 7}, {7, nan}, {8, 9},
	}}}}
	f := frame{xmin: 0, xmax: 8, ytop: 10}
	var b strings.Builder
	c.svgSeries(&b, f)
	svg := b.String()
	if err := xml.Unmarshal([]byte("<g>"+svg+"</g>"), new(struct{})); err != nil {
		t.Fatalf("not XML: %v\n%s", err, svg)
	}
	if n := strings.Count(svg, "<circle "); n != 2 {
		t.Errorf("%d dots, want the 2 lone points (x 3 and 8):\n%s", n, svg)
	}
	for _, x := range []float64{3, 8} {
		if !strings.Contains(svg, fmt.Sprintf(`cx="%.1f"`, f.sx(x))) {
			t.Errorf("no dot at x %v:\n%s", x, svg)
		}
	}
	if m := strings.Count(svg, "M"); m != 2 {
		t.Errorf("%d moves in the path, want 2 (the two runs of points):\n%s", m, svg)
	}
}
