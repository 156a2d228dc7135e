package characterise

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// idemFile is a characterisation file against the simulator with the given
// sim.idempotency and sim.faults blocks ("" for none).
func idemFile(t *testing.T, idem, faults string) *File {
	t.Helper()
	var lines string
	if idem != "" {
		lines += "  idempotency: " + idem + "\n"
	}
	if faults != "" {
		lines += "  faults: " + faults + "\n"
	}
	return simFile(t, "idem", 3, 0, "{ rate: 1000/1s }", lines)
}

// idemOnly runs f's idempotency probe alone, through Run (the rate-limit
// probes cost time and are the other tests' matter): 6 notifications, and
// the window's ladder of 1, 2 and 4 s.
func idemOnly(t *testing.T, f *File) *reports.Contract {
	t.Helper()
	p, err := NewPlan(f, Options{Budget: 6 * idemPerMsg * 10, MaxWindow: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// only the two idempotency probes (the callback probes the plan puts
	// between them have their own matrix, TestHookMatrix)
	var keep []Probe
	for _, pr := range p.Probes {
		if pr.Name == probeIdempotency || pr.Name == probeWindow {
			keep = append(keep, pr)
		}
	}
	if len(keep) != 2 || keep[0].Name != probeIdempotency {
		t.Fatalf("the plan's idempotency probes: %+v", keep)
	}
	p.Probes = keep
	res, err := Run(context.Background(), RunOptions{Plan: p, File: f, Harness: harness.Options{Out: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Contract
}

// The idempotency matrix: the simulator's answers to a duplicate in flight
// (the first result, 409) and to another body (the first result, 422, 409),
// its window, and 500s and resets after processing: characterise names
// each. A finding may be "cannot tell" (the faults drawn none to retry, a
// copy left after its first was answered on a busy machine), never wrong.
// The small matrix runs draft-07's answers; -characterise.matrix the rest.
func TestIdempotencyMatrix(t *testing.T) {
	t.Parallel()
	type tc struct {
		name, idem, faults string
		want               map[string]string
	}
	cases := []tc{{"draft-07", "{ inFlight: \"409\", changedBody: \"422\", processing: 300ms, window: 1500ms }", "",
		map[string]string{RuleInFlightOneEffect: yes, RuleInFlightAnswer: "200,409", RuleChangedBody: "422", RuleRetrySameID: yes, RuleOneDelivery: yes, RuleWindow: "1500ms"}}}
	if *wholeMatrix {
		cases = append(cases,
			tc{"seed", "{ processing: 300ms }", "",
				map[string]string{RuleInFlightOneEffect: yes, RuleInFlightAnswer: "200", RuleChangedBody: changedFirst, RuleRetrySameID: yes, RuleOneDelivery: yes}},
			tc{"changed-409", "{ changedBody: \"409\" }", "", map[string]string{RuleChangedBody: "409", RuleRetrySameID: yes}},
			tc{"faults", "", "{ processedThen500: 20%, resetAfterProcessing: 20% }",
				map[string]string{RuleRetry5xxOneEffect: yes, RuleRetryResetOne: yes}},
			tc{"short-window", "{ window: 100ms }", "{ processedThen500: 40% }",
				map[string]string{RuleRetry5xxOneEffect: no}},
			tc{"window-3s", "{ window: 3s }", "", map[string]string{RuleWindow: "3s"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			con := idemOnly(t, idemFile(t, c.idem, c.faults))
			if con.Verdict == reports.VerdictError { // msgload disagreed with the simulator's truth: a msgload bug
				t.Errorf("the probe's run ended error: %q", con.Reasons)
			}
			var text strings.Builder
			_ = con.Text(&text)
			told := 0
			for _, f := range con.Findings {
				w, ok := c.want[f.Rule]
				switch {
				case !ok:
				case f.Value == reports.CannotTell:
					t.Logf("%s: cannot tell, because %s", f.Rule, f.Because)
				case !matches(&f, w):
					t.Errorf("%s = %s, want %s: %q\n%s", f.Rule, f.Value, w, f.Evidence, text.String())
				default:
					told++
				}
			}
			// The answers to another body and to a resend are not timing's
			// matter: they are told whenever the probe's run is trusted.
			if con.Verdict != reports.VerdictError && con.Verdict != reports.VerdictIncomplete {
				for _, f := range con.Findings {
					if _, ok := c.want[f.Rule]; ok && f.Value == reports.CannotTell && (f.Rule == RuleChangedBody || f.Rule == RuleRetrySameID) {
						t.Errorf("%s: cannot tell (%s)\n%s", f.Rule, f.Because, text.String())
					}
				}
			}
			t.Logf("%d of %d told; %s %q", told, len(c.want), con.Verdict, con.Reasons)
		})
	}
}

// A changed body the rate limit refused (429) is no answer of the key's:
// the finding is the answer the key gave the other resends ("first" here),
// never "429,first" — which TestDriftNamesTheKnob once saw change between two
// characterisations whose limiters refused different resends.
func TestChangedBodyIgnoresTheLimiter(t *testing.T) {
	first := rundir.Attempt{Seq: 1, Attempt: 1, Code: 200, NotificationID: "n-1"}
	list := []*idemMsg{
		{own: []rundir.Attempt{first}, changed: []rundir.Attempt{{Seq: 1, Attempt: 5, Code: 429}}},
		{own: []rundir.Attempt{{Seq: 2, Attempt: 1, Code: 200, NotificationID: "n-2"}}, changed: []rundir.Attempt{{Seq: 2, Attempt: 5, Code: 200, NotificationID: "n-2"}}},
	}
	f := changedFinding(list)
	if f.Value != changedFirst || !strings.Contains(f.Evidence[0], "1 refused 429") {
		t.Errorf("changed_body_answer %q (%q), want %q with the 429 named as not counted", f.Value, f.Evidence, changedFirst)
	}
	// A copy in flight took the key and the own send was answered 409: the
	// changed body answered the copy's id got the first result, not a new one.
	took := &idemMsg{own: []rundir.Attempt{{Seq: 3, Attempt: 1, Code: 409}},
		inFlight: []rundir.Attempt{{Seq: 3, Attempt: 4, Code: 200, NotificationID: "n-3", Probe: rundir.ProbeInFlight}},
		changed:  []rundir.Attempt{{Seq: 3, Attempt: 7, Code: 200, NotificationID: "n-3"}}}
	if f := changedFinding([]*idemMsg{took}); f.Value != changedFirst {
		t.Errorf("a copy held the key: changed_body_answer %q (%q), want %q", f.Value, f.Evidence, changedFirst)
	}
	list = list[:1] // only the refused one: nothing the key answered
	if f := changedFinding(list); f.Value != reports.CannotTell {
		t.Errorf("only a 429: %q, want cannot tell", f.Value)
	}
}
