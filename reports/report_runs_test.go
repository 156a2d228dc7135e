package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// The runs a release manager reads, rendered by TestReportReadsInChromium and
// checked here without a browser too.

// describe fills the run.json fields the report's header shows.
func (r *run) describe(scenario, desc string) {
	r.meta.Scenario, r.meta.Description = scenario, desc
	r.meta.Target = "https://" + r.meta.API + ".staging.example.test" // a real service: no truth.json to require
	r.meta.Version, r.meta.Commit, r.meta.CommitTime, r.meta.Host = "v1.4.0", "0123456789abcdef0123456789abcdef01234567", "2026-11-22T18:00:00Z", "loadgen-1"
}

// notifyOutcomesRun: 20 notifications from two clients, well under the limit
// (no 429: no sliding-window chart), no cascade (no funnel); 17 DELIVERED,
// 1 FAILED, 2 UNDELIVERED.
func notifyOutcomesRun() *run {
	r := newRun(rundir.APINotify)
	r.describe("notify-release", "twenty notifications before the release")
	r.meta.Clients = []string{"c1", "c2"}
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: 1, Requests: 20, Duration: rundir.Duration(20 * time.Second)}
	r.meta.Limit.Mode = "respect"
	r.meta.Thresholds = []string{"delivery.latency.p95 < 5s", "delivery.lost == 0"}
	for i := int64(1); i <= 20; i++ {
		c := []string{"c1", "c2"}[i%2]
		r.send(i, c, float64(i), 200, 0.01+0.001*float64(i))
		state := "DELIVERED"
		switch i {
		case 7:
			state = "FAILED"
		case 11, 15:
			state = "UNDELIVERED"
		}
		r.callback(i, float64(i)+1+0.1*float64(i%5), state, "", true, false)
	}
	return r
}

// failoverOutcomesRun: messaging through viber with failover to sms; every
// third message's viber expires and sms takes it, one sms FAILED.
func failoverOutcomesRun() *run {
	r := newRun(rundir.APIMessaging)
	r.describe("messaging-release", "viber with failover to sms")
	r.meta.Chain = []string{"viber:DELIVERED", "sms"}
	r.meta.Limit = rundir.Limit{}
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: 1, Requests: 30, Duration: rundir.Duration(30 * time.Second)}
	r.meta.Thresholds = []string{"requests.latency.p99 < 100ms", "delivery.latency.p95 < 15s"}
	for i := int64(1); i <= 30; i++ {
		sec := float64(i)
		r.send(i, "c1", sec, 200, 0.02+0.002*float64(i%7))
		switch {
		case i == 10:
			r.mcallback(i, sec+3, "EXPIRED", "viber", false, false)
			r.mcallback(i, sec+6, "FAILED", "sms", true, true)
		case i%3 == 0:
			r.mcallback(i, sec+3, "EXPIRED", "viber", false, false)
			r.mcallback(i, sec+5+float64(i%4), "DELIVERED", "sms", true, true)
		default:
			r.mcallback(i, sec+0.5+0.1*float64(i%6), "DELIVERED", "viber", true, false)
		}
	}
	r.sortEvents()
	return r
}

// retryOutcomesRun: notifications with retries on 503 (max 3): 4 of 12 gave
// up after their retries, 3 were accepted on a retry.
func retryOutcomesRun() *run {
	r := newRun(rundir.APINotify)
	r.describe("notify-retries", "a flaky service: 503 on purpose")
	r.meta.Retry = rundir.Retry{On: []string{"500", "503", "timeout"}, Max: 3, Backoff: rundir.Duration(200 * time.Millisecond)}
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: 0.5, Requests: 12, Duration: rundir.Duration(24 * time.Second)}
	r.meta.Thresholds = []string{"delivery.latency.p95 < 3s"}
	for i := int64(1); i <= 12; i++ {
		sec := 2 * float64(i)
		tries := 1
		switch {
		case i%3 == 0: // every try refused: gives up after 3 retries
			tries = 4
		case i%4 == 1: // accepted on the second try
			tries = 2
		}
		for n := 1; n <= tries; n++ {
			code := 503
			if n == tries && i%3 != 0 {
				code = 200
			}
			a := r.send(i, "c1", sec+0.2*float64(n-1), code, 0.015)
			a.Attempt, a.FirstSent = n, at(sec)
		}
		if i%3 != 0 {
			r.callback(i, sec+1+0.1*float64(i), "DELIVERED", "", true, false)
		}
	}
	return r
}

// reportCase is what a report must show.
type reportCase struct {
	name     string
	run      func() *run
	outcome  []string // sentences of the verdict area
	counts   map[string]string
	charts   []string          // the charts that apply, in order
	bounds   map[string]string // chart id → the threshold's legend entry drawn on it
	noLegend []string          // legend entries that must not appear
}

var reportCases = []reportCase{
	{
		name: "notify", run: notifyOutcomesRun,
		outcome:  []string{"Sent 20 of 20 planned notifications (100.0 %).", "3 of 20 notifications accepted were not delivered: 1 FAILED, 2 UNDELIVERED."},
		counts:   map[string]string{"sent": "20", "accepted": "20", "delivered": "17", "not delivered": "2", "failed": "1", "expired": "0", "no final status (lost)": "0", "gave up after retries": "0"},
		charts:   []string{"chart-rate", "chart-latency", "chart-delivery", "chart-events"},
		bounds:   map[string]string{"chart-delivery": "threshold p95 < 5s"},
		noLegend: []string{"none", "channel none"},
	},
	{
		name: "messaging with failover", run: failoverOutcomesRun,
		outcome: []string{"Sent 30 of 30 planned messages (100.0 %).", "1 of 30 messages accepted was not delivered: 1 FAILED."},
		counts:  map[string]string{"sent": "30", "accepted": "30", "delivered": "29", "failed": "1", "expired": "0", "no final status (lost)": "0"},
		charts:  []string{"chart-rate", "chart-latency", "chart-delivery", "chart-events", "chart-funnel"},
		bounds:  map[string]string{"chart-latency": "threshold p99 < 100ms", "chart-delivery": "threshold p95 < 15s"},
	},
	{
		name: "retries", run: retryOutcomesRun,
		outcome: []string{"Sent 12 of 12 planned notifications (100.0 %).", "4 of 12 notifications were not accepted: 4 gave up after 3 retries.", "All 8 notifications accepted were delivered."},
		counts:  map[string]string{"sent": "12", "accepted": "8", "delivered": "8", "not accepted": "4", "gave up after retries": "4"},
		charts:  []string{"chart-rate", "chart-latency", "chart-delivery", "chart-events"},
		bounds:  map[string]string{"chart-delivery": "threshold p95 < 3s"},
	},
}

// The outcome figures and sentences, without a browser.
func TestReportOutcomes(t *testing.T) {
	for _, tc := range reportCases {
		t.Run(tc.name, func(t *testing.T) {
			s, f := build(t, tc.run())
			if got := s.outcomeLines(); strings.Join(got, "\n") != strings.Join(tc.outcome, "\n") {
				t.Errorf("outcome %q, want %q", got, tc.outcome)
			}
			got := map[string]string{}
			for _, k := range s.outcomeCounts() {
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
			for _, c := range s.chartsHTML("") {
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
	if got := s.outcomeLines()[1]; got != "6 of 7 notifications were not accepted: 3 gave up after 2 retries, 1 answered 4xx, 1 answered 5xx, 1 got no answer." {
		t.Errorf("outcome %q", got)
	}
}
