package render

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// Build builds a run's reports: reports.Conclude (the analysis, the
// thresholds, the verdict and lost.jsonl), then WriteFiles. The output
// depends on the run's files alone (no wall clock, sorted maps), so a rebuild
// gives the same bytes. A threshold that does not compile is an error
// wrapping summary.ErrBadThreshold, and nothing is written.
func Build(dir string) (*reports.Summary, error) {
	s, err := reports.Conclude(dir)
	if err != nil {
		return nil, err
	}
	if err := WriteFiles(dir, s); err != nil {
		return nil, err
	}
	return s, nil
}

// WriteFiles writes summary.json, report.html, report.md and junit.xml of s
// into dir, the SVG file of each chart report.md links, and compare.json when
// the run was compared with a baseline (reports.Summary.AgainstBaseline).
func WriteFiles(dir string, s *reports.Summary) error {
	js, err := s.JSON()
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	b := rundir.NewDirBatch(dir)
	if err := (view{s}).writeChartFiles(b, dir); err != nil {
		return err
	}
	if err := s.WriteBaseline(dir); err != nil {
		return err
	}
	if err := writeReportFiles(b, js, view{s}); err != nil {
		return err
	}
	return b.Sync()
}

// writeChartFiles writes rundir.ChartFile of every chart that applies, and
// removes a chart file of an earlier build that no longer does. The renames
// are durable once b is synced.
func (s view) writeChartFiles(b *rundir.DirBatch, dir string) error {
	keep := map[string]bool{}
	for _, c := range s.chartSpecs() {
		name := rundir.ChartFile(c.id)
		keep[name] = true
		if err := b.WriteFile(name, c.svg(true)); err != nil {
			return err
		}
	}
	old, _ := filepath.Glob(filepath.Join(dir, rundir.ChartGlob))
	for _, f := range old {
		if !keep[filepath.Base(f)] {
			if err := os.Remove(f); err != nil {
				return fmt.Errorf("remove %s: %w", f, err)
			}
		}
	}
	return nil
}

// reportWriter renders the three reports of a run or of a whole run.
type reportWriter interface {
	WriteHTML(io.Writer) error
	WriteMarkdown(io.Writer) error
	WriteJUnit(io.Writer) error
}

// writeReportFiles writes summary.json (js) and the three reports r renders
// into b's directory, each file whole or not at all; the caller syncs b once
// for them all.
func writeReportFiles(b *rundir.DirBatch, js []byte, r reportWriter) error {
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{rundir.SummaryFile, func(b *bytes.Buffer) error { _, err := b.Write(js); return err }},
		{rundir.HTMLFile, func(b *bytes.Buffer) error { return r.WriteHTML(b) }},
		{rundir.MarkdownFile, func(b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
		{rundir.JUnitFile, func(b *bytes.Buffer) error { return r.WriteJUnit(b) }},
	} {
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			return fmt.Errorf("render %s: %w", f.name, err)
		}
		if err := b.WriteFile(f.name, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
