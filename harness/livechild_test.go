package harness

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/scenarios"
)

// The live analysis is the one `msgload report` runs, in a child process:
// over every run directory of reports' testdata, the partial summary.json it
// answers is byte for byte what reports.Analyze's summary writes; it judges
// the thresholds it is asked on that analysis; and it ran at the least CPU
// priority, under the report's soft memory limit, while this process's own
// limit was untouched.
func TestLiveAnalysisIsReportsAnalysis(t *testing.T) {
	exe, err := liveExecutable()
	if err != nil {
		t.Skipf("no executable to run the live analysis in: %v", err)
	}
	dirs, err := filepath.Glob(filepath.Join("..", "reports", "testdata", "runs", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no run directories in reports' testdata: %v", err)
	}
	own := debug.SetMemoryLimit(-1)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			s, err := reports.Analyze(dir)
			if err != nil {
				t.Fatal(err)
			}
			want, err := s.PartialJSON()
			if err != nil {
				t.Fatal(err)
			}
			// A count every run has, with a bound it holds and one it fails.
			ths := []string{"requests.messages >= 0", "requests.messages < 0"}
			reply, err := runLiveChild(context.Background(), exe, liveRequest{Dir: dir, Via: s.Delivery.Via, Thresholds: ths, Checkpoint: true})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(reply.Partial, want) {
				t.Errorf("the live analysis's summary differs from reports.Analyze's:\n%s", firstDiff(reply.Partial, want))
			}
			if len(reply.States) != 2 {
				t.Fatalf("states %+v, want one for each of %q", reply.States, ths)
			}
			if hold, fail := reply.States[0], reply.States[1]; !hold.Known || !hold.OK || !fail.Known || fail.OK || fail.Value != float64(s.Requests.Messages) {
				t.Errorf("judged %+v and %+v: want %q to hold and %q to fail at %d", hold, fail, ths[0], ths[1], s.Requests.Messages)
			}
			if runtime.GOOS == "linux" && reply.Nice != liveNice {
				t.Errorf("the live analysis ran at niceness %d, want %d (the least priority: the attack's sends first)", reply.Nice, liveNice)
			}
			if reply.MemoryLimit == math.MaxInt64 && own == math.MaxInt64 {
				t.Error("the live analysis ran with no soft memory limit, want the report's (memlimit.ForReport)")
			}
		})
	}
	if v := debug.SetMemoryLimit(-1); v != own {
		t.Errorf("this process's memory limit went from %d to %d: the analysis is the child's", own, v)
	}
}

// A live analysis that fails — a directory that is no run — says why and
// leaves no state; a child given no request exits 2 and says what it lacks.
func TestLiveAnalysisFails(t *testing.T) {
	exe, err := liveExecutable()
	if err != nil {
		t.Skipf("no executable to run the live analysis in: %v", err)
	}
	_, err = runLiveChild(context.Background(), exe, liveRequest{Dir: filepath.Join(t.TempDir(), "none")})
	if err == nil {
		t.Fatal("the live analysis of a missing directory succeeded")
	}
	t.Log(err)
	var out bytes.Buffer
	if code := serveLiveChild(strings.NewReader("not json"), &out); code != 2 || out.Len() != 0 {
		t.Errorf("a child with no request: exit %d, answered %q; want 2 and nothing", code, out.String())
	}
}

// A live analysis under way is killed when the loop stops: the run's end
// does not wait for it, and nothing it read is written after.
func TestLiveAnalysisKilledOnStop(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "reports", "testdata", "runs", "*"))
	if len(dirs) == 0 {
		t.Fatal("no run directories in reports' testdata")
	}
	// A child that never answers.
	exe := filepath.Join(t.TempDir(), "slow")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &liveLoop{r: &partRun{dir: dirs[0], s: &scenarios.Scenario{}}, exe: exe}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := l.analyze(nil, true); done <- err }()
	l.cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("a stopped analysis returned %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the analysis went on 30 s after the loop stopped")
	}
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
