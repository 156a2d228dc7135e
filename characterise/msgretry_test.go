package characterise

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
)

// msgRetryFile is a messaging characterisation file against the simulator
// with sim.messagingDedup dedup ("" for none: the seed's).
func msgRetryFile(t *testing.T, dedup string) *File {
	t.Helper()
	src := `name: mr
api: messaging
target: embedded
message:
  recipient: "+79990000001"
  text: "retry {{.Seq}}"
  scenario:
    - { channel: sms, sender: msgload }
delivery: { grace: 3s }
sim:
  seed: 3
  rateLimit: { rate: 1000/1s }
  profiles:
    sms: { median: 100ms, p95: 300ms, outcomes: { DELIVERED: 100% } }
`
	if dedup != "" {
		src += fmt.Sprintf("  messagingDedup: %q\n", dedup)
	}
	f, err := parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// msgRetryOnly runs f's messaging retry probe alone, through Run.
func msgRetryOnly(t *testing.T, f *File) *reports.Contract {
	t.Helper()
	p, err := NewPlan(f, Options{Budget: 300, MaxWindow: 4 * time.Second, MaxTime: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var keep []Probe
	for _, pr := range p.Probes {
		if pr.Name == probeMsgRetry {
			keep = append(keep, pr)
		}
	}
	if len(keep) != 1 {
		t.Fatalf("the plan's messaging retry probe: %+v", p.Probes)
	}
	p.Probes = keep
	res, err := Run(context.Background(), RunOptions{Plan: p, File: f, Harness: harness.Options{Out: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Contract
}

// The messaging retry matrix: the simulator makes every resend a new
// message (the seed's), answers it the first's txId, or refuses it 409;
// characterise says whether a resend cost a second txId and a second
// delivery. Cannot tell only when the probe's run did not hold its plan.
// compare of the first two (the knob changed) names the second txId.
func TestMsgRetryMatrix(t *testing.T) {
	t.Parallel()
	cases := []struct{ dedup, tx, delivery string }{{"", yes, yes}, {"first", no, no}, {"409", no, no}}
	cs := make([]*reports.Contract, len(cases))
	t.Run("all", func(t *testing.T) {
		for i, c := range cases {
			t.Run("dedup="+c.dedup, func(t *testing.T) {
				t.Parallel()
				cs[i] = msgRetryOnly(t, msgRetryFile(t, c.dedup))
				checkMsgRetry(t, cs[i], c.tx, c.delivery)
			})
		}
	})
	if cs[0] == nil || cs[1] == nil {
		return
	}
	named := false
	for _, c := range reports.ContractDrift(cs[0], cs[1]) {
		if c.Rule == RuleMsgSecondTx && c.Base == yes && c.New == no {
			named = true
		}
	}
	held := func(c *reports.Contract) bool {
		return c.Verdict != reports.VerdictIncomplete && c.Verdict != reports.VerdictError
	}
	if !named && held(cs[0]) && held(cs[1]) {
		t.Errorf("the drift does not name the second txId: %+v", reports.ContractDrift(cs[0], cs[1]))
	}
}

// checkMsgRetry holds con's messaging retry findings to tx and delivery.
func checkMsgRetry(t *testing.T, con *reports.Contract, tx, delivery string) {
	t.Helper()
	var text strings.Builder
	_ = con.Text(&text)
	// incomplete: the plan was not held (a busy machine); error against the
	// embedded simulator is msgload's (a probe that could not run, or a
	// measurement that disagreed with its truth): never excused
	if con.Verdict == reports.VerdictError {
		t.Errorf("the characterisation ended error: %q", con.Reasons)
	}
	held := con.Verdict != reports.VerdictIncomplete
	want := map[string]string{RuleMsgSecondTx: tx, RuleMsgSecondDelivery: delivery}
	for _, f := range con.Findings {
		w, ok := want[f.Rule]
		switch {
		case !ok:
			continue
		case f.Value == reports.CannotTell && held:
			t.Errorf("%s: cannot tell (%s), want %s\n%s", f.Rule, f.Because, w, text.String())
		case f.Value != reports.CannotTell && f.Value != w:
			t.Errorf("%s = %s, want %s: %q", f.Rule, f.Value, w, f.Evidence)
		}
		delete(want, f.Rule)
	}
	if len(want) > 0 {
		t.Errorf("no finding of %v\n%s", want, text.String())
	}
	t.Log(text.String())
}
