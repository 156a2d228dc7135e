package reports

import (
	"bytes"
	"errors"
	"io"
	"io/fs"

	"github.com/msgload/msgload/rundir"
)

// A run that could be analysed in passes (twoPasses) is read once instead,
// holding its messages, when attempts.jsonl and events.jsonl hold at most
// onePassBytes and onePassLines together: the passes bound the memory of a
// long run (issue 23) but read attempts.jsonl three times — at 5,000/s for
// 5 s, 25,000 lines, the one reading uses about 60 % of the passes' CPU
// (issue 25) for about 110 bytes a message more at its end (2.7 MB live at
// 25,000). The lines are counted too because a line can be as short as
// {"seq":1}: 16 MiB of those would be 1.6 M messages held. Both readings
// give the same summary to the byte (TestStreamDifferential's goldens are
// the one reading's; TestSmallRunReadOnce). onePassBytes 0 reads every such
// run in passes, as a test of the passes sets it.
var (
	onePassBytes int64 = 16 << 20
	onePassLines int64 = 1 << 16
)

// readOnce reports whether a run analysed in passes is small enough to be
// read once instead (onePassBytes, onePassLines). A build listing its lost
// messages (lost) is read once only with delivery none, where none is lost:
// the one reading lists them in another order than the passes.
func readOnce(fsys fs.FS, lost *lostList) bool {
	if onePassBytes <= 0 {
		return false // no stat either: the passes take their own cut (analyzeBounded)
	}
	if lost != nil {
		if m, ok := runMeta(fsys); !ok || m.Delivery.Via != "none" {
			return false
		}
	}
	var size, lines int64
	for _, f := range []string{rundir.AttemptsFile, rundir.EventsFile} {
		if st, err := fs.Stat(fsys, f); err == nil {
			size += st.Size()
		}
	}
	if size > onePassBytes {
		return false
	}
	for _, f := range []string{rundir.AttemptsFile, rundir.EventsFile} {
		n, ok := countLines(fsys, f, onePassBytes)
		if lines += n; !ok || lines > onePassLines {
			return false
		}
	}
	return true
}

// countLines is the number of newlines in the first max bytes of name (0
// when it does not exist); false when it cannot be read or is not a regular
// file (the passes then say why).
func countLines(fsys fs.FS, name string, max int64) (int64, bool) {
	f, err := rundir.OpenRegularFS(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, true
	}
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var n int64
	buf := make([]byte, 64<<10)
	r := io.LimitReader(f, max)
	for {
		k, err := r.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if errors.Is(err, io.EOF) {
			return n, true
		}
		if err != nil {
			return n, false
		}
	}
}
