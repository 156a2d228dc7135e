package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// Attempts duplicated line by line (each line written twice) make the verdict
// error, a measurement reason, with each attempt counted once. Before, such a
// run passed with no warning (issue 24).
func TestDuplicatedAttemptLinesAreAnError(t *testing.T) {
	base, err := conclude(copyRun(t, sampleRun))
	if err != nil {
		t.Fatal(err)
	}
	if base.Verdict == VerdictError {
		t.Fatalf("the sample run is already error: %+v", base.Reasons)
	}
	dir := copyRun(t, sampleRun)
	p := filepath.Join(dir, rundir.AttemptsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var twice bytes.Buffer
	lines := bytes.SplitAfter(b, []byte("\n"))
	for _, l := range lines {
		twice.Write(l)
		twice.Write(l)
	}
	if err := os.WriteFile(p, twice.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := conclude(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Verdict != VerdictError {
		t.Fatalf("verdict %s, want error: %+v", s.Verdict, s.Reasons)
	}
	found := false
	for _, r := range s.Reasons {
		found = found || r.Whose == WhoseMeasurement && bytes.Contains([]byte(r.Text), []byte("repeat an attempt"))
	}
	if !found {
		t.Fatalf("no measurement reason names the duplicates: %+v", s.Reasons)
	}
	if s.Requests.Messages != base.Requests.Messages || s.Requests.Duplicates == 0 {
		t.Fatalf("messages %d (want %d once each), duplicates %d", s.Requests.Messages, base.Requests.Messages, s.Requests.Duplicates)
	}
}
