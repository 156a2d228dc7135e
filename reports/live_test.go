package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// The "can no longer pass" rule: an upper bound on a count that only grows
// is final once it fails; any other figure may recover (k6's rule: it fails
// when it fails now); a figure only the run's end settles is refused.
func TestLiveThresholdRule(t *testing.T) {
	for _, tt := range []struct {
		src   string
		final bool
	}{
		{"idempotency.mismatches == 0", true},
		{`requests.codes["500"] < 10`, true},
		{"0 == delivery.duplicates", true},
		{"5 > idempotency.id_collisions", true},
		{"rate_limit.rejected_429 <= 3", true},
		{"requests.error_rate < 0.01", false},   // a share: recovers as sends succeed
		{"requests.latency.p95 < 200ms", false}, // a percentile recovers
		{"requests.total > 10", false},          // a lower bound on a growing count: it may yet hold
		{"idempotency.mismatches >= 0", false},
		{"idempotency.mismatches == 0 && requests.error_rate < 0.5", false}, // not one comparison
		{"rate_limit.excess_accepted == 0", false},                          // not in the list of growing counts: judged now
	} {
		l, err := CompileLive(tt.src, "sink")
		if err != nil {
			t.Errorf("%s: %v", tt.src, err)
			continue
		}
		if l.Final() != tt.final {
			t.Errorf("%s: final %v, want %v", tt.src, l.Final(), tt.final)
		}
	}
	for _, src := range []string{"delivery.lost == 0", "delivery.latency.p95 < 1s", "outcomes.delivered > 0", "idempotency.duplicate_deliveries == 0", "truth.messages > 0", "run.attack_duration > 1", "requests.bad_lines == 0"} {
		if _, err := CompileLive(src, "sink"); err == nil || !strings.Contains(err.Error(), "cannot be judged live") {
			t.Errorf("%s: %v, want refused as not known live", src, err)
		}
	}
	if _, err := CompileLive("delivery.duplicates == 0", "none"); err == nil {
		t.Error("a delivery figure with delivery: none was accepted")
	}
}

// Judge: a growing count over its bound fails for good; a share over its
// bound fails now; a figure with no data is not judged.
func TestLiveJudge(t *testing.T) {
	judge := func(src string, s *Summary) LiveState {
		t.Helper()
		l, err := CompileLive(src, "sink")
		if err != nil {
			t.Fatal(err)
		}
		return l.Judge(s)
	}
	s := &Summary{Summary: summary.Summary{Delivery: Delivery{Via: "sink", Measured: true}, Requests: Requests{Codes: map[string]int64{"200": 5}}}}
	if st := judge("requests.error_rate < 0.01", s); st.Known {
		t.Errorf("error rate with no request judged: %+v", st)
	}
	if st := judge(`requests.codes["500"] == 0`, s); !st.Known || !st.OK {
		t.Errorf("a code not seen yet is a count of 0: %+v", st)
	}
	if st := judge("idempotency.mismatches == 0", s); st.Known || !strings.Contains(st.Why, "no resend was answered with an id to compare") {
		t.Errorf("nothing compared yet, judged: %+v", st)
	}
	s.Idempotency.Compared = 3
	if st := judge("idempotency.mismatches == 0", s); !st.Known || !st.OK || st.Final {
		t.Errorf("no mismatch: %+v", st)
	}
	s.Idempotency.Mismatches = 2
	s.Requests.Total, s.Requests.ErrorRate = 10, 0.5
	s.Requests.Codes["500"] = 5
	if st := judge("idempotency.mismatches == 0", s); !st.Known || st.OK || !st.Final || st.Value != 2 {
		t.Errorf("two mismatches: %+v, want failing for good with value 2", st)
	}
	if st := judge(`requests.codes["500"] == 0`, s); !st.Known || st.OK || !st.Final {
		t.Errorf("500s: %+v", st)
	}
	er := judge("requests.error_rate < 0.01", s)
	if !er.Known || er.OK || er.Final || er.Value != 0.5 {
		t.Errorf("error rate 0.5: %+v, want failing now, not for good", er)
	}
	ok := judge("requests.total > 1", s)
	if got := LiveLine([]LiveState{ok}); got != "thresholds ok" {
		t.Errorf("live line %q", got)
	}
	if got := LiveLine([]LiveState{ok, er}); got != "requests.error_rate < 0.01 FAILING" {
		t.Errorf("live line %q", got)
	}
	if got := LiveLine([]LiveState{ok, {Expr: "x"}}); got != "thresholds …" {
		t.Errorf("live line %q", got)
	}
}

