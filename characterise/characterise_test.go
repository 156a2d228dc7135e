package characterise

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
)

var wholeMatrix = flag.Bool("characterise.matrix", false, "run the whole matrix of simulator limiters × whether 429s use quota")

// waiting is how many of the package's tests run at once unless
// -test.parallel says otherwise: they wait on limiter windows, cool-downs
// and grace periods (a characterisation keeps about 2 % of a core busy),
// and the default of one per core left CI waiting 18 minutes. Not more:
// bursts at 100/s that coincide slow every answer, and slow answers leave
// the limiter fit in doubt. Each has its own simulator or target on its own
// ports; one that finds the machine too busy to hold its plan says so
// (incomplete), as every check here allows.
const waiting = 8

// TestMain runs the package's tests up to waiting at once, unless
// -test.parallel is given.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(waiting, runtime.GOMAXPROCS(0))))
	}
	os.Exit(m.Run())
}

func parse(t *testing.T, src string) (*File, error) {
	t.Helper()
	return Parse("c.yaml", "", []byte(src), func(string) string { return "" })
}

// The expect: block is read apart from the scenario, and every error keeps
// the line and column it has in the file: one in the expect block, and one in
// a scenario field written after it.
func TestParsePositions(t *testing.T) {
	src := "name: c\napi: notify\ntarget: embedded\nexpect:\n  rate_limit.algorithm: sliding window\n  rate_limit.brust: 100\n  rate_limit.burst: many\nclients: 2\n"
	_, err := parse(t, src)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"c.yaml:6:3: expect.rate_limit.brust: unknown rule", "c.yaml:7:21: expect.rate_limit.burst: want a count"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant %q", err, want)
		}
	}
	_, err = parse(t, "name: c\napi: notify\nexpect:\n  rate_limit.isolated: yes\nmessage: { textt: x }\n")
	if err == nil || !strings.Contains(err.Error(), "c.yaml:5:12: message.textt") {
		t.Errorf("%v: want the scenario's own error at 5:12", err)
	}
	_, err = parse(t, "name: c\napi: notify\nload: { rate: 1/s }\n")
	if err == nil || !strings.Contains(err.Error(), "c.yaml:3:1: load: characterise plans its own load") {
		t.Errorf("%v: want the load refused at 3:1", err)
	}
	f, err := parse(t, "name: c\napi: notify\ntarget: embedded\nexpect:\n  rate_limit.isolated: yes\n  rate_limit.limit: 100/1m\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Expect) != 2 || f.Expect[0] != (Expectation{RuleIsolated, "yes", 5, 3}) || f.Expect[1].Value != "100/1m" {
		t.Errorf("expect %+v", f.Expect)
	}
}

// An expectation that cannot be told is incomplete, never pass; a number
// within the finding's interval matches; a limit matches only on its window.
func TestJudge(t *testing.T) {
	lo, hi, six, ten := 100.0, 102.0, 600.0, 10.0
	for _, tc := range []struct {
		f    reports.Finding
		exp  string
		want string
	}{
		{reports.Finding{Rule: RuleAlgorithm, Value: reports.CannotTell, Because: "x"}, "sliding window", reports.VerdictIncomplete},
		{reports.Finding{Rule: RuleAlgorithm, Value: reports.CannotTell}, "", reports.VerdictPass},
		{reports.Finding{Rule: RuleAlgorithm, Value: "fixed window"}, "sliding window", "fail"},
		{reports.Finding{Rule: RuleBurst, Value: "100", Low: &lo, High: &hi}, "101", reports.VerdictPass},
		{reports.Finding{Rule: RuleBurst, Value: "100", Low: &lo, High: &hi}, "103", "fail"},
		{reports.Finding{Rule: RuleLimit, Value: "100/1m", Low: &lo, High: &lo}, "100/60s", reports.VerdictPass},
		{reports.Finding{Rule: RuleLimit, Value: "100/1m", Low: &lo, High: &lo}, "100/30s", "fail"},
		{reports.Finding{Rule: RuleCopiesAnswer, Value: "200,409"}, "409, 200", reports.VerdictPass},
		{reports.Finding{Rule: RuleLimit, Value: "600/1m", Low: &six, High: &six, PerSecond: &ten}, "20/2s", reports.VerdictPass},
		{reports.Finding{Rule: RuleLimit, Value: "600/1m", Low: &six, High: &six, PerSecond: &ten}, "20/1s", "fail"},
	} {
		f := tc.f
		judge(&f, tc.exp)
		if f.Verdict != tc.want {
			t.Errorf("%s = %s against %q: %s, want %s", f.Rule, f.Value, tc.exp, f.Verdict, tc.want)
		}
	}
}

