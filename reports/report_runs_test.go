package reports

import (
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
