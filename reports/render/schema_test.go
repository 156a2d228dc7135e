package render

import (
	"io/fs"
	"path/filepath"
	"testing"
)

// TestSummariesValidateAgainstSchema: every summary.json in testdata, and the
// summaries of a single run, a failed one, an incomplete one, one with errors
// and a whole run with parts, validate against summary.schema.json.
func TestSummariesValidateAgainstSchema(t *testing.T) {
	sch := compileSummarySchema(t)
	n := 0
	filepath.WalkDir(filepath.Join("..", "testdata"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "summary.json" {
			n++
			validateSummary(t, sch, p)
		}
		return nil
	})
	if n == 0 {
		t.Error("no summary.json in testdata")
	}
	interrupted := passingRun()
	interrupted.meta.Interrupted = true
	runs := map[string]*run{"full": fullRun(), "failed": cardRun(), "incomplete": interrupted, "errors": opsRun(), "notify": newRun("notify")}
	for _, r := range runs {
		dir := r.write(t)
		if _, err := Build(dir); err != nil {
			t.Fatal(err)
		}
		validateSummary(t, sch, filepath.Join(dir, "summary.json"))
	}
	whole := multiPartRun(t)
	filepath.WalkDir(whole, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "summary.json" {
			validateSummary(t, sch, p)
		}
		return nil
	})
}
