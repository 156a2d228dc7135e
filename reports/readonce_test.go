package reports

import (
	"bytes"
	"io/fs"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// TestMain: the package's tests analyse small runs; they test the passes
// (stream.go) as before, not the one reading a small run gets (readOnce),
// which TestSmallRunReadOnce tests.
func TestMain(m *testing.M) {
	onePassBytes = 0
	os.Exit(m.Run())
}

// openCounter counts the openings of each file of a run directory (a Stat
// is no opening).
type openCounter struct {
	fs.FS
	n map[string]int
}

func (c openCounter) Open(name string) (fs.File, error) {
	c.n[name]++
	return c.FS.Open(name)
}

func (c openCounter) Stat(name string) (fs.FileInfo, error) { return fs.Stat(c.FS, name) }

// TestSmallRunReadOnce: a run of delivery none small enough (onePassBytes,
// onePassLines) has attempts.jsonl read once, not in passes (census and two
// analyses), and its summary is byte for byte the passes' — with and
// without a list of the lost messages (a build's); one a byte or a line
// over either limit is read in passes.
func TestSmallRunReadOnce(t *testing.T) {
	const messages = 3_000
	dir := noneRun(messages).write(t)
	st, err := os.Stat(dir + "/" + rundir.AttemptsFile)
	if err != nil {
		t.Fatal(err)
	}
	analyse := func(maxBytes, maxLines int64, withLost bool) ([]byte, int) {
		defer func(b, l int64) { onePassBytes, onePassLines = b, l }(onePassBytes, onePassLines)
		onePassBytes, onePassLines = maxBytes, maxLines
		c := openCounter{FS: os.DirFS(dir), n: map[string]int{}}
		var lost *lostList
		if withLost {
			if lost, err = createLostList(t.TempDir()); err != nil {
				t.Fatal(err)
			}
			defer lost.abort()
		}
		a, err := analyzeKeep(c, dir, false, lost)
		if err != nil {
			t.Fatal(err)
		}
		b, err := a.s.JSON()
		if err != nil {
			t.Fatal(err)
		}
		return b, c.n[rundir.AttemptsFile]
	}
	passes, inPasses := analyse(st.Size()-1, messages, false)
	if _, n := analyse(st.Size(), messages-1, false); n < inPasses { // and once to count its lines
		t.Errorf("a run of %d lines, the limit a line under: %s opened %d times, in passes %d", messages, rundir.AttemptsFile, n, inPasses)
	}
	for _, withLost := range []bool{false, true} {
		once, n := analyse(st.Size(), messages, withLost)
		t.Logf("%s opened %d times read once, %d in passes (lost list %v)", rundir.AttemptsFile, n, inPasses, withLost)
		// The passes read it at least twice more than the one reading
		// (the census and the second analysis); the one reading opens it
		// once more to count its lines.
		if n > inPasses-1 {
			t.Errorf("a run of %d bytes, the limit: %s opened %d times, in passes %d: want fewer (lost list %v)", st.Size(), rundir.AttemptsFile, n, inPasses, withLost)
		}
		if !bytes.Equal(once, passes) {
			t.Errorf("summary read once differs from the passes' (lost list %v): %s", withLost, firstDiff(once, passes))
		}
	}
}

// BenchmarkAnalyzeNone25k: the run BenchmarkRunVersusVegeta leaves (25,000
// sends at 5000/s, delivery none), analysed in passes and read once
// (readOnce): the process's CPU time an analysis (cpu-ns/op: user and
// system, so a busy machine's other work is not in it) and the live heap it
// holds at its end (live-B).
func BenchmarkAnalyzeNone25k(b *testing.B) {
	dir := noneRun(25_000).write(b)
	for _, c := range []struct {
		name  string
		limit int64
	}{{"passes", 0}, {"once", 16 << 20}} { // and onePassLines, 65,536
		b.Run(c.name, func(b *testing.B) {
			defer func(n int64) { onePassBytes = n }(onePassBytes)
			onePassBytes = c.limit
			b.ReportAllocs()
			var a *analyzer
			cpu0 := cpuTime()
			for b.Loop() {
				var err error
				if a, err = analyze(os.DirFS(dir), dir); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapAlloc), "live-B")
			runtime.KeepAlive(a)
		})
	}
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
