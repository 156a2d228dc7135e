package harness

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/msgload/msgload/reports"
)

// fakeClock is a wall clock a test moves: work advances it, and so does a
// sleep, by what was asked times over (1: on time; 2: a sleep that overran).
type fakeClock struct {
	t     time.Time
	over  time.Duration
	slept time.Duration // asked for
	stop  bool          // sleeps report the loop stopped
}

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) sleep(d time.Duration) bool {
	c.slept += d
	c.t = c.t.Add(d * c.over)
	return !c.stop
}

// readWorking reads name from fsys in chunks of size, working work on the
// clock before each read (processing the chunk read before it), and checks
// after each that the reading worked at most share of the wall time since
// it began; it returns the work done and the wall time it took.
func readWorking(t *testing.T, fsys fs.FS, c *fakeClock, name string, size int, work time.Duration, share float64) (worked, took time.Duration) {
	t.Helper()
	began := c.t
	f, err := fsys.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, size)
	for {
		c.t = c.t.Add(work)
		worked += work
		_, err := f.Read(buf)
		wall := c.t.Sub(began)
		if float64(worked) > share*float64(wall)+1 {
			t.Fatalf("after a read: worked %v of %v of wall time, over a share of %g", worked, wall, share)
		}
		if err == io.EOF {
			return worked, wall
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The live analysis's reading works at most its share of the wall clock:
// after each chunk it sleeps what it owes, three times its work at a quarter
// of a core. Work is measured on the wall clock, so work that took longer (a
// busy machine: the analysis waited for a core) makes it sleep longer; a
// sleep that overran is credited to the next.
func TestGentleReadingKeepsItsShare(t *testing.T) {
	data := bytes.Repeat([]byte(`{"seq":1,"attempt":1}`+"\n"), 1000)
	mfs := fstest.MapFS{"attempts.jsonl": {Data: data}}
	chunk := 1 << 10
	reads := time.Duration((len(data)+chunk-1)/chunk + 1) // the last read is io.EOF
	for _, tc := range []struct {
		name  string
		work  time.Duration
		over  time.Duration
		share float64
	}{
		{"idle machine", 2 * time.Millisecond, 1, 0.25},
		{"busy machine: each chunk takes twice the wall time", 4 * time.Millisecond, 1, 0.25},
		{"half a core", 2 * time.Millisecond, 1, 0.5},
		{"sleeps that overrun", 2 * time.Millisecond, 2, 0.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &fakeClock{t: time.Unix(1e9, 0), over: tc.over}
			g := newGentle(tc.share, c.now, c.sleep)
			worked, took := readWorking(t, gentleFS{fsys: mfs, g: g}, c, "attempts.jsonl", chunk, tc.work, tc.share)
			if want := reads * tc.work; worked != want {
				t.Fatalf("worked %v, want %v", worked, want)
			}
			if tc.over == 1 {
				// On time, it sleeps exactly what keeps it to its share: no more.
				want := time.Duration(float64(worked)/tc.share) - worked
				if c.slept != want {
					t.Errorf("slept %v for %v of work at a share of %g, want %v", c.slept, worked, tc.share, want)
				}
				return
			}
			// Overrun sleeps: asked for less than on time, and the wall time
			// is still at least the work over the share.
			if onTime := time.Duration(float64(worked)/tc.share) - worked; c.slept >= onTime {
				t.Errorf("asked %v of sleep although sleeps overran; on time it is %v", c.slept, onTime)
			}
			if float64(worked) > tc.share*float64(took) {
				t.Errorf("worked %v of %v", worked, took)
			}
		})
	}
}

// When the live loop stops (the run's end), a paced reading fails at its
// next pause instead of sleeping on: the run does not wait for it.
func TestGentleReadingEndsWhenTheLoopStops(t *testing.T) {
	c := &fakeClock{t: time.Unix(1e9, 0), over: 1, stop: true}
	g := newGentle(liveShare, c.now, c.sleep)
	f, err := gentleFS{fsys: fstest.MapFS{"a": {Data: []byte("x\n")}}, g: g}.Open("a")
	if err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(time.Millisecond)
	if _, err := f.Read(make([]byte, 8)); !errors.Is(err, errLiveStopped) {
		t.Fatalf("read after the loop stopped: %v, want errLiveStopped", err)
	}
}

// The live loop's analysis is the one `msgload report` runs: over every run
// directory of reports' testdata, its summary (and so the partial one it
// writes) is byte for byte reports.Analyze's, and its reading was paced.
func TestLiveAnalysisIsReportsAnalysis(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "reports", "testdata", "runs", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no run directories in reports' testdata: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := summaryJSON(t, dir, func() (*reports.Summary, error) { return reports.Analyze(dir) })
			c := &fakeClock{t: time.Unix(1e9, 0), over: 1}
			tick := func() time.Time { c.t = c.t.Add(time.Millisecond); return c.t } // every look at the clock: a millisecond of work
			l := &liveLoop{r: &partRun{dir: dir}, pace: func() *gentle { return newGentle(liveShare, tick, c.sleep) }}
			got := summaryJSON(t, dir, l.analyze)
			if !bytes.Equal(got, want) {
				t.Errorf("the live analysis's summary differs from reports.Analyze's:\n%s", firstDiff(got, want))
			}
			if c.slept == 0 {
				t.Error("the live analysis was not paced: it never slept")
			}
		})
	}
}

// summaryJSON is the summary analyze gives, as the partial summary.json a
// checkpoint writes (into a copy of dir: testdata is not written).
func summaryJSON(t *testing.T, dir string, analyze func() (*reports.Summary, error)) []byte {
	t.Helper()
	s, err := analyze()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := s.WritePartial(out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// firstDiff shows where a and b first differ, by line.
func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + al[i] + "\nwant " + bl[i]
		}
	}
	return "one is longer"
}
