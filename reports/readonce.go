package reports

import (
	"io/fs"

	"github.com/msgload/msgload/rundir"
)

// onePassBytes is the size of attempts.jsonl and events.jsonl together up to
// which a run that could be analysed in passes (twoPasses) is read once
// instead, holding its messages: the passes bound the memory of a long run
// (issue 23) but read attempts.jsonl three times — at 5,000/s for 5 s,
// 25,000 lines, the one reading uses about 55 % of the passes' CPU (issue
// 25: 1.5 % of the run's) for about 110 bytes a message more at its end
// (2.7 MB live at 25,000; 16 MiB of files is about 50,000 attempts). Both
// give the same summary to the byte (TestStreamDifferential's goldens are
// the one reading's; TestSmallRunReadOnce). 0 reads every such run in
// passes, as a test of the passes sets it.
var onePassBytes int64 = 16 << 20

// readOnce reports whether a run analysed in passes is small enough to be
// read once instead (onePassBytes). A build listing its lost messages (lost)
// is read once only with delivery none, where none is lost: the one reading
// lists them in another order than the passes.
func readOnce(fsys fs.FS, lost *lostList) bool {
	if onePassBytes <= 0 {
		return false // no stat either: the passes take their own cut (analyzeBounded)
	}
	if lost != nil {
		if m, ok := runMeta(fsys); !ok || m.Delivery.Via != "none" {
			return false
		}
	}
	var n int64
	for _, f := range []string{rundir.AttemptsFile, rundir.EventsFile} {
		if st, err := fs.Stat(fsys, f); err == nil {
			n += st.Size()
		}
	}
	return n <= onePassBytes
}
