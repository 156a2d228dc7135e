package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sink"
)

// failingLog is the embedded sink's event log on a disk that fails for a
// window: once okBefore calls (lines) are written, each write fails — in
// turn half written then ENOSPC (a disk filling mid-write), nothing written
// and ENOSPC, and written whole but its fsync EIO — until refuseAtLeast
// calls were refused; then the disk works again. It counts the calls
// (lines) of the failed writes: the sink answered each 500.
type failingLog struct {
	*os.File
	okBefore, refuseAtLeast int

	mu       sync.Mutex
	written  int // lines of writes that succeeded
	refused  int // lines of writes (or their fsync) that failed
	failures int // writes failed, fsyncs included
	syncFail int // lines of the last write, whose fsync is to fail; 0: none
}

func (f *failingLog) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	lines := bytes.Count(p, []byte{'\n'})
	if f.written < f.okBefore || f.refused >= f.refuseAtLeast {
		f.written += lines
		return f.File.Write(p)
	}
	f.failures++
	switch f.failures % 3 {
	case 1:
		f.refused += lines
		n, err := f.File.Write(p[:len(p)/2])
		if err != nil {
			return n, err
		}
		return n, syscall.ENOSPC
	case 2:
		f.refused += lines
		return 0, syscall.ENOSPC
	}
	f.syncFail = lines
	return f.File.Write(p)
}

func (f *failingLog) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.syncFail; n > 0 {
		f.syncFail = 0
		f.refused += n
		return syscall.EIO
	}
	return f.File.Sync()
}

// counts are the lines (calls) refused and the failures injected.
func (f *failingLog) counts() (refused, failures int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused, f.failures
}

// sinkFaultSource is a notify scenario against the embedded simulator and
// sink: one webhook per notification (its final status), made attempts
// times by the simulator when the sink refuses it.
const sinkFaultSource = `name: sink-log-fault
api: notify
target: embedded
clients: 1
load: { rate: 20/s, requests: 30 }
limit: { rate: 1000/1m, mode: respect }
message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { grace: 20s }
sim:
  seed: 5
  rateLimit: { rate: 1000/1m }
  notifyDelay: { median: 50ms, p95: 100ms }
  callbacks: { attempts: %d, backoff: 100ms, backoffFactor: 1 }
thresholds: [ %s ]
`

// runOnFailingLog runs sinkFaultSource with the embedded sink's log on a
// failingLog and returns the part, the file and what the run wrote on stderr.
func runOnFailingLog(t *testing.T, attempts int, thresholds string) (Part, *failingLog, string) {
	t.Helper()
	src := fmt.Sprintf(sinkFaultSource, attempts, thresholds)
	s, err := scenarios.Parse("sinkfault.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingLog{okBefore: 5, refuseAtLeast: 5}
	var stderr strings.Builder
	res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr,
		SinkWrapLog: func(f *os.File) sink.LogFile { fl.File = f; return fl }})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Parts[0]
	if p.Err != nil {
		t.Fatalf("run: %v\n%s", p.Err, stderr.String())
	}
	if refused, _ := fl.counts(); refused < fl.refuseAtLeast {
		t.Fatalf("the log refused %d calls, want at least %d: the run made too few webhooks\n%s", refused, fl.refuseAtLeast, stderr.String())
	}
	return p, fl, stderr.String()
}

