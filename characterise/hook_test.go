package characterise

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports"
)

// hookCase is a retry schedule of the simulator's callbacks.
type hookCase struct {
	name     string
	attempts int
	backoff  time.Duration
	factor   float64
	cap      time.Duration
	honour   bool
	gone     bool          // sim.callbacks.goneStops
	timeout  time.Duration // sim.callbacks.timeout (0: the simulator's 5 s)
}

// hookFile is a characterisation file against the simulator with c's
// retry schedule; the limiter is the matrix's.
func hookFile(t *testing.T, c hookCase) *File {
	t.Helper()
	return simFile(t, "h", 7, 2, "{ rate: 20/2s, algorithm: sliding }",
		fmt.Sprintf("  callbacks: { attempts: %d, backoff: %s, backoffFactor: %g, backoffMax: %s, honourRetryAfter: %v, goneStops: %v, timeout: %s }\n",
			c.attempts, c.backoff, c.factor, c.cap, c.honour, c.gone, cmp.Or(c.timeout, simTimeout)))
}

// callbackProbes are the callback probes: the callback tests run them alone
// (the other probes have their own tests).
var callbackProbes = []string{probeHookRetry, probeHookRetryAfter, probeHookGone, probeHookTimeout}

// hookOptions leave --max-time for every callback probe, callback-gone and
// callback-timeout included (they are planned last, in what is left).
var hookOptions = Options{Budget: 300, MaxWindow: 4 * time.Second, MaxTime: 150 * time.Second, HookWait: 12 * time.Second}

// The callback matrix: the simulator's retry schedules (fixed, exponential,
// capped) × whether it honours Retry-After, each with whether a 410 ends
// the tries and a timeout of its own (the small matrix: one capped schedule
// honouring it, stopping at a 410, timing out after 2 s; all with
// -characterise.matrix). characterise names the schedule, its first wait,
// factor and cap within their intervals, the attempts before giving up,
// whether Retry-After is honoured, no duplicate, whether a 410 stops it, and
// its timeout within its interval; a finding it cannot tell is allowed only
// when a probe's run says its plan was not held, and never a wrong one. The
// probes' sends are within the budget.
func TestHookMatrix(t *testing.T) {
	t.Parallel()
	cases := []hookCase{{"capped-honoured", 5, 300 * time.Millisecond, 2, time.Second, true, true, 2 * time.Second}}
	if *wholeMatrix {
		cases = append(cases, hookCase{"capped", 5, 300 * time.Millisecond, 2, time.Second, false, false, 3 * time.Second},
			hookCase{"fixed", 4, 400 * time.Millisecond, 1, 0, false, true, 0}, hookCase{"fixed-honoured", 4, 400 * time.Millisecond, 1, 0, true, false, 2 * time.Second},
			hookCase{"exponential", 4, 300 * time.Millisecond, 2, 0, false, true, 3 * time.Second}, hookCase{"exponential-honoured", 4, 300 * time.Millisecond, 2, 0, true, false, 0})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res := characteriseOnly(t, hookFile(t, c), hookOptions, callbackProbes...)
			checkHook(t, res.Contract, c)
			checkSent(t, res, hookOptions.Budget)
		})
	}
}

// checkHook holds the callback findings to c.
func checkHook(t *testing.T, ct *reports.Contract, c hookCase) {
	t.Helper()
	var text strings.Builder
	_ = ct.Text(&text)
	held := ct.Verdict != reports.VerdictIncomplete && ct.Verdict != reports.VerdictError
	kind := map[bool]string{true: scheduleFixed, false: scheduleExponential}[c.factor == 1]
	honoured := map[bool]string{true: yes, false: no}[c.honour]
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	want := map[string]string{RuleHookSchedule: kind, RuleHookFirstDelay: num(c.backoff.Seconds()), RuleHookFactor: num(c.factor),
		RuleHookAttempts: strconv.Itoa(c.attempts), RuleHookRetryAfter: honoured, RuleHookDuplicates: "0",
		RuleHookGoneStops: map[bool]string{true: yes, false: no}[c.gone], RuleHookSenderTimeout: num(cmp.Or(c.timeout, simTimeout).Seconds())}
	if c.cap > 0 {
		want[RuleHookCap] = num(c.cap.Seconds())
	}
	seen := map[string]bool{}
	for _, f := range ct.Findings {
		w, ok := want[f.Rule]
		if !ok {
			continue
		}
		seen[f.Rule] = true
		ff := f
		switch {
		case f.Value == reports.CannotTell:
			if held {
				t.Errorf("%s: cannot tell (%s), want %s\n%s", f.Rule, f.Because, w, text.String())
			}
		case !matches(&ff, w):
			t.Errorf("%s = %s %v, want %s\n%s", f.Rule, f.Value, f.Evidence, w, text.String())
		}
	}
	for r := range want {
		if !seen[r] {
			t.Errorf("no finding of %s\n%s", r, text.String())
		}
	}
	t.Log(text.String())
	if !held {
		t.Logf("%s: %s", ct.Verdict, strings.Join(ct.Reasons, "; "))
	}
}

// compare of two characterisations whose simulators differ in one callback
// knob names that rule, and no other rule changes from one told value to
// another: a base, and two that each change one knob of it — Retry-After
// honoured, a 410 ending the tries (every one recovered as checkHook holds).
func TestHookDriftNamesTheKnob(t *testing.T) {
	t.Parallel()
	base := hookCase{"", 4, 300 * time.Millisecond, 2, 0, false, false, 2 * time.Second}
	honour, gone := base, base
	honour.honour, gone.gone = true, true
	cases := []hookCase{base, honour, gone}
	var cs [3]*reports.Contract
	t.Run("all", func(t *testing.T) {
		for i, c := range cases {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				cs[i] = characteriseOnly(t, hookFile(t, c), hookOptions, callbackProbes...).Contract
				checkHook(t, cs[i], c)
			})
		}
	})
	for i, rule := range []string{"", RuleHookRetryAfter, RuleHookGoneStops} {
		if i > 0 && cs[0] != nil && cs[i] != nil {
			checkDriftNames(t, cs[0], cs[i], rule)
		}
	}
}

// checkDriftNames: the drift from base to new names rule (no → yes), and
// no other callback rule changed from one told value to another.
func checkDriftNames(t *testing.T, base, new *reports.Contract, rule string) {
	t.Helper()
	named := false
	for _, c := range reports.ContractDrift(base, new) {
		switch {
		case c.Rule == rule && c.Base == no && c.New == yes:
			named = true
		case c.Base != reports.CannotTell && c.New != reports.CannotTell && strings.HasPrefix(c.Rule, "callbacks."):
			t.Errorf("%s changed too: %s → %s", c.Rule, c.Base, c.New)
		}
	}
	held := func(c *reports.Contract) bool {
		return c.Verdict != reports.VerdictIncomplete && c.Verdict != reports.VerdictError
	}
	if !named && held(base) && held(new) {
		t.Errorf("the drift does not name %s: %+v", rule, reports.ContractDrift(base, new))
	}
}
