package reports

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"

	"github.com/msgload/msgload/rundir"
)

// truthCompared says whether the analysis compares the run's truth: it has
// one, and not one still being written (truthPending). A truth not compared
// is not read at all — neither joined, nor its decisions spilled — rather
// than read whole to its missing end record at every live analysis.
func truthCompared(fsys fs.FS, m rundir.Meta) bool {
	return rundir.HasTruth(fsys) && !truthPending(fsys, m)
}

// truthPending says whether the run's truth is one the analysis does not
// compare yet (readTruth): a truth.jsonl whose last line is not its end
// record — the simulator has not closed, or is writing a line — in a run
// still going or interrupted (a torn last line is no bad run then). Such a truth does not keep the run from the analysis in
// passes (twoPasses): the live analysis of a run with callbacks on the
// embedded simulator, at every tick of the run's live loop, would otherwise
// take the one pass and hold every message of the run so far (issue 23).
// Only the file's tail is read: the live loop asks at every analysis.
func truthPending(fsys fs.FS, m rundir.Meta) bool {
	if !m.Interrupted && !m.End.IsZero() {
		return false
	}
	f, err := rundir.OpenRegularFS(fsys, rundir.TruthStreamFile)
	if err != nil {
		return false // no stream (truth.json is written whole, at the end): as before
	}
	defer f.Close()
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		return false // cannot read its tail: read whole, as before
	}
	return !endsWithEndRecord(rs)
}

// truthTail is how much of truth.jsonl's end truthPending reads: the end
// record is a few dozen bytes.
const truthTail = 4096

// endsWithEndRecord reports whether the last line of rs is a truth's end
// record.
func endsWithEndRecord(rs io.ReadSeeker) bool {
	size, err := rs.Seek(0, io.SeekEnd)
	if err != nil {
		return false
	}
	from := max(size-truthTail, 0)
	if _, err := rs.Seek(from, io.SeekStart); err != nil {
		return false
	}
	b, err := io.ReadAll(rs)
	if err != nil {
		return false
	}
	b = bytes.TrimRight(b, "\r\n")
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 && from > 0 {
		return false // a last line longer than the tail: no end record
	}
	var rec rundir.TruthRecord
	return json.Unmarshal(b[i+1:], &rec) == nil && rec.Type == rundir.TruthRecEnd
}
