package harness

import (
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
)

// censorSource: deliveries take a median of 20 s (a few draw under the 3 s
// grace), the run waits 3 s after a 2 s attack: most accepted messages have
// no final status by the deadline.
const censorSource = `
name: censor
api: messaging
target: embedded
sink: embedded
load: { profile: constant, rate: 20/s, requests: 40 }
message:
  recipient: "+7999{0000000-0000999}"
  text: "censor {{.Seq}}"
  scenario: [ { channel: sms, sender: msgload } ]
delivery: { via: sink, grace: 3s }
sim:
  seed: 21
  profiles: { sms: { median: 20s, p95: 100s, outcomes: { DELIVERED: 100% } } }
thresholds: [ "delivery.latency.p95 < 10s" ]
`

// Issue 21, case 1, end to end against the embedded simulator: with a
// delivery median far past the grace, delivery.latency.p95 < 10s fails on a
// lower bound — never passes on the few that arrived — and the truth,
// computed by the same censored rule, agrees. Whatever the machine managed
// to send: the figures are asserted against what the run says it did.
func TestCensoredLatencyEndToEnd(t *testing.T) {
	p, stderr := runSource(t, "censor.yaml", t.TempDir(), censorSource)
	s := p.Summary
	if p.Err != nil || s == nil {
		t.Fatalf("run: %v\n%s", p.Err, stderr)
	}
	var b strings.Builder
	render.Terminal(&b, s)
	if s.Verdict == reports.VerdictPass {
		t.Fatalf("PASS with most messages undelivered:\n%s", b.String())
	}
	l := s.Delivery.Latency
	if s.Requests.Accepted == 0 || l.Count != s.Requests.Accepted {
		t.Fatalf("delivery.latency over %d messages, %d accepted: want every accepted one\n%s", l.Count, s.Requests.Accepted, b.String())
	}
	if l.Censored != s.Delivery.Lost {
		t.Errorf("censored %d, lost %d: every message without a final status by the deadline is censored\n%s", l.Censored, s.Delivery.Lost, b.String())
	}
	// Most are censored (the median is 20 s): the p95's rank falls among
	// them whatever the draws; when it does, the threshold fails on the bound.
	if l.Censored*20 > l.Count { // more than 5 % censored
		if l.P95AtLeast == nil || *l.P95AtLeast < 3 {
			t.Errorf("p95 %v, at least %v: want a lower bound of at least the grace\n%s", l.P95, l.P95AtLeast, b.String())
		}
		if th := s.Thresholds[0]; th.OK || !strings.Contains(th.Error, "only a lower bound: delivery.latency.p95 is at least") {
			t.Errorf("threshold %+v: want it failed on the lower bound\n%s", th, b.String())
		}
	} else {
		t.Logf("only %d of %d censored: the draws were fast", l.Censored, l.Count)
	}
	t.Logf("\n%s", b.String())
	if tr := s.Truth; tr == nil || tr.Agrees == nil || !*tr.Agrees {
		t.Errorf("truth: %+v, want agreement by the same censored rule\n%s", tr, b.String())
	} else if tr.TrueLatency.Censored == 0 && l.Censored > 0 {
		t.Errorf("true latency %+v: want the truth censored as the measurement is", tr.TrueLatency)
	}
}
