package render

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// multiPartRun writes a run of two parts side by side, one passing and one
// failing a threshold, and builds the whole run's reports; it returns the
// whole run's directory.
func multiPartRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var parts []reports.PartInput
	for name, r := range map[string]*run{"notify-part": passingRun(), "latency-part": cardRun()} {
		pdir := filepath.Join(dir, name)
		if err := os.Rename(r.write(t), pdir); err != nil {
			t.Fatal(err)
		}
		s, err := Build(pdir)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, reports.PartInput{Name: name, Dir: pdir, Summary: s})
	}
	if _, err := BuildRun(dir, parts, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

var codeElem = regexp.MustCompile(`(?s)<code>(.*?)</code>`)

// TestMarkdownRendersAsCommonMark renders report.md through a CommonMark
// implementation with GitHub's tables (goldmark), as a pull request shows it:
// no `&lt;` reaches the reader, every threshold is a code span holding the
// expression as written, and every table is a table.
func TestMarkdownRendersAsCommonMark(t *testing.T) {
	full := fullRun()
	full.sortEvents()
	dirs := map[string]string{"single": full.write(t), "failed": cardRun().write(t)}
	for _, d := range []string{dirs["single"], dirs["failed"]} {
		if _, err := Build(d); err != nil {
			t.Fatal(err)
		}
	}
	dirs["multi-part"] = multiPartRun(t)
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(dir, rundir.MarkdownFile))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := md.Convert(src, &out); err != nil {
				t.Fatal(err)
			}
			page := out.String()
			for _, bad := range []string{"&amp;lt;", "&amp;gt;", "&amp;amp;"} {
				if strings.Contains(page, bad) {
					t.Errorf("the rendered report.md shows %s literally:\n%s", html.UnescapeString(bad), page)
				}
			}
			codes := map[string]bool{}
			for _, m := range codeElem.FindAllStringSubmatch(page, -1) {
				codes[html.UnescapeString(m[1])] = true
			}
			var exprs []string
			var sums []*reports.Summary
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == rundir.SummaryFile {
					if s, err := reports.ReadSummary(p); err == nil && s.Kind != reports.KindRun {
						sums = append(sums, s)
					}
				}
				return nil
			})
			for _, s := range sums {
				for _, th := range s.Thresholds {
					exprs = append(exprs, th.Expr)
				}
			}
			if len(exprs) == 0 {
				t.Fatal("no threshold to look for")
			}
			for _, e := range exprs {
				if !codes[e] {
					t.Errorf("threshold %q is not a code span of the rendered page (code spans %v)", e, codes)
				}
			}
			if rows := strings.Count(string(src), "\n|---"); strings.Count(page, "<table>") != rows {
				t.Errorf("%d tables in report.md, %d rendered as tables", rows, strings.Count(page, "<table>"))
			}
		})
	}
}
