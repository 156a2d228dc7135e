package render

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// The hand-built runs and checks the writers' tests share with the
// analysis's (copies of reports' test helpers: a test package cannot
// import another's tests).

// build runs Build on a hand-built run and returns the summary and the files.
func build(t *testing.T, r *run) (*reports.Summary, map[string]string) {
	t.Helper()
	return buildDir(t, r.write(t))
}

// buildDir is build of a run directory already written.
func buildDir(t *testing.T, dir string) (*reports.Summary, map[string]string) {
	t.Helper()
	s, err := Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range []string{rundir.SummaryFile, rundir.HTMLFile, rundir.MarkdownFile, rundir.JUnitFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		files[f] = string(b)
	}
	var term bytes.Buffer
	Terminal(&term, s)
	files["terminal"] = term.String()
	return s, files
}

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

func requireVerdict(t *testing.T, s *reports.Summary, verdict, reason string) {
	t.Helper()
	if s.Verdict != verdict || s.OK() != (verdict == reports.VerdictPass) || s.Passed != s.OK() {
		t.Errorf("verdict %q (ok %v), want %q; reasons %q", s.Verdict, s.Passed, verdict, s.VerdictReasons)
	}
	if reason != "" && !slices.ContainsFunc(s.VerdictReasons, func(r string) bool { return strings.Contains(r, reason) }) {
		t.Errorf("reasons %q lack %q", s.VerdictReasons, reason)
	}
}

// jsonAt reads a path of summary.json as decoded JSON (nil for null).
func jsonAt(t *testing.T, js string, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%v: not an object at %q", path, k)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("%v: no key %q", path, k)
		}
	}
	return v
}

func threshold(t *testing.T, s *reports.Summary, expr string) summary.Threshold {
	t.Helper()
	for _, th := range s.Thresholds {
		if th.Expr == expr {
			return th
		}
	}
	t.Fatalf("no threshold %q in %+v", expr, s.Thresholds)
	return summary.Threshold{}
}

func requireNoData(t *testing.T, s *reports.Summary, expr string) {
	t.Helper()
	th := threshold(t, s, expr)
	if th.OK || len(th.NoData) == 0 || !strings.HasPrefix(th.Error, "no data") {
		t.Errorf("%q: %+v, want a failure for no data", expr, th)
	}
}

// opsRun is a run whose requests meet several errors: sends answered 503 or
// timing out on different ports, status checks answered 404, a token 500.
func opsRun() *run {
	r := passingRun()
	r.send(2, "c1", 2, 503, 0.02).Error = "503 Service Unavailable"
	r.send(3, "c1", 3, 0, 0.5).Error = "dial tcp 127.0.0.1:40001: i/o timeout"
	r.send(4, "c1", 4, 0, 0.5).Error = "dial tcp 127.0.0.1:40999: i/o timeout"
	for i, code := range []int{404, 404, 200} {
		a := rundir.Attempt{Op: "check_status", API: r.meta.API, Client: "c1", Sent: at(5 + float64(i)), Code: code, Latency: 0.01, Class: rundir.ClassOK}
		if code != 200 {
			a.Outcome, a.Class = rundir.Classify(code, nil)
			a.Error = "404 Not Found"
		}
		r.attempts = append(r.attempts, a)
	}
	r.attempts = append(r.attempts, rundir.Attempt{Op: "token", API: r.meta.API, Client: "c1", Sent: at(9), Code: 500, Latency: 0.03, Class: rundir.ClassHTTP5xx, Error: "500 Internal Server Error"})
	return r
}

