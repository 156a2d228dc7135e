package characterise

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// accepted is n sends answered 200 in 10 ms, every gap apart from at.
func accepted(at time.Time, n int, gap time.Duration) []rundir.Attempt {
	as := make([]rundir.Attempt, n)
	for i := range as {
		as[i] = rundir.Attempt{Op: "send", Code: 200, Sent: at.Add(time.Duration(i) * gap), Latency: 0.01}
	}
	return as
}

// The most accepted within one window: a fixed window of 20 per 2 s whose
// quota went in the last half second before a boundary and the first half
// second after it admitted 40 within one second — surely; a sliding log's
// 20 a window apart are 20 at most, and two groups 1.99 s apart are 40 at
// most, 20 surely (their answers came later than a window after the first).
func TestWindowMax(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := 2 * time.Second
	straddle := append(accepted(t0.Add(1500*time.Millisecond), 20, 25*time.Millisecond), accepted(t0.Add(2*time.Second), 20, 25*time.Millisecond)...)
	sliding := append(accepted(t0, 20, 10*time.Millisecond), accepted(t0.Add(2200*time.Millisecond), 20, 10*time.Millisecond)...)
	edge := append(accepted(t0, 20, 0), accepted(t0.Add(1995*time.Millisecond), 20, 0)...)
	refused := append(accepted(t0, 5, 0), rundir.Attempt{Op: "send", Code: 429, Sent: t0, Latency: 0.01})
	for _, tc := range []struct {
		name             string
		as               []rundir.Attempt
		surely, possibly int
	}{
		{"fixed window across its boundary", straddle, 40, 40},
		{"sliding log", sliding, 20, 20},
		{"two groups within the answer time of a window", edge, 20, 40},
		{"429s are not accepted", refused, 5, 5},
		{"none", nil, 0, 0},
	} {
		s, p := windowMax(tc.as, w)
		if s != tc.surely || p != tc.possibly {
			t.Errorf("%s: %d surely, %d at most; want %d, %d", tc.name, s, p, tc.surely, tc.possibly)
		}
	}
}

// The sustained levels against a sliding log of 20 per 2 s whose 429s do
// not use quota: nothing refused at 0.9 × its rate, about nothing at 1.0 ×,
// and some at 1.1 × (1 − 1/1.1 when the sends keep their times exactly;
// more when a busy machine bunches them, as each bunch finds fewer freed
// slots than it has requests — so the test holds it only to refusing). A
// run whose plan was not held may say otherwise: not held to it.
func TestSustainedLevels(t *testing.T) {
	t.Parallel()
	o := matrixOptions
	o.Budget, o.MaxTime = 450, 10*time.Minute // the others' shares and the three levels (60); time for all, so the plan has the level probe
	f := matrixFile(t, "sliding", false)
	p, err := NewPlan(f, o)
	if err != nil {
		t.Fatal(err)
	}
	// only the burst (the fit the levels are set from) and the levels: the
	// callback and idempotency probes have their own tests
	p.Probes = slices.DeleteFunc(p.Probes, func(pr Probe) bool { return pr.Name != probeBurst && pr.Name != probeSustain })
	if len(p.Probes) != 2 || p.Probes[1].Name != probeSustain {
		t.Fatalf("the plan has no level probe after the burst: %+v", p.Probes)
	}
	res, err := Run(context.Background(), RunOptions{Plan: p, File: f, Harness: harness.Options{Out: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	_ = res.Contract.Text(&text)
	got := map[string]reports.Finding{}
	for _, f := range res.Contract.Findings {
		got[f.Rule] = f
	}
	if c := res.Contract; c.Verdict == reports.VerdictIncomplete || c.Verdict == reports.VerdictError {
		t.Skipf("a probe's run was not trusted or its plan not held: %s\n%s", strings.Join(c.Reasons, "; "), text.String())
	}
	under, at, over := got[RuleSustained09], got[RuleSustained10], got[RuleSustained11]
	switch {
	case under.Low == nil || at.Low == nil || over.Low == nil:
		t.Errorf("a level cannot be told\n%s", text.String())
	case under.Value != "0" || *at.Low > 0.05 || *over.Low <= 0:
		t.Errorf("refused at 0.9 × %s, at 1.0 × %s, at 1.1 × %s; want none, about none, some\n%s", under.Value, at.Value, over.Value, text.String())
	}
}

// The 95 % Wilson interval: 0 of 20 is [0, 0.161]; 2 of 22 holds 0.091 and
// not 0; 10 of 10 ends at 1.
func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int64
		lo, hi float64
	}{{0, 20, 0, 0.162}, {2, 22, 0.025, 0.279}, {10, 10, 0.722, 1}} {
		lo, hi := wilson(tc.k, tc.n)
		if math.Abs(lo-tc.lo) > 0.002 || math.Abs(hi-tc.hi) > 0.002 {
			t.Errorf("%d of %d: [%g, %g], want about [%g, %g]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}

// A level is told over its planned requests only: one cut short (a busy
// generator, an interrupt) is cannot tell, never a share over the
// survivors, which would be a share at a rate nobody planned.
func TestLevelOverPlanned(t *testing.T) {
	sp := sustainPlan{w: 2 * time.Second, limit: 20}
	sends := func(n, refused int) []rundir.Attempt {
		as := make([]rundir.Attempt, n)
		for i := range as {
			as[i] = rundir.Attempt{Seq: int64(i + 1), Attempt: 1, Code: 200}
			if i < refused {
				as[i].Code = 429
			}
		}
		return as
	}
	if f := levelFinding(RuleSustained11, 1.1, sp, 22, sends(22, 2)); f.Value != "0.091" || f.Low == nil {
		t.Errorf("22 of 22 sent, 2 refused: %q, want 0.091 with its interval", f.Value)
	}
	if f := levelFinding(RuleSustained11, 1.1, sp, 22, sends(18, 0)); f.Value != reports.CannotTell {
		t.Errorf("18 of 22 sent: %q, want cannot tell", f.Value)
	}
}
