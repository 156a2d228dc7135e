package reports

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// A run whose disk ran low (run.json disk_low: the harness's disk guard
// stopped its sends) is incomplete, the environment's reason, with when and
// how much was free — never pass, never blamed on the service; that it sent
// a tenth of its plan is said by that reason, not as a load not held. The
// same run without disk_low is incomplete for its shortfall: the disk's
// reason replaces it, it does not hide a shortfall of another cause.
func TestDiskLowIsIncomplete(t *testing.T) {
	r := plannedRun(100, 10, 10, 0, 0.01)
	s, _ := build(t, r)
	if loadReason(s) == nil || s.Verdict != VerdictIncomplete {
		t.Fatalf("without disk_low: verdict %s, reasons %q: a tenth of the plan sent is a load not held", s.Verdict, s.VerdictReasons)
	}
	r.meta.DiskLow = &rundir.DiskLow{At: t0.Add(1500 * time.Millisecond), Path: "/data/runs/x", Free: 200 << 20, Reserve: 256 << 20}
	s, f := build(t, r)
	requireVerdict(t, s, VerdictIncomplete, "the run's disk ran low")
	x := reasonWith(s, "the run's disk ran low")
	if x == nil || x.Whose != WhoseEnvironment || !strings.Contains(x.Text, "(1.50s after the start)") ||
		!strings.Contains(x.Text, "/data/runs/x had 200 MiB free, under the 256 MiB reserve") || !strings.Contains(x.Text, "its sends were stopped") {
		t.Fatalf("reasons %+v", s.Reasons)
	}
	if loadReason(s) != nil {
		t.Errorf("reasons %q: the disk's stop is said once, not again as a load not held", s.VerdictReasons)
	}
	if ExitCode(s.Verdict) == 0 {
		t.Error("a run stopped by a low disk exits 0")
	}
	var js struct {
		Run struct {
			DiskLow *rundir.DiskLow `json:"disk_low"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(f[rundir.SummaryFile]), &js); err != nil || js.Run.DiskLow == nil || js.Run.DiskLow.Free != 200<<20 {
		t.Errorf("summary.json run.disk_low %+v (%v)", js.Run.DiskLow, err)
	}
}

// A run that sent its whole plan and whose disk ran low only in the grace
// period is incomplete too: the callbacks that came then may not have been
// written, so its delivery figures are not vouched for.
func TestDiskLowInTheGraceIsIncomplete(t *testing.T) {
	r := plannedRun(10, 10, 10, 0, 0.01)
	s, _ := build(t, r)
	requireVerdict(t, s, VerdictPass, "")
	r.meta.DiskLow = &rundir.DiskLow{At: r.meta.AttackEnd.Add(time.Second), Path: "/data/runs/x", Free: 1 << 20, Reserve: 256 << 20}
	s, _ = build(t, r)
	requireVerdict(t, s, VerdictIncomplete, "in the grace period, after the sends")
}

// TestAttackFailureIsIncomplete: a run whose attack stopped on a failure
// of msgload's own (run.json failed: an attempt it could not record) a few
// per cent short of its plan would read as a plan held, and pass; the
// failure makes it incomplete, the environment's, with its cause, and the
// count short is not told again as a load not held.
func TestAttackFailureIsIncomplete(t *testing.T) {
	r := plannedRun(100, 10, 97, 0, 0.01)
	s, _ := build(t, r)
	requireVerdict(t, s, VerdictPass, "") // 3 % short: within the plan's tolerance
	r.meta.Failed = "record attempt 98: write attempts.jsonl: input/output error"
	s, f := build(t, r)
	requireVerdict(t, s, VerdictIncomplete, "on a failure of msgload's own")
	x := reasonWith(s, "on a failure of msgload's own")
	if x == nil || x.Whose != WhoseEnvironment || !strings.Contains(x.Text, "write attempts.jsonl: input/output error") {
		t.Fatalf("reasons %+v", s.Reasons)
	}
	if ExitCode(s.Verdict) == 0 {
		t.Error("a run whose attack failed exits 0")
	}
	var js struct {
		Run struct {
			Failed string `json:"failed"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(f[rundir.SummaryFile]), &js); err != nil || js.Run.Failed != r.meta.Failed {
		t.Errorf("summary.json run.failed %q (%v)", js.Run.Failed, err)
	}
	// Far short: said once, as the failure, not again as a load not held.
	r = plannedRun(100, 10, 40, 0, 0.01)
	r.meta.Failed = "build body of message 41: template: text: bad"
	if s, _ = build(t, r); s.Verdict != VerdictIncomplete || loadReason(s) != nil || reasonWith(s, "on a failure of msgload's own") == nil {
		t.Errorf("verdict %s, reasons %q", s.Verdict, s.VerdictReasons)
	}
}

// DiskSizes reads in binary units, and in bytes when the two would read the
// same: "59 GiB free, under the 59 GiB reserve" says nothing.
func TestDiskSizes(t *testing.T) {
	for _, tt := range []struct {
		free, reserve uint64
		f, r          string
	}{
		{200 << 20, 256 << 20, "200 MiB", "256 MiB"},
		{59<<30 + 1000, 59<<30 + 4000, "63,350,768,616 bytes", "63,350,771,616 bytes"},
		{1 << 20, 1 << 20, "1.0 MiB", "1.0 MiB"},
	} {
		if f, r := DiskSizes(tt.free, tt.reserve); f != tt.f || r != tt.r {
			t.Errorf("DiskSizes(%d, %d) = %q, %q; want %q, %q", tt.free, tt.reserve, f, r, tt.f, tt.r)
		}
	}
}

// A run whose embedded sink could not write some calls (run.json
// sink_write_errors) is judged by what is missing: when every accepted
// message has its final status (the senders sent them again) it passes with
// a warning; when a message has none, its callback may be one the sink
// failed, so the loss is not the service's alone — incomplete, the
// environment's, not the service's fail the threshold on lost says alone.
func TestSinkWriteErrors(t *testing.T) {
	r := plannedRun(10, 10, 10, 0, 0.01)
	r.meta.SinkWriteErrors = 2
	s, _ := build(t, r)
	requireVerdict(t, s, VerdictPass, "")
	if !strings.Contains(strings.Join(s.Warnings, "|"), "could not write 2 calls sent to it") {
		t.Errorf("warnings %q", s.Warnings)
	}
	if s.Run.SinkWriteErrors != 2 {
		t.Errorf("run.sink_write_errors %d", s.Run.SinkWriteErrors)
	}

	lost := plannedRun(10, 10, 10, 0, 0.01)
	lost.events = lost.events[:len(lost.events)-1] // the last message's callback never came
	lost.meta.Thresholds = []string{"delivery.lost == 0"}
	s, _ = build(t, lost)
	requireVerdict(t, s, verdictFail, "delivery.lost")
	if reasonWith(s, "could not write") != nil {
		t.Errorf("reasons %q: no write error, yet the sink is named", s.VerdictReasons)
	}
	lost.meta.SinkWriteErrors = 1
	s, _ = build(t, lost)
	requireVerdict(t, s, VerdictIncomplete, "the sink could not write 1 call sent to it (it answered it 500 or 503")
	if x := reasonWith(s, "1 accepted message has no final status: its callbacks may be among those calls"); x == nil || x.Whose != WhoseEnvironment {
		t.Errorf("reasons %+v", s.Reasons)
	}
	// The threshold on the loss fails, but the loss is not known to be the
	// service's: no reason of the service's says it is.
	noServiceReason(t, s, "delivery.lost == 0")
	// A threshold on a figure of the sends still judges the service.
	lost.meta.Thresholds = []string{"delivery.lost == 0", "requests.messages < 5"}
	s, _ = build(t, lost)
	if x := reasonWith(s, "threshold requests.messages < 5 does not hold"); x == nil || x.Whose != WhoseService {
		t.Errorf("reasons %+v: the sends' threshold is not the service's", s.Reasons)
	}
}

// noServiceReason checks that the failing threshold expr is said to be
// the environment's, not the service's.
func noServiceReason(t *testing.T, s *Summary, expr string) {
	t.Helper()
	x := reasonWith(s, "threshold "+expr+" does not hold")
	if x == nil || x.Whose != WhoseEnvironment || x.Verdict != VerdictIncomplete || !strings.Contains(x.Text, "so it does not judge the service") {
		t.Errorf("the failing threshold %s: reason %+v, want the environment's (the sink's log in doubt)", expr, x)
	}
	for _, r := range s.Reasons {
		if r.Whose == WhoseService {
			t.Errorf("a service reason with the sink's log in doubt and no threshold of the sends failing: %+v", r)
		}
	}
}

// What the run could not read of its standalone sink (run.json
// sink_unread) is unknown, never 0: a copy of its events that did not
// finish leaves the events after it out of every figure (incomplete, even
// with nothing lost: a duplicate or a late event may be among them); an
// unread count of write failures makes a loss possibly the sink's
// (incomplete) and is only a warning when nothing is missing.
func TestSinkUnread(t *testing.T) {
	r := plannedRun(10, 10, 10, 0, 0.01)
	r.meta.SinkUnread = &rundir.SinkUnread{WriteErrors: "at the run's end: GET /v1/stats answered 401 Unauthorized"}
	s, _ := build(t, r)
	requireVerdict(t, s, VerdictPass, "")
	if !strings.Contains(strings.Join(s.Warnings, "|"), "count of calls it could not write is unknown (at the run's end: GET /v1/stats answered 401") {
		t.Errorf("warnings %q", s.Warnings)
	}
	if s.Run.SinkUnread == nil || s.Run.SinkUnread.WriteErrors == "" {
		t.Errorf("run.sink_unread %+v", s.Run.SinkUnread)
	}

	lost := plannedRun(10, 10, 10, 0, 0.01)
	lost.events = lost.events[:len(lost.events)-1] // the last message's callback never came
	lost.meta.Thresholds = []string{"delivery.lost == 0"}
	lost.meta.SinkUnread = r.meta.SinkUnread
	s, _ = build(t, lost)
	requireVerdict(t, s, VerdictIncomplete, "count of calls it could not write is unknown")
	if x := reasonWith(s, "1 accepted message has no final status: its callbacks may be among calls the sink could not write"); x == nil || x.Whose != WhoseEnvironment {
		t.Errorf("reasons %+v", s.Reasons)
	}
	noServiceReason(t, s, "delivery.lost == 0")

	copied := plannedRun(10, 10, 10, 0, 0.01)
	copied.meta.SinkUnread = &rundir.SinkUnread{Events: "40 events copied, then: connection refused"}
	s, _ = build(t, copied)
	requireVerdict(t, s, VerdictIncomplete, "the copy of the sink's events did not finish (40 events copied")
	if x := reasonWith(s, "copy of the sink's events did not finish"); x == nil || x.Whose != WhoseEnvironment {
		t.Errorf("reasons %+v", s.Reasons)
	}
}
