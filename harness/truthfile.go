package harness

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/msgload/msgload/rundir"
)

// truthJSONMax is the largest truth.jsonl that is also written whole as
// truth.json when the simulator closes, for readers of before truth.jsonl
// (scripts, the oracle tests): below it the copy is cheap (a short run's
// truth, read into memory once); above it — a soak — only truth.jsonl is
// written, so that neither memory nor disk doubles.
const truthJSONMax = 16 << 20

// streamTruth makes the embedded simulator write its truth into the run
// directory as it goes (truth.jsonl).
func (r *partRun) streamTruth(sv interface{ StreamTruth(string) error }) error {
	if err := sv.StreamTruth(filepath.Join(r.dir, rundir.TruthStreamFile)); err != nil {
		return fmt.Errorf("start the simulator: truth: %w", err)
	}
	return nil
}

// writeTruthJSON writes truth.json beside a small, finished truth.jsonl (see
// truthJSONMax); an unfinished or large one gets none.
func writeTruthJSON(dir string) error {
	st, err := os.Stat(filepath.Join(dir, rundir.TruthStreamFile))
	if err != nil || st.Size() > truthJSONMax {
		return nil
	}
	t, err := rundir.ReadTruth(os.DirFS(dir))
	if err != nil || t == nil {
		return nil // the report says what is wrong with truth.jsonl
	}
	return writeJSON(filepath.Join(dir, rundir.TruthFile), t)
}
