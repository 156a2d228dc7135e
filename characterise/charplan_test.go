package characterise

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// defaultsSource is README's characterisation of the embedded simulator's
// defaults, with clients clients.
func defaultsSource(clients int) string {
	return fmt.Sprintf("name: defaults\napi: notify\ntarget: embedded\nclients: %d\nmessage: { recipient: \"+79990000001\", text: \"x {{.Seq}}\" }\n", clients)
}

// What --dry-run prints is what runs: each probe the plan sizes gets, when
// it runs, every request it was planned — even when each probe before it
// sent all it could and the probes sized when they run (isolation, from
// the burst the simulator's defaults give) took all they may. A token probe
// that does not fit is not in the plan, and its rules say "does not fit"
// with what it needs.
func TestPlanSizesEveryProbe(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		clients int
		o       Options
	}{
		{2, Options{}}, {1, Options{}}, {2, Options{Budget: 900, MaxTime: 8 * time.Minute}},
	} {
		name := fmt.Sprintf("clients=%d,budget=%d", tc.clients, tc.o.Budget)
		f, err := parse(t, defaultsSource(tc.clients))
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(f, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		var dry bytes.Buffer
		p.Print(&dry)
		st := &state{base: f.Scenario, plan: p, burst: seedLimit}
		var sent int64
		token := false
		for i, pr := range p.Probes {
			got := st.runSized(i, sent)
			switch pr.Name {
			case probeIsolation, probeStraddle, probeSustain: // sized from what the probes before found: at most what was printed
				if got.Requests > pr.Requests {
					t.Errorf("%s: %s printed at most %d, runs with %d", name, pr.Name, pr.Requests, got.Requests)
				}
			default:
				if pr.Requests == 0 || got.Requests != pr.Requests || got.What != pr.What {
					t.Errorf("%s: %s printed %d requests (%s), runs with %d (%s)\n%s", name, pr.Name, pr.Requests, pr.What, got.Requests, got.What, dry.String())
				}
			}
			token = token || pr.Name == probeToken
			sent += got.Requests // the worst case: every request it may send
		}
		if sent > p.Budget {
			t.Errorf("%s: the run may send %d, over the budget %d", name, sent, p.Budget)
		}
		if !token && tc.clients == 1 {
			t.Errorf("%s: no token probe with no isolation probe to keep room for\n%s", name, dry.String())
		}
		if !token {
			if fs := st.tokenFindings(); !strings.HasPrefix(fs[0].Because, "does not fit: needs ") {
				t.Errorf("%s: no token probe, and its rules say %q\n%s", name, fs[0].Because, dry.String())
			}
		}
	}
}

// Slow answers of the embedded simulator (its every answer delayed past the
// cold burst's spacing, as on a busy machine) are the environment's: the
// characterisation is incomplete, the burst probe's reason says the machine
// was too busy, and the fit's names are cannot tell with that reason —
// never a pass that could not tell them.
func TestBusyEmbeddedIsIncomplete(t *testing.T) {
	t.Parallel()
	f := simFile(t, "busy", 7, 1, "{ rate: 20/2s, algorithm: sliding }", "  faults: { latency: 30ms }\n")
	p, err := NewPlan(f, matrixOptions)
	if err != nil {
		t.Fatal(err)
	}
	var keep []Probe
	for _, pr := range p.Probes {
		if pr.Name == probeBurst {
			keep = append(keep, pr)
		}
	}
	p.Probes = keep
	res, err := Run(context.Background(), RunOptions{Plan: p, File: f, Harness: harness.Options{Out: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Contract
	if c.Verdict != reports.VerdictIncomplete {
		t.Fatalf("verdict %s, want incomplete: %q", c.Verdict, c.Reasons)
	}
	if c.Probes[0].Verdict == reports.VerdictIncomplete && !strings.Contains(strings.Join(c.Probes[0].Reasons, "; "), "the machine was too busy") {
		return // the harness found its own plan not held first: incomplete for that, as it should
	}
	if !strings.Contains(strings.Join(c.Reasons, "; "), "the machine was too busy: the embedded simulator answered the burst in a median of ") {
		t.Errorf("no reason says the machine was busy: %q", c.Reasons)
	}
	for _, fd := range c.Findings {
		if fd.Rule == RuleAlgorithm && (fd.Value != reports.CannotTell || !strings.Contains(fd.Because, "the machine was too busy")) {
			t.Errorf("%s = %s (%s), want cannot tell for the busy machine", fd.Rule, fd.Value, fd.Because)
		}
	}
}

// Against a real target slow answers are the service's: the fit's names
// are cannot tell for the answers' time, and the burst probe's run stands;
// against the embedded simulator the same answers are the machine's.
func TestSlowAnswersWhose(t *testing.T) {
	t.Parallel()
	for _, embedded := range []bool{false, true} {
		f := simFile(t, "slow", 7, 1, "{ rate: 20/2s }", "")
		f.Scenario.Target.Embedded = embedded
		var as []rundir.Attempt
		for i := range 9 {
			as = append(as, rundir.Attempt{Op: "send", Seq: int64(i + 1), Attempt: 1, Code: 200, Latency: 0.03})
		}
		st := &state{base: f.Scenario, plan: &Plan{Options: Options{BurstRate: 100}}, data: map[string]*probeData{probeBurst: {attempts: as}}}
		cp := reports.ContractProbe{Name: probeBurst, Verdict: reports.VerdictPass}
		st.judgeEnvironment(&cp)
		why := st.fitDoubt()
		busy := strings.HasPrefix(why, "the machine was too busy: the embedded simulator answered the burst in a median of 30ms against the 10ms spacing")
		if busy != embedded || why == "" || (cp.Verdict == reports.VerdictIncomplete) != embedded {
			t.Errorf("embedded %v: the run %s, the fit's doubt %q", embedded, cp.Verdict, why)
		}
	}
}

// compare names tokens.lifetime only when two lifetimes miss each other by
// more than a second (a token's exp is whole seconds: two runs' tokens of
// the same service live apart by up to one), and names a lifetime changed
// by more.
func TestLifetimeDriftBeyondItsResolution(t *testing.T) {
	t.Parallel()
	contract := func(accepted, refused float64) *reports.Contract {
		t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		tok := rundir.Attempt{Op: "token", Code: 200, Sent: t0}
		at := func(s float64, code int) tokenUse {
			return tokenUse{send: rundir.Attempt{Op: "send", Code: code, Sent: t0.Add(secs(s))}, token: tok, n: 1}
		}
		h := heldRun{tokens: []rundir.Attempt{tok}, uses: []tokenUse{at(accepted, 200), at(refused, 401)}}
		return &reports.Contract{Findings: []reports.Finding{h.lifetime([]time.Duration{time.Duration(refused * float64(time.Second))})}}
	}
	base := contract(2.1, 2.6)
	for _, tc := range []struct {
		accepted, refused float64
		named             bool
	}{
		{3.2, 3.5, false}, // 0.6 s apart: within the exp's rounding
		{2.2, 2.5, false}, // overlapping
		{6.1, 6.6, true},  // the token's lifetime changed
	} {
		drift := reports.ContractDrift(base, contract(tc.accepted, tc.refused))
		if named := len(drift) == 1 && drift[0].Rule == RuleTokenLifetime; named != tc.named || len(drift) > 1 {
			t.Errorf("%.1fs..%.1fs against %s: drift %+v, named %v", tc.accepted, tc.refused, base.Findings[0].Value, drift, tc.named)
		}
	}
}
