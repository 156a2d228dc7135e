package grafana

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/dashboards/*.svg from the dashboards")

// docsDir is where the README's layout pictures live, from this package.
var docsDir = filepath.Join("..", "docs", "dashboards")

// wellFormed reads an SVG to its end with the XML decoder.
func wellFormed(b []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestLayoutPictures keeps docs/dashboards/<uid>.svg equal to what layoutSVG
// draws from the shipped JSON (go test ./grafana -run TestLayoutPictures
// -update rewrites them), and checks each picture is well-formed XML naming
// every panel.
func TestLayoutPictures(t *testing.T) {
	ds, err := loadDashboards(Files)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		got := layoutSVG(d)
		if err := wellFormed(got); err != nil {
			t.Errorf("%s: picture is not well-formed XML: %v", d.UID, err)
		}
		for _, p := range d.AllPanels() {
			if !strings.Contains(string(got), esc(clip(p.Title, 12))[:4]) {
				t.Errorf("%s: picture does not show panel %q", d.UID, p.Title)
			}
		}
		path := filepath.Join(docsDir, d.UID+".svg")
		if *update {
			if err := os.MkdirAll(docsDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (run: go test ./grafana -run TestLayoutPictures -update)", d.UID, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: the dashboard changed; run go test ./grafana -run TestLayoutPictures -update", path)
		}
	}
}

// TestLayoutSVGPlacesPanels checks geometry on a small dashboard: a full-width
// row band, then a half-width panel at x=12 drawn at 12 columns from the left.
func TestLayoutSVGPlacesPanels(t *testing.T) {
	d, err := parseDashboard([]byte(`{"uid":"msgload-x","title":"X <&>","panels":[
		{"type":"row","title":"R","gridPos":{"x":0,"y":0,"w":24,"h":1}},
		{"type":"timeseries","title":"P","gridPos":{"x":12,"y":1,"w":12,"h":8},
		 "targets":[{"expr":"rate(a_total[1m])"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	svg := string(layoutSVG(d))
	if err := wellFormed([]byte(svg)); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, svg)
	}
	for _, want := range []string{
		`<rect x="490" y="80" width="476" height="236"`, // x = 10 + 12×40, y = 40 + 10 + 1×30
		`X &lt;&amp;&gt;`, // the title is escaped
		`a_total`,         // the metric the panel reads
		`height="330"`,    // 40 header + 9 grid rows × 30 + 2 × 10 margin
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("picture lacks %q:\n%s", want, svg)
		}
	}
}

// FuzzParseDashboard feeds arbitrary bytes to the dashboard reader: it must
// not panic, and what it accepts must list its queries and draw a
// well-formed picture.
func FuzzParseDashboard(f *testing.F) {
	f.Add([]byte(`{"id":null,"uid":"msgload-a","panels":[{"type":"stat","gridPos":{"x":0,"y":0,"w":6,"h":4},"targets":[{"expr":"sum(x_total)","refId":"A"}]}]}`))
	f.Add([]byte(`{"panels":[{"type":"row","panels":[{"title":"\u0000<","gridPos":{"w":-3,"h":2}}]}],"templating":{"list":[{"name":"v","type":"query","query":{"query":"label_values(m, l)"}}]}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseDashboard(b)
		if err != nil {
			return
		}
		_ = d.Queries()
		if len(b) > 1<<16 {
			return // keep pictures of huge inputs out of the fuzzer's time
		}
		for _, p := range d.AllPanels() {
			if g := p.GridPos; g.Y > 1000 || g.H > 1000 || g.Y < -1000 || g.H < -1000 {
				return
			}
		}
		if err := wellFormed(layoutSVG(d)); err != nil {
			t.Fatalf("picture not well-formed: %v", err)
		}
	})
}
