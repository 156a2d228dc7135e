package reports

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"github.com/msgload/msgload/rundir"
)

// Build reads the run directory, analyses it, evaluates the thresholds run.json
// carries and writes summary.json, report.html, report.md and junit.xml into it.
// The output depends on the run's files alone (no wall clock, sorted maps), so a
// rebuild gives the same bytes. A threshold that does not compile is an error
// wrapping errBadThreshold, and nothing is written.
func Build(dir string) (*Summary, error) {
	s, err := Analyze(dir)
	if err != nil {
		return nil, err
	}
	if err := s.Evaluate(s.thresholdExprs); err != nil {
		return nil, err
	}
	if err := s.WriteFiles(dir); err != nil {
		return nil, err
	}
	return s, nil
}

// WriteFiles writes summary.json, report.html, report.md and junit.xml into dir.
func (s *Summary) WriteFiles(dir string) error {
	js, err := s.marshal()
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	return writeReportFiles(dir, js, s)
}

// reportWriter renders the three reports of a run or of a whole run.
type reportWriter interface {
	WriteHTML(io.Writer) error
	WriteMarkdown(io.Writer) error
	WriteJUnit(io.Writer) error
}

// writeReportFiles writes summary.json (js) and the three reports r renders
// into dir, each file whole or not at all.
func writeReportFiles(dir string, js []byte, r reportWriter) error {
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{rundir.SummaryFile, func(b *bytes.Buffer) error { _, err := b.Write(js); return err }},
		{rundir.HTMLFile, func(b *bytes.Buffer) error { return r.WriteHTML(b) }},
		{rundir.MarkdownFile, func(b *bytes.Buffer) error { return r.WriteMarkdown(b) }},
		{rundir.JUnitFile, func(b *bytes.Buffer) error { return r.WriteJUnit(b) }},
	} {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			return fmt.Errorf("render %s: %w", f.name, err)
		}
		if err := rundir.WriteFile(filepath.Join(dir, f.name), b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
