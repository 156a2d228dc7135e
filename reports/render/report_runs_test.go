package render

import (
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// The outcome figures and sentences, without a browser.
func TestReportOutcomes(t *testing.T) {
	for _, tc := range reportCases {
		t.Run(tc.name, func(t *testing.T) {
			s, f := build(t, tc.run())
			if got := (view{s}).outcomeLines(); strings.Join(got, "\n") != strings.Join(tc.outcome, "\n") {
				t.Errorf("outcome %q, want %q", got, tc.outcome)
			}
			got := map[string]string{}
			for _, k := range (view{s}).outcomeCounts() {
				got[k.name] = k.value
			}
			for k, v := range tc.counts {
				if got[k] != v {
					t.Errorf("%s = %s, want %s", k, got[k], v)
				}
			}
			for _, l := range tc.outcome {
				for _, file := range []string{"terminal", rundir.MarkdownFile} {
					if !strings.Contains(f[file], l) {
						t.Errorf("%s does not say %q", file, l)
					}
				}
			}
			var ids []string
			for _, c := range (view{s}).chartsHTML("") {
				id, _, _ := strings.Cut(strings.TrimPrefix(string(c), `<figure class="chart" id="`), `"`)
				ids = append(ids, id)
			}
			if strings.Join(ids, " ") != strings.Join(tc.charts, " ") {
				t.Errorf("charts %v, want %v", ids, tc.charts)
			}
		})
	}
}

// Gave up after retries is judged as the attacker judges a retry: a timeout
// (no answer, unknown outcome) is retried under "timeout", a refused
// connection (no answer, failed) is not; and only with every retry used.
func TestGaveUpAfterRetries(t *testing.T) {
	r := newRun(rundir.APINotify)
	r.meta.Target = "http://127.0.0.1:9"
	r.meta.Retry = rundir.Retry{On: []string{"503", "timeout"}, Max: 2}
	tries := func(seq int64, codes ...int) {
		for i, c := range codes {
			a := r.send(seq, "c1", float64(seq)+0.5*float64(i), c, 0.01)
			a.Attempt, a.FirstSent = i+1, at(float64(seq))
		}
	}
	tries(1, 503, 503, 503) // gave up
	tries(2, 0, 0, 0)       // timeouts: gave up
	tries(3, 503, 0, 503)   // gave up
	tries(4, 503, 503)      // the run ended before the last retry: not given up
	tries(5, 400)           // not retryable
	tries(6, 503, 200)      // accepted on a retry
	a := r.send(7, "c1", 7, 0, 0.01)
	a.Outcome, a.Class = rundir.OutcomeFail, "conn" // connection refused: not retried
	s, _ := build(t, r)
	o := s.Outcomes
	if o.NotAccepted != 6 || o.GaveUp != 3 || o.Accepted != 1 {
		t.Errorf("not accepted %d gave up %d accepted %d, want 6, 3, 1", o.NotAccepted, o.GaveUp, o.Accepted)
	}
	want := map[string]int64{"5xx": 1, "4xx": 1, "no answer": 1}
	for k, v := range want {
		if o.Refused[k] != v {
			t.Errorf("not accepted by %s = %d, want %d (%v)", k, o.Refused[k], v, o.Refused)
		}
	}
	if got := (view{s}).outcomeLines()[1]; got != "6 of 7 notifications were not accepted: 3 gave up after 2 retries, 1 answered 4xx, 1 answered 5xx, 1 got no answer." {
		t.Errorf("outcome %q", got)
	}
}