// checkSinkFaultRun asserts what the run directory says of the calls the
// sink could not write: run.json sink_write_errors is the count the failing
// file refused, and also the simulator's calls the sink answered 500 (its
// truth); every call answered 2xx is in events.jsonl, whole, and no refused
// one. It returns summary.json as written.
func checkSinkFaultRun(t *testing.T, p Part, fl *failingLog) *reports.Summary {
	t.Helper()
	refused, failures := fl.counts()
	meta := readMeta(t, p.Dir)
	if meta.SinkWriteErrors != int64(refused) {
		t.Errorf("run.json sink_write_errors %d, want the %d calls the log refused (%d failed writes)", meta.SinkWriteErrors, refused, failures)
	}
	tr, err := rundir.ReadTruth(os.DirFS(p.Dir))
	if err != nil || tr == nil {
		t.Fatalf("truth: %v", err)
	}
	acked := map[string]int{} // id/state of webhooks answered 2xx, by the simulator's truth
	answered500 := 0
	for _, c := range tr.Callbacks {
		if c.Action != rundir.CallbackSent && c.Action != rundir.CallbackRetried {
			continue
		}
		switch {
		case c.Status >= 200 && c.Status < 300:
			acked[c.ID+"/"+c.State]++
		case c.Status == 500:
			answered500++
		default:
			t.Errorf("webhook %s %s attempt %d answered %d, want 2xx or 500", c.ID, c.State, c.Attempt, c.Status)
		}
	}
	if answered500 != refused {
		t.Errorf("the simulator's truth has %d webhooks answered 500, the log refused %d", answered500, refused)
	}
	logged := map[string]int{}
	err = rundir.ReadJSONL(filepath.Join(p.Dir, rundir.EventsFile), func(e rundir.Event) error {
		if e.Kind == rundir.KindWebhook && e.Corr != nil {
			logged[e.ServiceID()+"/"+e.Corr.State]++
		} else {
			t.Errorf("event %+v: want only webhooks", e)
		}
		return nil
	}, func(line int, err error) { t.Errorf("%s line %d: %v", rundir.EventsFile, line, err) })
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range acked {
		if logged[k] != n {
			t.Errorf("webhook %s answered 2xx %d times, in %s %d times: acknowledged means durable", k, n, rundir.EventsFile, logged[k])
		}
	}
	for k, n := range logged {
		if acked[k] == 0 {
			t.Errorf("webhook %s in %s %d times, never answered 2xx: a refused call left a trace", k, rundir.EventsFile, n)
		}
	}
	s, err := reports.ReadSummary(filepath.Join(p.Dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if s.Run.SinkWriteErrors != int64(refused) {
		t.Errorf("summary.json run.sink_write_errors %d, want %d", s.Run.SinkWriteErrors, refused)
	}
	t.Logf("%d calls refused in %d failed writes, %d answered 2xx; verdict %s %q; warnings %q",
		refused, failures, len(logged), s.Verdict, s.VerdictReasons, s.Warnings)
	return s
}

// TestEmbeddedSinkWriteErrorsLoseMessages: the embedded sink's disk fails
// for a window and the simulator does not retry (one attempt), so the
// webhooks the sink refused are lost. With no threshold at all, only the
// sink's count of write failures stands between that run and a pass: it must
// be incomplete, the environment's, the reason naming the calls the sink
// could not write and the messages without a final status. (Checked to fail
// with part.go not recording sink_write_errors: verdict pass.)
func TestEmbeddedSinkWriteErrorsLoseMessages(t *testing.T) {
	p, fl, stderr := runOnFailingLog(t, 1, "")
	s := checkSinkFaultRun(t, p, fl)
	refused, _ := fl.counts()
	if s.Delivery.Lost != int64(refused) {
		t.Errorf("delivery.lost %d, want the %d webhooks refused and not retried", s.Delivery.Lost, refused)
	}
	if s.Verdict != reports.VerdictIncomplete {
		t.Fatalf("verdict %s %q, want incomplete: messages lost to the sink's disk\n%s", s.Verdict, s.VerdictReasons, stderr)
	}
	want := fmt.Sprintf("the sink could not write %d calls sent to it", refused)
	found := false
	for _, r := range s.Reasons {
		if r.Whose != reports.WhoseEnvironment { // a plan not held is the environment's too
			t.Errorf("reason %+v: want only the environment's (neither the service's loss nor msgload's)", r)
		}
		if strings.Contains(r.Text, want) {
			found = true
			if r.Whose != reports.WhoseEnvironment || r.Verdict != reports.VerdictIncomplete ||
				!strings.Contains(r.Text, fmt.Sprintf("%d accepted messages have no final status", refused)) {
				t.Errorf("sink reason %+v: want the environment's, incomplete, saying %d messages have no final status", r, refused)
			}
		}
	}
	if !found {
		t.Errorf("no reason says %q: %+v", want, s.Reasons)
	}
}

// TestEmbeddedSinkWriteErrorsRetried: the same failing window, and the
// simulator retries each refused webhook (6 attempts, more than the window's
// failing writes), so every message has its final status: nothing is
// missing, and the run passes (its delivery.lost == 0 threshold held) with
// a warning that the sink could not write those calls and their senders
// sent them again (reports sinkLogReason). A machine that could not hold
// the plan makes it incomplete, and the verdict must say that alone.
func TestEmbeddedSinkWriteErrorsRetried(t *testing.T) {
	p, fl, stderr := runOnFailingLog(t, 6, `"delivery.lost == 0"`)
	s := checkSinkFaultRun(t, p, fl)
	refused, _ := fl.counts()
	if s.Delivery.Lost != 0 {
		t.Errorf("delivery.lost %d, want 0: every refused webhook was retried", s.Delivery.Lost)
	}
	want := fmt.Sprintf("the sink could not write %d calls sent to it", refused)
	warned := false
	for _, w := range s.Warnings {
		warned = warned || strings.Contains(w, want) && strings.Contains(w, "every accepted message has its final status")
	}
	if !warned {
		t.Errorf("warnings %q: want one saying %q and that nothing is missing", s.Warnings, want)
	}
	if s.Verdict != reports.VerdictPass && !planNotHeld(s) {
		t.Errorf("verdict %s %q, want pass (or incomplete for the plan alone)\n%s", s.Verdict, s.VerdictReasons, stderr)
	}
}
