package reports

import (
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
