package reports

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// lagRun is a run on the embedded simulator (messaging, a viber → sms
// chain, deadline at 70 s) with a truth: messages 1–3 delivered on time and
// message 4's final callback started at 80 s, after the deadline, although
// the simulator meant to start it at due. The threshold delivery.lost == 0
// reads the lost message.
func lagRun(due time.Time) *run {
	r := newRun(rundir.APIMessaging)
	r.meta.Chain = []string{"viber:DELIVERED", "sms"}
	r.meta.Thresholds = []string{"delivery.lost == 0"}
	r.truth = &rundir.Truth{RateLimit: rundir.TruthRateLimit{Requests: 100, Window: rundir.Duration(time.Minute), Algorithm: "sliding"}}
	for seq := int64(1); seq <= 4; seq++ {
		sec := float64(seq)
		r.send(seq, "c1", sec, 202, 0.01)
		start, callDue := at(sec+2), at(sec+2)
		if seq == 4 {
			start, callDue = at(80), due
		}
		r.callback(seq, sec+2+0.002, "DELIVERED", "viber", true, false)
		if seq == 4 {
			r.events[len(r.events)-1].ReceivedAt = start.Add(2 * time.Millisecond)
		}
		id := "tx-" + itoa(seq)
		r.truth.Messages = append(r.truth.Messages, rundir.TruthMessage{API: rundir.APIMessaging, ID: id, ExternalID: r.meta.ID + "." + itoa(seq),
			Client: "c1", AcceptedAt: at(sec), Sends: 1, Final: "DELIVERED",
			Steps: []rundir.TruthStep{{Channel: "viber", State: "DELIVERED", Delay: rundir.Duration(start.Sub(at(sec)))}}})
		r.truth.Callbacks = append(r.truth.Callbacks, rundir.TruthCallback{ID: id, Kind: rundir.KindCallback, State: "DELIVERED", Channel: "viber",
			Action: rundir.CallbackSent, Attempt: 1, At: start, Done: start.Add(3 * time.Millisecond), Status: 200, Due: callDue})
	}
	return r
}

