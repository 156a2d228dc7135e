package reports

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// passingRun is a complete run against a service elsewhere (no truth.json to
// require) whose one threshold holds.
func passingRun() *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8080"
	r.meta.Thresholds = []string{"delivery.lost == 0"}
	r.send(1, "c1", 1, 200, 0.01)
	r.callback(1, 2, "DELIVERED", "sms", true, false)
	return r
}

func requireVerdict(t *testing.T, s *Summary, verdict, reason string) {
	t.Helper()
	if s.Verdict != verdict || s.OK() != (verdict == VerdictPass) || s.Passed != s.OK() {
		t.Errorf("verdict %q (ok %v), want %q; reasons %q", s.Verdict, s.Passed, verdict, s.VerdictReasons)
	}
	if reason != "" && !slices.ContainsFunc(s.VerdictReasons, func(r string) bool { return strings.Contains(r, reason) }) {
		t.Errorf("reasons %q lack %q", s.VerdictReasons, reason)
	}
}

func TestVerdictPass(t *testing.T) {
	s, f := build(t, passingRun())
	requireVerdict(t, s, VerdictPass, "")
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
	requireVerdict(t, s, VerdictIncomplete, "interrupted")
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
		requireVerdict(t, s, VerdictError, "attempts.jsonl is missing")
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
		requireVerdict(t, s, VerdictError, "events.jsonl is missing")
	})
	t.Run("truth of the embedded simulator", func(t *testing.T) {
		r := passingRun()
		r.meta.Target = "embedded"
		s, _ := build(t, r)
		requireVerdict(t, s, VerdictError, "truth.jsonl is missing") // neither truth.jsonl nor truth.json
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
		requireVerdict(t, s, VerdictError, "attempts.jsonl cannot be read")
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
		requireVerdict(t, s, VerdictPass, "")
	})
}

func TestVerdictNothingSentOrAccepted(t *testing.T) {
	r := passingRun()
	r.meta.Thresholds = []string{`requests.codes["200"] == 0`}
	r.attempts, r.events = nil, nil
	s, _ := build(t, r)
	requireVerdict(t, s, verdictFail, "the run sent no message")

	r = passingRun()
	r.meta.Thresholds = []string{"delivery.lost == 0"}
	r.attempts, r.events = nil, nil
	for i := range 3 {
		r.send(int64(i+1), "c1", float64(i), 500, 0.01)
	}
	s, _ = build(t, r)
	requireVerdict(t, s, verdictFail, "none of the 3 messages sent was accepted")
	requireVerdict(t, s, verdictFail, "threshold delivery.lost == 0 has no data")

	// With no threshold at all, a run that got nothing accepted still fails.
	r.meta.Thresholds = nil
	s, _ = build(t, r)
	requireVerdict(t, s, verdictFail, "none of the 3 messages sent was accepted")
}

func TestVerdictNoDataThresholdFails(t *testing.T) {
	r := passingRun()
	r.events = nil
	r.meta.Thresholds = []string{`delivery.by_channel["sms"].p95 < 1s`}
	s, _ := build(t, r)
	requireVerdict(t, s, verdictFail, "has no data")
	// With no callback the latency is censored: a lower bound fails too.
	r.meta.Thresholds = []string{"delivery.latency.p95 < 1s"}
	s, _ = build(t, r)
	requireVerdict(t, s, verdictFail, "has only a lower bound")
}

func TestWorstVerdictAndExitCode(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
		code int
	}{
		{[]string{VerdictPass}, VerdictPass, 0},
		{[]string{VerdictPass, verdictFail}, verdictFail, 1},
		{[]string{verdictFail, VerdictIncomplete, VerdictPass}, VerdictIncomplete, 3},
		{[]string{VerdictIncomplete, VerdictError}, VerdictError, 1},
		{[]string{VerdictPass, ""}, VerdictError, 1},
		{nil, VerdictError, 1},
	} {
		if got := WorstVerdict(c.in...); got != c.want || ExitCode(got) != c.code {
			t.Errorf("WorstVerdict(%q) = %q (exit %d), want %q (exit %d)", c.in, got, ExitCode(got), c.want, c.code)
		}
	}
}

func TestParseSchema1Verdict(t *testing.T) {
	for _, c := range []struct{ js, want string }{
		{`{"schema":1,"ok":true}`, VerdictPass},
		{`{"schema":1,"ok":false}`, verdictFail},
		{`{"schema":1,"ok":true,"run":{"interrupted":true}}`, VerdictIncomplete},
	} {
		s, err := parseSummary([]byte(c.js))
		if err != nil || s.Verdict != c.want || s.OK() != (c.want == VerdictPass) {
			t.Errorf("%s: %v verdict %q ok %v, want %q", c.js, err, s.Verdict, s.OK(), c.want)
		}
	}
}
