package reports

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/msgload/msgload/rundir"
)

// mergeTruth concatenates the truths of the shards' simulators (embedded: one
// each) into out's truth.jsonl, record by record (a shard's truth.json, of
// an older run, read through its records): the first shard's rate limit,
// every shard's windows, callbacks and messages in its own order (each
// message still after its calls: ids are the simulator's, one shard's), one
// end record. When a shard has none, or an unfinished one (killed before its
// simulator closed), there is no truth of the run: a part of it would be
// judged against the whole union.
func mergeTruth(out string, shards []shardDir) error {
	dst := filepath.Join(out, rundir.TruthStreamFile)
	for _, name := range []string{rundir.TruthFile, rundir.TruthStreamFile} {
		if err := os.Remove(filepath.Join(out, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("merge: %w", err)
		}
	}
	tmp, err := rundir.CreateAtomic(dst)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	defer tmp.Abort()
	whole, err := concatTruths(tmp.File, shards)
	if err != nil || !whole {
		return err
	}
	return tmp.Commit()
}

// concatTruths writes the shards' truth records to f; false when a shard
// has no finished truth.
func concatTruths(f *os.File, shards []shardDir) (bool, error) {
	w := bufio.NewWriterSize(f, 64<<10)
	enc := json.NewEncoder(w)
	truncated := false
	for i, s := range shards {
		found, err := rundir.OpenTruth(os.DirFS(s.dir), func(rec *rundir.TruthRecord) error {
			switch {
			case rec.Type == rundir.TruthRecEnd:
				truncated = truncated || rec.Truncated
				return nil
			case rec.Type == rundir.TruthRecRateLimit && i > 0:
				return nil
			}
			return enc.Encode(rec)
		})
		switch {
		case !found || errors.Is(err, rundir.ErrTruthUnfinished):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("%w: %s: %v", errBadRun, s.dir, err)
		}
	}
	if err := enc.Encode(rundir.TruthRecord{Type: rundir.TruthRecEnd, Truncated: truncated}); err != nil {
		return false, err
	}
	return true, w.Flush()
}