// A run an abortOnFail threshold stopped ends fail with the reason saying
// which threshold and when; that it sent a tenth of its plan is not a load
// reason (it was stopped on purpose).
func TestAbortedRunFails(t *testing.T) {
	r := plannedRun(100, 10, 10, 0, 0.01)
	r.meta.Thresholds = nil
	r.meta.Aborted = &rundir.Abort{Threshold: "idempotency.mismatches == 0", At: t0.Add(1500 * time.Millisecond), Value: 3, Final: true}
	s, f := build(t, r)
	requireVerdict(t, s, verdictFail, "aborted at 2026")
	x := reasonWith(s, "by the abortOnFail threshold idempotency.mismatches == 0")
	if x == nil || x.Whose != WhoseService || !strings.Contains(x.Text, "(1.50s after the start)") || !strings.Contains(x.Text, "value 3") || !strings.Contains(x.Text, "could no longer pass") {
		t.Fatalf("reasons %+v", s.Reasons)
	}
	if loadReason(s) != nil || ExitCode(s.Verdict) != 1 {
		t.Errorf("verdict %s, reasons %+v: an aborted run is fail (exit 1), not incomplete", s.Verdict, s.Reasons)
	}
	if s.Run.Aborted == nil || !strings.Contains(f[rundir.SummaryFile], `"aborted"`) {
		t.Error("summary.json does not say the run was aborted")
	}
}

// A checkpoint: summary.json of a run still going is partial, incomplete
// with the reason, and has the figures so far; the run's end (Build)
// rewrites it whole.
func TestWriteCheckpoint(t *testing.T) {
	r := plannedRun(100, 10, 40, 0, 0.01)
	r.meta.AttackEnd, r.meta.End = time.Time{}, time.Time{}
	dir := r.write(t)
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	js, err := s.PartialJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCheckpoint(dir, js); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Partial  bool     `json:"partial"`
		Verdict  string   `json:"verdict"`
		Reasons  []string `json:"verdict_reasons"`
		Requests struct {
			Messages int64 `json:"messages"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !got.Partial || got.Verdict != VerdictIncomplete || got.Requests.Messages != 40 {
		t.Fatalf("checkpoint %s", b)
	}
	if !strings.Contains(strings.Join(got.Reasons, "|"), "partial: the run is still going") || strings.Contains(strings.Join(got.Reasons, "|"), "run.json has no end") {
		t.Errorf("reasons %q", got.Reasons)
	}
	// The final build is whole: not partial.
	r.meta.AttackEnd, r.meta.End = at(4), at(5)
	writeJSON(t, filepath.Join(dir, rundir.MetaFile), r.meta)
	if _, err := conclude(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, rundir.SummaryFile)); strings.Contains(string(b), `"partial"`) {
		t.Errorf("the final summary.json is marked partial")
	}
}

// What stopped a shard's sends stops the merged run too: the merge carries
// the first abort (an abortOnFail threshold: fail), the first disk_low (its
// disk ran low: incomplete) and the first sink_unread (its sink's events not
// all copied: incomplete) into the merged run.json, and the verdict says so.
func TestMergeKeepsWhatStoppedAShard(t *testing.T) {
	for _, tt := range []struct {
		name    string
		stop    func(m *rundir.Meta, dir string)
		stopped func(s *Summary) bool
		verdict string
		reason  string
	}{
		{"abort", func(m *rundir.Meta, _ string) {
			m.Aborted = &rundir.Abort{Threshold: "idempotency.mismatches == 0", At: t0.Add(30 * time.Second), Value: 1, Final: true}
		}, func(s *Summary) bool { return s.Run.Aborted != nil }, verdictFail, "by the abortOnFail threshold idempotency.mismatches == 0"},
		{"disk", func(m *rundir.Meta, dir string) {
			m.DiskLow = &rundir.DiskLow{At: t0.Add(30 * time.Second), Path: dir, Free: 1 << 20, Reserve: 256 << 20}
		}, func(s *Summary) bool { return s.Run.DiskLow != nil }, VerdictIncomplete, "the run's disk ran low"},
		{"sink unread", func(m *rundir.Meta, _ string) {
			m.SinkUnread = &rundir.SinkUnread{Events: "12 events copied, then: connection reset by peer"}
		}, func(s *Summary) bool { return s.Run.SinkUnread != nil }, VerdictIncomplete, "the copy of the sink's events did not finish (12 events copied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dirs, _, _ := shardedRun(t)
			p := filepath.Join(dirs[1], rundir.MetaFile)
			var m rundir.Meta
			b, err := os.ReadFile(p)
			if err == nil {
				err = json.Unmarshal(b, &m)
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.stop(&m, dirs[1])
			writeJSON(t, p, m)
			s, err := Merge(filepath.Join(t.TempDir(), "merged"), dirs, MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !tt.stopped(s) || s.Verdict != tt.verdict || reasonWith(s, tt.reason) == nil {
				t.Errorf("merged: run %+v, verdict %s, reasons %q", s.Run, s.Verdict, s.VerdictReasons)
			}
		})
	}
}
