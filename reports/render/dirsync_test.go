package render

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// TestWriteFilesSyncsTheDirectoryOnce: the report's files (summary.json,
// report.html, report.md, junit.xml, the charts) are each written whole, and
// their renames made durable by one directory sync, not one a file (each an
// fsync of the run directory at the end of every run).
func TestWriteFilesSyncsTheDirectoryOnce(t *testing.T) {
	r := deliveryRun()
	r.meta.Target = "http://127.0.0.1:8080" // no truth.json to require
	dir := r.write(t)
	s, err := reports.Conclude(dir)
	if err != nil {
		t.Fatal(err)
	}
	before := rundir.DirSyncs()
	if err := WriteFiles(dir, s); err != nil {
		t.Fatal(err)
	}
	if n := rundir.DirSyncs() - before; n != 1 {
		t.Errorf("WriteFiles synced the run directory %d times, want once", n)
	}
	charts, _ := filepath.Glob(filepath.Join(dir, rundir.ChartGlob))
	if len(charts) == 0 {
		t.Error("no chart file written")
	}
	for _, f := range append(charts, filepath.Join(dir, rundir.SummaryFile), filepath.Join(dir, rundir.HTMLFile),
		filepath.Join(dir, rundir.MarkdownFile), filepath.Join(dir, rundir.JUnitFile)) {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 || fi.Mode().Perm() != rundir.FileMode {
			t.Errorf("%s: %v %v", filepath.Base(f), fi, err)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".*")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}