// deliveryRun is a messaging run whose delivery figures are known by construction.
func deliveryRun() *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Thresholds = []string{"delivery.latency.p95 < 30s", "delivery.lost / delivery.expected < 1%", `requests.codes["429"] == 0`}
	r.send(1, "c1", 1, 200, 0.010)      // delivered after 2 s
	r.send(2, "c1", 2, 200, 0.020)      // SEEN arrives before DELIVERED: final SEEN, latency to the first terminal
	r.send(3, "c1", 3, 200, 0.030)      // no callback at all: lost
	r.send(4, "c1", 4, 200, 0.040)      // terminal only after the grace period: lost and late
	r.send(5, "c1", 5, 500, 0.050)      // refused: not expected
	r.send(6, "c1", 6, 200, 0.060)      // the same callback twice: one duplicate, not a second delivery
	r.send(7, "c1", 7, 0, 5.0)          // timed out; a retry is accepted
	a := r.send(7, "c1", 9, 200, 0.010) // the retry
	a.Attempt, a.FirstSent = 2, at(7)
	r.callback(1, 3, "DELIVERED", "sms", true, false)
	r.callback(2, 5, "SEEN", "sms", true, false)
	r.callback(2, 6, "DELIVERED", "sms", true, false)
	r.callback(4, 75, "DELIVERED", "sms", true, false) // deadline is 60 s + 10 s
	r.callback(6, 7, "DELIVERED", "sms", true, false)
	r.callback(6, 8, "DELIVERED", "sms", true, true)
	r.callback(7, 17, "DELIVERED", "sms", true, false) // 10 s from the FIRST attempt
	r.send(8, "c1", 8, 0, 5.0)                         // timed out, never retried, yet the service sent it
	r.callback(8, 12, "DELIVERED", "sms", true, false)
	// Message 10: the service processed the first attempt but the answer was
	// lost (tx-10a); the retry made a second message (tx-10b); both were
	// delivered: one duplicate delivery, no duplicate callback.
	r.send(10, "c1", 9, 0, 5.0)
	a = r.send(10, "c1", 15, 200, 0.010)
	a.Attempt, a.FirstSent, a.TxID = 2, at(9), "tx-10b"
	r.callback(10, 12, "DELIVERED", "sms", true, false)
	r.events[len(r.events)-1].Corr.Key = "tx-10a"
	r.callback(10, 17, "DELIVERED", "sms", true, false)
	r.events[len(r.events)-1].Corr.Key = "tx-10b"
	r.events = append(r.events,
		rundir.Event{Kind: rundir.KindMalformed, Route: "/callback", ReceivedAt: at(10), Reason: "state: not in enum"},
		rundir.Event{Kind: rundir.KindCallback, Route: "/callback", ReceivedAt: at(11), Corr: &rundir.Correlation{Key: "other", Matched: false}})
	return r
}

// driftRun is a run of minutes at 4 messages a second whose request latency
// is reqAt(sec), each delivered by its callback delAt(sec) after its send,
// and every errEvery-th answered 500 (none when 0).
func driftRun(minutes int, reqAt, delAt func(sec float64) float64, errEvery int) *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8080" // no simulator: no truth to require
	d := time.Duration(minutes) * time.Minute
	r.meta.AttackEnd, r.meta.End = t0.Add(d), t0.Add(d+10*time.Second)
	r.meta.Planned.Duration = rundir.Duration(d)
	r.meta.Limit = rundir.Limit{}
	n := minutes * 60 * 4
	for i := range n {
		sec := float64(i) / 4
		seq := int64(i + 1)
		code := 200
		if errEvery > 0 && i%errEvery == 0 {
			code = 500
		}
		r.send(seq, "c1", sec, code, reqAt(sec))
		if code == 200 {
			r.callback(seq, sec+delAt(sec), rundir.StateDelivered, "sms", true, false)
		}
	}
	return r
}

// within reports whether got is want within tol of want (relative).
func within(got *float64, want, tol float64) bool {
	return got != nil && math.Abs(*got-want) <= tol*math.Abs(want)
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// noneRun is what BenchmarkRunVersusVegeta's scenario leaves: n messaging sends
// at 5000/s from one client, every one accepted at once, delivery: none.
func noneRun(n int) *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8081"
	r.meta.Clients = []string{"bench"}
	r.meta.Limit = rundir.Limit{}
	r.meta.Delivery = rundir.Delivery{Via: "none"}
	r.meta.Chain = []string{"sms"}
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: 5000, Requests: int64(n), Duration: rundir.Duration(time.Duration(n) * time.Second / 5000)}
	r.meta.AttackEnd = at(float64(n) / 5000)
	r.meta.End = r.meta.AttackEnd
	for i := 1; i <= n; i++ {
		a := r.send(int64(i), "bench", float64(i)/5000, 200, 0.0003+float64(i%97)/1e5)
		a.Sent = a.Sent.Add(time.Duration(i%13) * 17 * time.Microsecond)
		a.FirstSent = a.Sent
		a.State, a.Channel, a.BytesOut, a.BytesIn = "ACCEPTED", "sms", 265, 101
	}
	return r
}