// matrixFile is a characterisation file against the simulator's limiter alg
// at 20 per 2 s, 429s counted or not; the file does not say the limit.
func matrixFile(t *testing.T, alg string, count429 bool) *File {
	t.Helper()
	return matrixFaultsFile(t, alg, count429, 0, true)
}

// matrixFaultsFile is matrixFile with failPct % of the notifications
// answered 500, which use quota or not (countFailures).
func matrixFaultsFile(t *testing.T, alg string, count429 bool, failPct int, countFailures bool) *File {
	t.Helper()
	return simFile(t, "m", 7, 2, fmt.Sprintf("{ rate: 20/2s, algorithm: %s, count429: %v, countFailures: %v }", alg, count429, countFailures),
		fmt.Sprintf("  faults: { error500: %d%% }\n", failPct))
}

// simFile is the characterisation file every test here runs against the
// embedded simulator: name, the simulator's seed, clients (0: the file
// says none), its rateLimit block, and further lines of its sim: block.
func simFile(t *testing.T, name string, seed, clients int, rateLimit, simLines string) *File {
	t.Helper()
	f, err := parse(t, simSource(name, seed, clients, rateLimit, simLines))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// simSource is simFile's text.
func simSource(name string, seed, clients int, rateLimit, simLines string) string {
	src := fmt.Sprintf("name: %s\napi: notify\ntarget: embedded\n", name)
	if clients > 0 {
		src += fmt.Sprintf("clients: %d\n", clients)
	}
	src += fmt.Sprintf(`message: { recipient: "+79990000001", text: "x {{.Seq}}" }
delivery: { grace: 2s }
sim:
  seed: %d
  notifyDelay: { median: 50ms, p95: 200ms }
  rateLimit: %s
`, seed, rateLimit) + simLines
	return src
}

func characterise(t *testing.T, f *File, o Options) *Result {
	t.Helper()
	p, err := NewPlan(f, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), RunOptions{Plan: p, File: f, Harness: harness.Options{Out: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// characteriseOnly runs the probes of f's plan within o named names (in
// the plan's order, sized as the whole plan sizes them), through Run: the
// other probes cost time and have their own tests.
func characteriseOnly(t *testing.T, f *File, o Options, names ...string) *Result {
	t.Helper()
	p, err := NewPlan(f, o)
	if err != nil {
		t.Fatal(err)
	}
	p.Probes = slices.DeleteFunc(p.Probes, func(pr Probe) bool { return !slices.Contains(names, pr.Name) })
	if len(p.Probes) == 0 {
		t.Fatalf("the plan has none of the probes %v", names)
	}
	res, err := Run(context.Background(), RunOptions{Plan: p, File: f, Harness: harness.Options{Out: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var matrixOptions = Options{Budget: 300, MaxWindow: 4 * time.Second, MaxTime: time.Minute}

// The budget is never exceeded: every send that left, in every probe's
// attempts.jsonl, is counted, and they are at most --budget — also a budget
// too small for the plan's shares, and with the idempotency probe's
// retries of 500s and resets and the window probe's resends.
func TestBudgetNeverExceeded(t *testing.T) {
	t.Parallel()
	// a fixed window: the straddle probe runs too, on what the others left;
	// the idempotency probe's retries of 500s and resets and the window probe's resends
	for _, tc := range []struct {
		f      *File
		budget int64
	}{
		{matrixFile(t, "sliding", false), 90}, {matrixFile(t, "fixed", false), 150},
		{idemFile(t, "{ window: 1s }", "{ processedThen500: 30%, resetAfterProcessing: 30% }"), 250},
	} {
		t.Run(fmt.Sprintf("budget=%d", tc.budget), func(t *testing.T) {
			t.Parallel()
			o := matrixOptions
			o.Budget = tc.budget
			res := characterise(t, tc.f, o)
			checkSent(t, res, tc.budget)
			// at 150 and 250 the callback probes run too, their sends within the budget
			hooks := 0
			for _, p := range res.Contract.Probes {
				if p.Name == probeHookRetry || p.Name == probeHookRetryAfter {
					hooks++
					if p.Sent == 0 || p.Sent > p.Planned {
						t.Errorf("budget %d: probe %s sent %d of %d planned", tc.budget, p.Name, p.Sent, p.Planned)
					}
				}
			}
			if want := map[int64]int{90: 0, 150: 2, 250: 2}[tc.budget]; hooks != want {
				t.Errorf("budget %d: %d callback probes, want %d", tc.budget, hooks, want)
			}
		})
	}
}

// The matrix: the simulator's limiters (× whether 429s use quota with
// -characterise.matrix): characterise names the simulator's limiter, its
// limit and window, the burst, whether 429s used quota (not for a fixed
// window: its decisions are the same either way), isolation, Retry-After
// (never judged wrong: the simulator's is right) and idempotency; a
// finding it cannot tell is allowed only when a probe's run says its plan
// was not held (a busy machine) — or, for whether 429s used quota, when the
// trace's timing gave no acceptance that could refute it — and never a wrong
// one.
func TestMatrix(t *testing.T) {
	t.Parallel()
	type tc struct {
		alg       string
		count     bool
		fail      int  // % of notifications answered 500
		countFail bool // and whether they use quota
	}
	// the small matrix's representative of the 500s' axis: the sliding log
	cases := []tc{{"sliding", false, 10, false}, {"fixed", false, 0, true}, {"token-bucket", false, 0, true}}
	if *wholeMatrix {
		cases = append(cases, tc{"sliding", true, 0, true}, tc{"fixed", true, 0, true}, tc{"token-bucket", true, 0, true})
		for _, alg := range []string{"sliding", "fixed", "token-bucket"} {
			for _, c := range []tc{{alg, false, 10, true}, {alg, false, 10, false}} {
				if !slices.Contains(cases, c) { // the small matrix's sliding one is there already
					cases = append(cases, c)
				}
			}
		}
		cases = append(cases, tc{"sliding", false, 0, true})
	}
	names := map[string]string{"sliding": "sliding window", "fixed": "fixed window", "token-bucket": "token bucket"}
	// only a fixed window or a bucket admits more than its limit within one window
	straddles := map[string]string{"sliding": no, "fixed": yes, "token-bucket": yes}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/count429=%v/fail=%d%%/countFailures=%v", c.alg, c.count, c.fail, c.countFail), func(t *testing.T) {
			t.Parallel()
			res := characterise(t, matrixFaultsFile(t, c.alg, c.count, c.fail, c.countFail), matrixOptions)
			want := map[string]string{RuleAlgorithm: names[c.alg], RuleLimit: "20/2s", RuleCapacity: "20", RuleIsolated: yes, RuleRetryAfter: "present",
				RuleRetrySameID: yes, RuleCopiesSameID: yes, RuleOneDelivery: yes, RuleCopiesAnswer: "200", RuleStraddle: straddles[c.alg],
				RuleIETFFields: "absent"} // the seeds define none: the simulator sends them only with rateLimit.headers
			if c.fail > 0 {
				// the idempotency probe's copies meet the 500s too: their
				// answers are then 200 and 500, which is what happened
				delete(want, RuleCopiesAnswer)
				// 500s among the decisions blur the fit (a fixed window whose
				// failures count fits a shorter sliding log as well): with
				// them, every rule may be cannot tell, never the wrong value
				checkNeverWrong(t, res.Contract, want, map[string]string{RuleFailuresUseQuota: map[bool]string{true: yes, false: no}[c.countFail]})
				return
			}
			// Whether the 429s used quota: never the wrong answer. "cannot tell"
			// is allowed — the answer rests on acceptances that came after every
			// earlier 429 was answered, which the timing of a run on a busy
			// machine may not give (reports' TestLimiterRefusalsUseQuota holds
			// the fit to "no" on a trace that has them).
			quota := map[bool]string{true: yes, false: no}[c.count]
			if tiedWithTruth(res.Contract, names[c.alg]+" 20 per 2s") {
				// the trace did not tell the truth from another limiter: said
				// so, naming both, is right; the plan held or not
				for _, r := range []string{RuleAlgorithm, RuleLimit, RuleCapacity} {
					delete(want, r)
				}
				res.Contract.Findings = slices.DeleteFunc(slices.Clone(res.Contract.Findings), func(f reports.Finding) bool {
					return f.Rule == RuleAlgorithm || f.Rule == RuleLimit || f.Rule == RuleCapacity
				})
			}
			checkFindings(t, res.Contract, want, func(f reports.Finding) bool {
				// a bucket's burst also takes what refilled while it went:
				// 10 a second, for at most a second at this budget
				return within(&f, 20) || c.alg == "token-bucket" && *f.Low >= 20 && *f.Low <= 30
			})
			for _, f := range res.Contract.Findings {
				if c.alg != "fixed" && f.Rule == RuleRefusalsUseQuota && f.Value != quota && f.Value != reports.CannotTell { // a fixed window decides alike whether its 429s count
					t.Errorf("429s used quota: %s, want %s (or cannot tell): %q", f.Value, quota, f.Evidence)
				}
				if f.Rule == RuleRetryAfterRight && f.Value == no { // the simulator's Retry-After is right; cannot tell is allowed
					t.Errorf("Retry-After judged wrong: %q", f.Evidence)
				}
			}
		})
	}
}

// tiedWithTruth: the limiter fit could not tell truth (a model and its
// limit, as the fit writes them: "fixed window 20 per 2s") from another
// limiter that fits the trace equally well, and says so naming both — the
// one "cannot tell" of the algorithm the matrix accepts with its plan held.
func tiedWithTruth(c *reports.Contract, truth string) bool {
	for _, f := range c.Findings {
		if f.Rule != RuleAlgorithm || f.Value != reports.CannotTell {
			continue
		}
		for _, e := range f.Evidence {
			if strings.Contains(e, " fit equally well") && strings.Contains(e, truth) {
				return true
			}
		}
	}
	return false
}

// checkNeverWrong holds the contract's findings of want and also to their
// value or cannot tell; the rules of also must be there.
func checkNeverWrong(t *testing.T, c *reports.Contract, want, also map[string]string) {
	t.Helper()
	var text strings.Builder
	_ = c.Text(&text)
	for r, v := range also {
		if !slices.ContainsFunc(c.Findings, func(f reports.Finding) bool { return f.Rule == r }) {
			t.Errorf("no finding of %s\n%s", r, text.String())
		}
		want[r] = v
	}
	for _, f := range c.Findings {
		w, ok := want[f.Rule]
		if !ok || f.Value == reports.CannotTell {
			continue
		}
		right := f.Value == w
		if f.Rule == RuleLimit || f.Rule == RuleCapacity {
			right = matches(&f, w)
		}
		if !right {
			t.Errorf("%s = %s, want %s or cannot tell\n%s", f.Rule, f.Value, w, text.String())
		}
	}
}

// checkFindings holds the contract to want (rule → value) and burstOK.
func checkFindings(t *testing.T, c *reports.Contract, want map[string]string, burstOK func(reports.Finding) bool) {
	t.Helper()
	var text strings.Builder
	_ = c.Text(&text)
	// incomplete: a probe's plan was not held (a busy machine); error: a
	// probe's run disagreed with its truth, and its findings are withheld
	// (said as cannot tell, never a wrong value; the harness's own tests
	// hold the limiter fit to the truth).
	held := c.Verdict != reports.VerdictIncomplete && c.Verdict != reports.VerdictError
	seen := map[string]bool{}
	for _, f := range c.Findings {
		seen[f.Rule] = true
		w, ok := want[f.Rule]
		switch {
		case f.Value == reports.CannotTell && (ok || f.Rule == RuleBurst):
			if held {
				t.Errorf("%s: cannot tell (%s), want %q\n%s", f.Rule, f.Because, w, text.String())
			}
		case f.Rule == RuleBurst:
			if !burstOK(f) {
				t.Errorf("burst %s [%v, %v]\n%s", f.Value, *f.Low, *f.High, text.String())
			}
		case f.Rule == RuleLimit || f.Rule == RuleCapacity:
			if !matches(&f, w) {
				t.Errorf("limit %s, want %s\n%s", f.Value, w, text.String())
			}
		case ok && f.Value != w:
			t.Errorf("%s = %s, want %s\n%s", f.Rule, f.Value, w, text.String())
		}
	}
	for r := range want {
		if !seen[r] {
			t.Errorf("no finding of %s\n%s", r, text.String())
		}
	}
	if !held {
		t.Logf("%s: %s", c.Verdict, strings.Join(c.Reasons, "; "))
	}
}

// --dry-run's plan: within the budget, the time refused when over it.
func TestPlanWithinBudget(t *testing.T) {
	f := matrixFile(t, "sliding", false)
	for _, b := range []int64{100, 600, 5000} {
		p, err := NewPlan(f, Options{Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		if p.Requests() > b {
			t.Errorf("budget %d: plan of %d", b, p.Requests())
		}
	}
	if _, err := NewPlan(f, Options{Budget: 600, MaxTime: time.Minute}); err == nil || !strings.Contains(err.Error(), "over --max-time") {
		t.Errorf("a 1m limit on a plan of about 2m: %v", err)
	}
	if _, err := NewPlan(f, Options{Budget: 10}); err == nil {
		t.Error("a budget of 10: no error")
	}
}

// Against the embedded simulator's defaults (notify 100 per minute per
// client, sliding, Retry-After, idempotent by externalId), within the
// default budget and time: about three and a half minutes with the callback probes (-short skips it).
func TestEmbeddedDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: about 3.5 minutes")
	}
	t.Parallel()
	f, err := parse(t, "name: defaults\napi: notify\ntarget: embedded\nclients: 2\nmessage: { recipient: \"+79990000001\", text: \"x {{.Seq}}\" }\n")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := characterise(t, f, Options{})
	var text strings.Builder
	_ = res.Contract.Text(&text)
	t.Logf("took %s, %d of %d requests\n%s", time.Since(start).Round(time.Second), res.Contract.Sent, res.Contract.Budget, text.String())
	want := map[string]string{RuleAlgorithm: "sliding window", RuleLimit: "100/1m", RuleCapacity: "100", RuleIsolated: yes, RuleRetryAfter: "present",
		RuleRetrySameID: yes, RuleCopiesSameID: yes, RuleOneDelivery: yes, RuleCopiesAnswer: "200"}
	checkFindings(t, res.Contract, want, func(f reports.Finding) bool { return within(&f, 100) })
	for _, f := range res.Contract.Findings {
		if f.Rule == RuleRetryAfterRight && f.Value == no { // the simulator's Retry-After is right; cannot tell is allowed
			t.Errorf("Retry-After judged wrong: %q", f.Evidence)
		}
	}
	if res.Contract.Sent > DefaultBudget {
		t.Errorf("%d sent, over the default budget %d", res.Contract.Sent, DefaultBudget)
	}
}

// compare of two characterisations with one knob of the simulator changed
// (its limiter, sliding → fixed) names that knob, and no other rule changes
// from one told value to another.
func TestDriftNamesTheKnob(t *testing.T) {
	t.Parallel()
	var cs [2]*reports.Contract
	t.Run("both", func(t *testing.T) {
		for i, alg := range []string{"sliding", "fixed"} {
			t.Run(alg, func(t *testing.T) {
				t.Parallel()
				cs[i] = characterise(t, matrixFile(t, alg, false), matrixOptions).Contract
			})
		}
	})
	if cs[0] == nil || cs[1] == nil { // one failed: said there
		return
	}
	if cs[0].Verdict == reports.VerdictError || cs[1].Verdict == reports.VerdictError ||
		cs[0].Verdict == reports.VerdictIncomplete || cs[1].Verdict == reports.VerdictIncomplete {
		t.Skipf("a probe's run was not trusted (%s; %s)", strings.Join(cs[0].Reasons, "; "), strings.Join(cs[1].Reasons, "; "))
	}
	named := false
	for _, c := range reports.ContractDrift(cs[0], cs[1]) {
		switch {
		case c.Rule == RuleAlgorithm && c.Base == "sliding window" && c.New == "fixed window":
			named = true
		case c.Rule == RuleStraddle && c.Base == no && c.New == yes: // what a fixed window does that a sliding log does not: named too
		case c.Base != reports.CannotTell && c.New != reports.CannotTell:
			t.Errorf("%s changed too: %s → %s", c.Rule, c.Base, c.New)
		}
	}
	if !named {
		t.Errorf("the drift does not name the limiter: %+v", reports.ContractDrift(cs[0], cs[1]))
	}
}

// An interrupted characterisation is incomplete, never pass, even with no
// expectation: the probes it did not run are in the contract as not run.
func TestInterruptedIsIncomplete(t *testing.T) {
	f := matrixFile(t, "sliding", false)
	p, err := NewPlan(f, matrixOptions)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, RunOptions{Plan: p, File: f, Harness: harness.Options{Out: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Contract; c.Verdict != reports.VerdictIncomplete || c.Sent != 0 || len(c.Probes) != len(p.Probes) {
		t.Errorf("%s, %d sent, %d probes of %d: %q", c.Verdict, c.Sent, len(c.Probes), len(p.Probes), c.Reasons)
	}
}
