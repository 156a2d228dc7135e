package harness

import (
	"errors"
	"io"
	"io/fs"
	"sync"
	"time"
)

// A live analysis reads every raw file of the run again, a burst of a whole
// core that grows with the run (2.7 M lines at minute 9 of a 5,000/s run):
// on a machine the attacker shares, the sends waited for it. So the live loop
// reads the run directory through a paced file system (gentleFS): after each
// chunk the analysis read (and processed the chunk before it), the reading
// sleeps so that the analysis has worked at most liveShare of the wall time
// since it began. Its work is measured on the wall clock, not as CPU time:
// when the machine is busy the analysis waits for a core too, counts that as
// its work, and only gets gentler. The analysis is the same (reports.AnalyzeFS,
// what `msgload report` runs over os.DirFS): only when its reads return changes.
// Not paced: work between two reads of the run's files, such as the join of
// the first pass's ids spilled to temporary files (reports' hashSpill), about
// 0.2 s of CPU in one go at 900,000 lines, growing with the run.

// liveShare is the most of one core a live analysis uses, measured on the wall clock.
const liveShare = 0.25

// gentle paces one analysis: the reads of all its files share one budget.
type gentle struct {
	mu    sync.Mutex
	share float64
	now   func() time.Time
	sleep func(time.Duration) bool // false: the loop stopped while it slept
	began time.Time
	slept time.Duration
}

// errLiveStopped ends a paced analysis whose live loop stopped: the run's
// end does not wait for it (its own reports come next).
var errLiveStopped = errors.New("the live loop stopped")

// newGentle starts the pace of an analysis beginning now that may work share
// (0 < share ≤ 1) of the wall time; sleep sleeps, or returns false at once
// when the loop stops.
func newGentle(share float64, now func() time.Time, sleep func(time.Duration) bool) *gentle {
	return &gentle{share: share, now: now, sleep: sleep, began: now()}
}

// pause sleeps what the analysis owes: the wall time since it began, less
// what it slept, is its work, which must be at most share of the wall time.
// The sleep is measured, not assumed: one that overran is credited.
func (g *gentle) pause() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	at := g.now()
	spent := at.Sub(g.began)
	owed := time.Duration(float64(spent-g.slept)/g.share) - spent
	if owed <= 0 {
		return nil
	}
	ok := g.sleep(owed)
	g.slept += g.now().Sub(at)
	if !ok {
		return errLiveStopped
	}
	return nil
}

// gentleFS is fsys whose files' reads pause on g.
type gentleFS struct {
	fsys fs.FS
	g    *gentle
}

// Open opens name in the paced file system; a file that can seek still can
// (reports reads the tail of truth.jsonl so).
func (f gentleFS) Open(name string) (fs.File, error) {
	file, err := f.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	gf := gentleFile{File: file, g: f.g}
	if s, ok := file.(io.Seeker); ok {
		return gentleSeeker{gentleFile: gf, s: s}, nil
	}
	return gf, nil
}

// gentleFile is a file whose every read pauses on g.
type gentleFile struct {
	fs.File
	g *gentle
}

// Read reads from the file, then pauses; it fails when the loop stopped.
func (f gentleFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	if perr := f.g.pause(); perr != nil {
		return n, perr
	}
	return n, err
}

// gentleSeeker is a gentleFile that seeks.
type gentleSeeker struct {
	gentleFile
	s io.Seeker
}

// Seek seeks in the file.
func (f gentleSeeker) Seek(offset int64, whence int) (int64, error) {
	return f.s.Seek(offset, whence)
}