// plannedRun is a complete run against a service elsewhere that planned
// planned messages at rate a second and sent n of them, each sent late by lag
// from its planned time (hit i due at i / rate), every one delivered.
func plannedRun(planned int64, rate float64, n int, lag, latency float64) *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8080"
	r.ownPlan = true
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: rate, Requests: planned, Duration: rundir.Duration(time.Duration(float64(planned) / rate * float64(time.Second)))}
	for i := 1; i <= n; i++ {
		due := float64(i) / rate
		a := r.send(int64(i), "c1", due+lag*float64(i)/float64(n), 200, latency)
		a.Intended = at(due)
		r.callback(int64(i), due+lag+latency+1, "DELIVERED", "sms", true, false)
	}
	return r
}

// loadReason is s's reason that the load was not held, or nil.
func loadReason(s *reports.Summary) *reports.Reason { return reasonWith(s, "the load was not held") }

func mustRemove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// survivorRun is issue 21's first case by construction: 40 messages accepted
// in a burst (one every 100 ms from 0 s), the attack over at 4 s, a grace of
// 5 s (deadline 9 s); the first two are delivered in 4.48 s and 4.58 s, the
// other 38 have no final status by the deadline (their callbacks would come
// some 20 s after the send, after the run).
func survivorRun() *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Target = "http://127.0.0.1:8080" // no truth.json to require
	r.meta.AttackEnd, r.meta.End = at(4), at(9)
	r.meta.Delivery.Grace = rundir.Duration(5 * time.Second)
	r.meta.Planned = rundir.Plan{Profile: "constant", Rate: 10, Requests: 40, Duration: rundir.Duration(4 * time.Second)}
	r.meta.Thresholds = []string{"delivery.latency.p95 < 10s"}
	for i := range 40 {
		r.send(int64(i+1), "c1", 0.1*float64(i), 200, 0.01)
	}
	r.callback(1, 4.48, "DELIVERED", "sms", true, false)
	r.callback(2, 0.1+4.48+0.1, "DELIVERED", "sms", true, false)
	return r
}

// censoredBound is the lower bound of the nearest-rank percentile q over the
// delivered latencies and the censored messages' waits, computed here from
// the definition (reports/README.md): the rank-th of both merged.
func censoredBound(delivered, waited []float64, q float64) float64 {
	all := slices.Sorted(slices.Values(append(slices.Clone(delivered), waited...)))
	r := int(math.Ceil(q * float64(len(all)) / 100))
	return all[r-1]
}

// compileSummarySchema compiles the shipped summary.schema.json.
func compileSummarySchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(reports.SummarySchemaJSON))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(reports.SummarySchemaID, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(reports.SummarySchemaID)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// validateSummary checks one summary.json against the shipped schema.
func validateSummary(t *testing.T, sch *jsonschema.Schema, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s does not validate against summary.schema.json: %v", path, err)
	}
}

// parseSummary reads a summary.json body back as reports.ReadSummary reads
// the file.
func parseSummary(b []byte) (*reports.Summary, error) {
	f, err := os.CreateTemp("", "summary-*.json")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return reports.ReadSummary(f.Name())
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

// describe fills the run.json fields the report's header shows.
func (r *run) describe(scenario, desc string) {
	r.meta.Scenario, r.meta.Description = scenario, desc
	r.meta.Target = "https://" + r.meta.API + ".staging.example.test" // a real service: no truth.json to require
	r.meta.Version, r.meta.Commit, r.meta.CommitTime, r.meta.Host = "v1.4.0", "0123456789abcdef0123456789abcdef01234567", "2026-11-22T18:00:00Z", "loadgen-1"
}

// reasonWith is the first of s's reasons whose text has sub, or nil.
func reasonWith(s *reports.Summary, sub string) *reports.Reason {
	for i := range s.Reasons {
		if strings.Contains(s.Reasons[i].Text, sub) {
			return &s.Reasons[i]
		}
	}
	return nil
}

// ts is a time as summary.json writes it (reports' ts): RFC 3339 in UTC, ""
// for none.
func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// round6 rounds as summary.json's figures are rounded (reports' round6).
func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// analyzed is reports.Analyze of dir, failing t on an error.
func analyzed(t *testing.T, dir string) *reports.Summary {
	t.Helper()
	s, err := reports.Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The load's limits a reason names (reports' limitCPU, limitStopped).
const (
	limitCPU     = "generator_cpu"
	limitStopped = "generator"
)

// kindPart is a part's summary.json kind (reports' kindPart).
const kindPart = "part"
