package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
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
			if reply.Read != "all" {
				t.Errorf("a checkpoint read %q, want all", reply.Read)
			}
			// A judgement alone of thresholds on counts of the sends reads
			// the sends alone, in the counting passes alone
			// (reports.AnalyzeSendsCounting, whose counted figures are
			// Analyze's: reports.TestCountingPassFigures), and judges the
			// same; with the id collisions among them (the third pass's),
			// the sends alone in full (reports.AnalyzeSends:
			// reports.TestSendsAloneSameFigures).
			alone, err := runLiveChild(context.Background(), exe, liveRequest{Dir: dir, Via: s.Delivery.Via, Thresholds: ths})
			if err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS == "linux" && niceness() <= judgeNice && alone.Nice != judgeNice {
				t.Errorf("a judgement alone ran at niceness %d, want %d (above a checkpoint's, under the attack's)", alone.Nice, judgeNice)
			}
			if alone.Read != "counts" || alone.Partial != nil || len(alone.States) != 2 || alone.States[0] != reply.States[0] || alone.States[1] != reply.States[1] {
				t.Errorf("a judgement alone read %q, judged %+v (partial %d bytes); want the sends' counts alone, judged %+v, no partial", alone.Read, alone.States, len(alone.Partial), reply.States)
			}
			ids := append(slices.Clone(ths), "idempotency.id_collisions == 0")
			withIDs, err := runLiveChild(context.Background(), exe, liveRequest{Dir: dir, Via: s.Delivery.Via, Thresholds: ids})
			if err != nil {
				t.Fatal(err)
			}
			if withIDs.Read != "sends" || len(withIDs.States) != 3 || withIDs.States[0] != reply.States[0] || !withIDs.States[2].Known {
				t.Errorf("a judgement of the id collisions read %q, judged %+v; want the sends alone in full", withIDs.Read, withIDs.States)
			}
			if s.Delivery.Via == "sink" {
				// One on a count of the sink's reads the sends and the
				// events in the counting passes, the truth unread
				// (reports.AnalyzeCounting), and judges Analyze's count.
				both, err := runLiveChild(context.Background(), exe, liveRequest{Dir: dir, Via: "sink", Thresholds: append(ths, "delivery.duplicates < 1000000")})
				if err != nil {
					t.Fatal(err)
				}
				if both.Read != "counts and events" || len(both.States) != 3 || !both.States[2].Known || both.States[2].Value != float64(s.Delivery.Duplicates) {
					t.Errorf("a judgement of delivery.duplicates read %q, judged %+v; want the counts of the sends and events, %d duplicates", both.Read, both.States, s.Delivery.Duplicates)
				}
				// With the id collisions (the third pass's): everything.
				all, err := runLiveChild(context.Background(), exe, liveRequest{Dir: dir, Via: "sink", Thresholds: append(ths, "delivery.duplicates < 1000000", "idempotency.id_collisions < 1000000")})
				if err != nil {
					t.Fatal(err)
				}
				if all.Read != "all" || len(all.States) != 4 || all.States[2] != both.States[2] {
					t.Errorf("a judgement of delivery.duplicates and the id collisions read %q, judged %+v; want all, the duplicates as %+v", all.Read, all.States, both.States[2])
				}
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

// TestCheckpointBesideJudgements: a checkpoint's analysis reads every line
// so far, and in a long soak takes long; it runs in a child of its own
// beside the judgements of abortOnFail thresholds on the sends, so that it
// does not hold back their stop. Here the checkpoint never answers (a
// wrapper sleeps in place of the analysis when asked for one) while the
// judgements run the real analysis: the threshold must trip while the
// checkpoint still runs, and stopping the loop kills it. Nothing is timed:
// the checkpoint answers only when killed.
func TestCheckpointBesideJudgements(t *testing.T) {
	real, dir := liveChildOfThisTest(t) // the wrapper's /proc/self/exe is its shell
	tmp := t.TempDir()
	started := filepath.Join(tmp, "checkpoint-started")
	wrapper := filepath.Join(tmp, "analysis")
	script := "#!/bin/sh\nin=$(cat)\ncase \"$in\" in *'\"checkpoint\":true'*) : > " + started + "; exec sleep 600;; esac\nprintf '%s' \"$in\" | exec " + real + "\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// idempotency.id_collisions is not counted (reports.LiveThreshold.Counted):
	// judged by a child, not on the carried analysis; delivery.duplicates
	// is carried, with the run's events (the first run, reorder, has 28).
	for _, expr := range []string{"idempotency.id_collisions < 0", "delivery.duplicates < 0"} {
		t.Run(expr, func(t *testing.T) { checkpointBeside(t, wrapper, started, dir, expr) })
	}
}

// checkpointBeside runs a live loop on dir whose every checkpoint hangs
// (wrapper: it touches started and sleeps), and checks that expr, failing
// on dir, trips while the checkpoint runs.
func checkpointBeside(t *testing.T, wrapper, started, dir, expr string) {
	os.Remove(started)
	th, err := reports.CompileLive(expr, "sink")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stopSends := context.WithCancel(context.Background())
	defer stopSends()
	var stderr strings.Builder
	r := &partRun{dir: dir, s: &scenarios.Scenario{Name: "x"}, o: &Options{Stderr: &lockedWriter{w: &stderr}, Now: time.Now}, stops: &sendStop{cancel: stopSends}}
	r.phase.Store("attack")
	l := &liveLoop{r: r, rules: []liveRule{{th: th}}, every: 50 * time.Millisecond, checkpoint: 10 * time.Millisecond,
		start: time.Now(), done: make(chan struct{}), exe: wrapper}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	go l.loop()
	defer l.stop()
	select {
	case <-ctx.Done(): // the threshold tripped
	case <-time.After(5 * time.Minute): // a bound for the failure's message, not a timing
		t.Fatalf("the threshold did not trip in 5 minutes while the checkpoint ran: the judgement waits behind it\n%s", stderr.String())
	}
	// A checkpoint was under way when it tripped (a carried judgement can
	// trip before the checkpoint's child is started): its child starts,
	// and hangs.
	if !l.checkpointing.Load() {
		t.Fatal("the threshold tripped with no checkpoint under way: want it tripped while the checkpoint runs")
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) { // a bound, not a timing
		if _, err := os.Stat(started); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the checkpoint under way never started its child: %v", err)
		}
	}
	if a, _ := r.stops.stopped(); a == nil || a.Threshold != expr || !a.Final {
		t.Fatalf("stopped by %+v", a)
	}
	l.stop()
	if l.checkpointing.Load() {
		t.Error("the checkpoint's analysis still runs after the loop stopped")
	}
}

