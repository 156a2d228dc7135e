package harness

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// failingRecorder records as its recorder does until after attempts,
// then fails every Record: a disk under attempts.jsonl that began to fail.
type failingRecorder struct {
	attack.Recorder
	after int64
	n     atomic.Int64
}

var errInjected = errors.New("write attempts.jsonl: input/output error (injected)")

func (f *failingRecorder) Record(a *rundir.Attempt, r *vegeta.Result) error {
	if f.n.Add(1) > f.after {
		return errInjected
	}
	return f.Recorder.Record(a, r)
}

// TestAttackFailureEndsIncomplete: an attack that stops on a failure of
// msgload's own a few messages short of its plan (an attempt it could not
// record) is never a pass: run.json says why (failed), and the verdict is
// incomplete with that cause — it was told on stderr alone before, and 97 %
// of a duration plan sent read as a plan held (reports'
// TestAttackFailureIsIncomplete). A count plan here: its attacker makes the
// 98th attempt however slow the machine.
func TestAttackFailureEndsIncomplete(t *testing.T) {
	src := `name: failing
api: messaging
target: embedded
sink: embedded
load: { rate: 50/s, requests: 100 }
message: { recipient: "+79990000001", text: "x {{.Seq}}", scenario: [ { channel: sms, sender: msgload } ] }
delivery: { via: none }
`
	p, stderr := runSource(t, "failing.yaml", t.TempDir(), src, func(o *Options) {
		o.RecordWrap = func(r attack.Recorder) attack.Recorder { return &failingRecorder{Recorder: r, after: 97} }
	})
	if p.Err != nil || p.Summary == nil {
		t.Fatalf("run: %v\n%s", p.Err, stderr)
	}
	var meta rundir.Meta
	if b, err := os.ReadFile(filepath.Join(p.Dir, rundir.MetaFile)); err != nil || json.Unmarshal(b, &meta) != nil {
		t.Fatalf("run.json: %v", err)
	}
	if !strings.Contains(meta.Failed, errInjected.Error()) {
		t.Fatalf("run.json failed %q, want the recorder's error", meta.Failed)
	}
	if p.Summary.Verdict != reports.VerdictIncomplete || !strings.Contains(strings.Join(p.Summary.VerdictReasons, "; "), "failure of msgload's own") {
		t.Fatalf("verdict %s, reasons %q: want incomplete, the attack's failure", p.Summary.Verdict, p.Summary.VerdictReasons)
	}
	// msgload report of the directory says the same.
	again, err := reports.Analyze(p.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if again.Verdict != reports.VerdictIncomplete || again.Run.Failed != meta.Failed {
		t.Errorf("report: verdict %s, run.failed %q", again.Verdict, again.Run.Failed)
	}
}