// lagVerdicts analyses the run in dir in one pass and in passes (the two
// truth comparisons), evaluates its thresholds, and returns both summaries.
func lagVerdicts(t *testing.T, dir string) []*Summary {
	t.Helper()
	once, err := analyzeOnce(os.DirFS(dir), dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	bounded, err := AnalyzeFS(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !twoPasses(os.DirFS(dir)) {
		t.Fatal("the run is not analysed in passes: the bounded truth comparison is not exercised")
	}
	for _, s := range []*Summary{once.s, bounded} {
		if err := s.Evaluate(s.thresholdExprs); err != nil {
			t.Fatal(err)
		}
		if s.Truth == nil || s.Truth.Agrees == nil || !*s.Truth.Agrees {
			t.Fatalf("the truth is not compared or disagrees: %+v", s.Truth)
		}
		if s.Delivery.Lost != 1 {
			t.Fatalf("lost %d, want 1: the figures stay what was measured", s.Delivery.Lost)
		}
	}
	return []*Summary{once.s, bounded}
}

// whoseOf lists the reasons of s by whose they are.
func whoseOf(s *Summary) map[string][]string {
	out := map[string][]string{}
	for _, r := range s.Reasons {
		out[r.Whose] = append(out[r.Whose], r.Text)
	}
	return out
}

// TestSimLagIsTheEnvironments: a message late only because the embedded
// simulator fell behind its own schedule (its final call was due by the
// deadline, 4 s after acceptance, and started 76 s late) is the machine's:
// the verdict is incomplete with an environment reason saying so, and the
// threshold delivery.lost == 0, which holds without it, blames no service —
// in the one-pass and the bounded truth comparison alike.
func TestSimLagIsTheEnvironments(t *testing.T) {
	for i, s := range lagVerdicts(t, lagRun(at(6)).write(t)) {
		if s.Verdict != VerdictIncomplete {
			t.Errorf("pass %d: verdict %s, want incomplete: %v", i, s.Verdict, s.VerdictReasons)
		}
		w := whoseOf(s)
		if len(w[WhoseService]) > 0 {
			t.Errorf("pass %d: the service is blamed for the simulator's lag: %v", i, w[WhoseService])
		}
		env := strings.Join(w[WhoseEnvironment], "\n")
		if !strings.Contains(env, "simulator fell behind its own schedule by up to "+dur(74)) || !strings.Contains(env, "1 message") {
			t.Errorf("pass %d: no environment reason naming the simulator's lag (74 s) and the message: %q", i, env)
		}
		if l := s.Truth.SimLag; l == nil || l.Messages != 1 || l.Max < 73.99 || l.Max > 74.01 {
			t.Errorf("pass %d: truth.sim_lag %+v, want 1 message, max 74 s", i, l)
		}
	}
}

// TestSimOnTimeLateIsTheServices: the same message late with the simulator
// on time (its call was due at 79.5 s, after the deadline, and started
// half a second later) is the service's: the threshold fails, a service
// reason, verdict fail.
func TestSimOnTimeLateIsTheServices(t *testing.T) {
	for i, s := range lagVerdicts(t, lagRun(at(79.5)).write(t)) {
		if s.Verdict != verdictFail || len(whoseOf(s)[WhoseService]) != 1 {
			t.Errorf("pass %d: verdict %s, reasons %v: want fail on the service's threshold", i, s.Verdict, s.VerdictReasons)
		}
		if l := s.Truth.SimLag; l == nil || l.Messages != 0 {
			t.Errorf("pass %d: truth.sim_lag %+v, want 0 messages", i, l)
		}
	}
}

// TestSimLagBoundary: a call due exactly at the deadline would have been on
// time without the lag (the environment's); one due a nanosecond after it
// would have been late anyway (the service's).
func TestSimLagBoundary(t *testing.T) {
	dl := at(70)
	for _, c := range []struct {
		due     time.Time
		verdict string
	}{{dl, VerdictIncomplete}, {dl.Add(time.Nanosecond), verdictFail}} {
		for i, s := range lagVerdicts(t, lagRun(c.due).write(t)) {
			if s.Verdict != c.verdict {
				t.Errorf("due %s, pass %d: verdict %s, want %s: %v", c.due.Format(time.RFC3339Nano), i, s.Verdict, c.verdict, s.VerdictReasons)
			}
		}
	}
}

// TestSimLagOlderTruth: a truth without the calls' due times (older runs)
// cannot tell the simulator's lag: truth.sim_lag is null, never 0, and the
// late message stays the service's.
func TestSimLagOlderTruth(t *testing.T) {
	r := lagRun(at(6))
	for i := range r.truth.Callbacks {
		r.truth.Callbacks[i].Due = time.Time{}
	}
	for i, s := range lagVerdicts(t, r.write(t)) {
		if s.Truth.SimLag != nil || s.Verdict != verdictFail {
			t.Errorf("pass %d: sim_lag %+v, verdict %s: want null and fail", i, s.Truth.SimLag, s.Verdict)
		}
	}
}

// pendingRun is lagRun with message 4 never called back: the simulator
// closed with it in flight, its next step due at pending.
func pendingRun(pending time.Time) *run {
	r := lagRun(at(6))
	r.events = r.events[:3]
	r.truth.Callbacks = r.truth.Callbacks[:3]
	m := &r.truth.Messages[3]
	m.Steps, m.Final, m.Pending = nil, "", pending
	return r
}

// TestSimLagPendingAtClose: a message with no call at all, still in flight
// when the simulator closed with its next step due by the deadline, is the
// environment's (the simulator had fallen so far behind it never got its
// turn); with its next step due after the deadline it is the service's (it
// drew the message late) — the boundary at the deadline, in both truth
// comparisons.
func TestSimLagPendingAtClose(t *testing.T) {
	dl := at(70)
	for _, c := range []struct {
		pending time.Time
		verdict string
	}{{at(6), VerdictIncomplete}, {dl, VerdictIncomplete}, {dl.Add(time.Nanosecond), verdictFail}} {
		for i, s := range lagVerdicts(t, pendingRun(c.pending).write(t)) {
			if s.Verdict != c.verdict {
				t.Errorf("pending %s, pass %d: verdict %s, want %s: %v", c.pending.Format(time.RFC3339Nano), i, s.Verdict, c.verdict, s.VerdictReasons)
			}
			if l := s.Truth.SimLag; l == nil || l.Messages != map[bool]int64{true: 1, false: 0}[c.verdict == VerdictIncomplete] {
				t.Errorf("pending %s, pass %d: truth.sim_lag %+v", c.pending.Format(time.RFC3339Nano), i, l)
			}
		}
	}
}

// TestSimLagDeliveryLatencyThreshold: a latency threshold that has only a
// lower bound because the lagged message is censored at the deadline (what
// failed the built-in soak on a busy CI machine, blaming the service) reads
// figures the simulator's lag changed: the environment's, verdict
// incomplete, no service blamed. The same message late with the simulator
// on time leaves it the service's.
func TestSimLagDeliveryLatencyThreshold(t *testing.T) {
	for _, c := range []struct {
		due     time.Time
		verdict string
		service int
	}{{at(6), VerdictIncomplete, 0}, {at(79.5), verdictFail, 2}} {
		r := lagRun(c.due)
		r.meta.Thresholds = []string{"delivery.lost == 0", "delivery.latency.p95 < 30"}
		for i, s := range lagVerdicts(t, r.write(t)) {
			if len(s.Thresholds) != 2 || s.Thresholds[1].OK {
				t.Fatalf("pass %d: thresholds %+v, want the latency one failing", i, s.Thresholds)
			}
			if w := whoseOf(s); s.Verdict != c.verdict || len(w[WhoseService]) != c.service {
				t.Errorf("due %s, pass %d: verdict %s, service reasons %q; want %s and %d", c.due.Format(time.RFC3339), i, s.Verdict, w[WhoseService], c.verdict, c.service)
			}
			for _, r := range s.Reasons {
				if (r.Whose == WhoseEnvironment) != (r.Limit == LimitSimLag) {
					t.Errorf("pass %d: reason %q (%s) has limit %q: the lag's reasons, and only they, say %s", i, r.Text, r.Whose, r.Limit, LimitSimLag)
				}
			}
		}
	}
}