// lockedWriter serialises writes to w (the loop and its checkpoint write
// stderr from two goroutines).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A judgement of a percentile reads the sends only as far as the pass that
// counts them, where the percentile is known to its bucket (0.1 %); a bound
// inside that bucket sends the judgement on to the whole analysis of the
// sends, which judges it as reports.AnalyzeSends does. A run of 70,000
// sends, large enough to be read in passes.
func TestLiveJudgementOfAPercentileAtItsBound(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	const n = 70_000
	meta := rundir.Meta{ID: "pct", Scenario: "pct", API: rundir.APIMessaging, Target: "embedded", Start: start,
		AttackEnd: start.Add(n * time.Millisecond), End: start.Add(n*time.Millisecond + time.Second), Clients: []string{"c"},
		Planned:  rundir.Plan{Profile: "constant", Rate: 1000, Requests: n, Duration: rundir.Duration(n * time.Millisecond)},
		Delivery: rundir.Delivery{Via: "none"}}
	b, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.MetaFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var lines bytes.Buffer
	rng := rand.New(rand.NewPCG(41, 1))
	for i := range n {
		at := start.Add(time.Duration(i) * time.Millisecond)
		a := rundir.Attempt{Seq: int64(i + 1), API: rundir.APIMessaging, Op: "send", Client: "c", Attempt: 1, Intended: at, Sent: at, FirstSent: at,
			Code: 200, Latency: 0.005 + rng.Float64()*0.05, Outcome: "ok", Class: rundir.ClassOK, TxID: fmt.Sprintf("tx-%d", i), State: "ACCEPTED", Channel: "sms"}
		l, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		lines.Write(append(l, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.AttemptsFile), lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	whole, err := reports.AnalyzeSends(dir)
	if err != nil {
		t.Fatal(err)
	}
	p50 := whole.Requests.Latency.P50
	far := []string{fmt.Sprintf("requests.latency.p50 < %.6f", 2*p50), fmt.Sprintf("requests.latency.p50 < %.6f", p50/2)}
	near := []string{fmt.Sprintf("requests.latency.p50 < %.6f", p50), fmt.Sprintf("requests.latency.p50 <= %.6f", p50)}
	for _, c := range []struct {
		ths  []string
		read string
	}{{far, "counts"}, {append(far, near...), "counts, then sends"}} {
		reply := liveAnalyze(liveRequest{Dir: dir, Via: "none", Thresholds: c.ths})
		if reply.Error != "" || reply.Read != c.read {
			t.Fatalf("%q: read %q (error %q), want %q", c.ths, reply.Read, reply.Error, c.read)
		}
		for i, src := range c.ths {
			th, err := reports.CompileLive(src, "none")
			if err != nil {
				t.Fatal(err)
			}
			want, got := th.Judge(whole), reply.States[i]
			got.Value, want.Value = 0, 0 // a value from the counting pass is its span's low end
			if got != want {
				t.Errorf("%s: judged %+v, want %+v (reports.AnalyzeSends)", src, got, want)
			}
		}
	}
}

// liveChildOfThisTest is the program a test's live analysis runs (this test
// binary: its harness init serves the request) and a run directory of
// reports' testdata for it to read.
func liveChildOfThisTest(t *testing.T) (exe, dir string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("no executable: %v", err)
	}
	dirs, _ := filepath.Glob(filepath.Join("..", "reports", "testdata", "runs", "*"))
	if len(dirs) == 0 {
		t.Fatal("no run directories in reports' testdata")
	}
	return exe, dirs[0]
}
