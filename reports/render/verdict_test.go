package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

func TestVerdictPass(t *testing.T) {
	s, f := build(t, passingRun())
	requireVerdict(t, s, reports.VerdictPass, "")
	if len(s.VerdictReasons) != 0 || !strings.Contains(f[rundir.SummaryFile], `"verdict_reasons": []`) || !strings.Contains(f[rundir.SummaryFile], `"ok": true`) {
		t.Errorf("pass: reasons %q\n%s", s.VerdictReasons, f[rundir.SummaryFile])
	}
	if !strings.Contains(f[rundir.JUnitFile], `failures="0" errors="0"`) {
		t.Errorf("junit.xml of a pass:\n%s", f[rundir.JUnitFile])
	}
}

func TestVerdictInterrupted(t *testing.T) {
	r := passingRun()
	r.meta.Interrupted = true
	r.meta.Target = "embedded" // interrupted: truth.json is not required
	s, f := build(t, r)
	requireVerdict(t, s, reports.VerdictIncomplete, "interrupted")
	if !strings.Contains(f[rundir.SummaryFile], `"verdict": "incomplete"`) || !strings.Contains(f[rundir.SummaryFile], `"ok": false`) {
		t.Errorf("summary.json:\n%s", f[rundir.SummaryFile])
	}
	if !strings.Contains(f[rundir.HTMLFile], `<span class="v incomplete">INCOMPLETE</span>`) || !strings.Contains(f[rundir.HTMLFile], "interrupted") {
		t.Errorf("report.html does not show INCOMPLETE and why")
	}
	if !strings.Contains(f[rundir.JUnitFile], `failures="1"`) || !strings.Contains(f[rundir.JUnitFile], `<failure message="INCOMPLETE: the run was interrupted`) {
		t.Errorf("junit.xml must fail the verdict test case:\n%s", f[rundir.JUnitFile])
	}
	if !strings.HasPrefix(f["terminal"], "run test-run (hand-built, messaging): INCOMPLETE\n  ! the run was interrupted") {
		t.Errorf("terminal:\n%s", f["terminal"])
	}
	if !strings.Contains(f[rundir.MarkdownFile], ": INCOMPLETE\n\n- **environment**: the run was interrupted") {
		t.Errorf("report.md:\n%s", f[rundir.MarkdownFile])
	}
}

func TestVerdictMissingRawFiles(t *testing.T) {
	t.Run("attempts.jsonl", func(t *testing.T) {
		dir := passingRun().write(t)
		os.Remove(filepath.Join(dir, rundir.AttemptsFile))
		s, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		requireVerdict(t, s, reports.VerdictError, "attempts.jsonl is missing")
		b, _ := os.ReadFile(filepath.Join(dir, rundir.JUnitFile))
		if !strings.Contains(string(b), `<error message="ERROR: attempts.jsonl is missing`) {
			t.Errorf("junit.xml:\n%s", b)
		}
	})
	t.Run("events.jsonl with delivery via the sink", func(t *testing.T) {
		dir := passingRun().write(t)
		os.Remove(filepath.Join(dir, rundir.EventsFile))
		s, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		requireVerdict(t, s, reports.VerdictError, "events.jsonl is missing")
	})
	t.Run("truth of the embedded simulator", func(t *testing.T) {
		r := passingRun()
		r.meta.Target = "embedded"
		s, _ := build(t, r)
		requireVerdict(t, s, reports.VerdictError, "truth.jsonl is missing") // neither truth.jsonl nor truth.json
	})
	t.Run("unreadable attempts.jsonl", func(t *testing.T) {
		dir := passingRun().write(t)
		p := filepath.Join(dir, rundir.AttemptsFile)
		os.Remove(p)
		if err := os.Mkdir(p, 0o755); err != nil { // root reads any mode: a directory cannot be read as a file
			t.Fatal(err)
		}
		s, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		requireVerdict(t, s, reports.VerdictError, "attempts.jsonl cannot be read")
	})
	t.Run("polled run needs no events.jsonl", func(t *testing.T) {
		r := passingRun()
		r.meta.Delivery.Via = "poll"
		r.meta.Thresholds = nil
		dir := r.write(t)
		os.Remove(filepath.Join(dir, rundir.EventsFile))
		s, err := Build(dir)
		if err != nil {
			t.Fatal(err)
		}
		requireVerdict(t, s, reports.VerdictPass, "")
	})
}
