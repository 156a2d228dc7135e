package reports

// The contract of a service as msgload characterise measured it from outside
// (README, "Characterising a service"): one finding per rule, each with its
// evidence and an interval, or "cannot tell" and why; judged against the
// file's expect: block. contract.json and junit.xml (one case per rule).

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// CannotTell is the value of a finding the probes could not decide.
const CannotTell = "cannot tell"

// Contract is contract.json: what msgload characterise found, and how it
// compares with what the file expected.
type Contract struct {
	Name   string `json:"name"`
	API    string `json:"api"`
	Target string `json:"target"`
	Start  string `json:"start"`
	End    string `json:"end"`
	// Budget is the most requests the probes may send (--budget); Sent what
	// they really sent (every send attempt, retries and copies included).
	Budget   int64           `json:"budget"`
	Sent     int64           `json:"sent"`
	Probes   []ContractProbe `json:"probes"`
	Findings []Finding       `json:"findings"`
	// Verdict: pass (every expectation met), fail (one contradicted),
	// incomplete (one could not be told, or a probe did not finish), error (a
	// probe's run disagreed with its truth or wrote no report).
	Verdict string   `json:"verdict"`
	Reasons []string `json:"reasons"`
}

// ProbeSkipped is the verdict of a probe that had nothing to send (what
// the probes before it found made it moot, or left no budget): its rules'
// findings say why they cannot be told, and judge the contract.
const ProbeSkipped = "skipped"

// ContractProbe is one probe: a generated scenario run by the harness, in
// its own directory below the characterisation's.
type ContractProbe struct {
	Name    string   `json:"name"`
	What    string   `json:"what"`
	Dir     string   `json:"dir"`
	Planned int64    `json:"planned"`           // requests the plan allots it
	Sent    int64    `json:"sent"`              // requests it really sent
	Verdict string   `json:"verdict"`           // its run's verdict
	Reasons []string `json:"reasons,omitempty"` // its run's verdict reasons
	Err     string   `json:"error,omitempty"`
}

// Finding is one rule of the contract.
type Finding struct {
	Rule  string `json:"rule"`  // e.g. rate_limit.burst
	Value string `json:"value"` // what was found; CannotTell when undecided
	// Low and High bound a numeric value (equal when it was counted exactly);
	// absent for a value that is a word or undecided.
	Low  *float64 `json:"low,omitempty"`
	High *float64 `json:"high,omitempty"`
	// PerSecond is a limit that is a rate, not a count in a window (a token
	// bucket's refill): an expected N/window matches it by its rate.
	PerSecond *float64 `json:"per_second,omitempty"`
	// Resolution is how finely the service states the value (a token's exp
	// is whole seconds: 1): two intervals that miss each other by no more
	// than it do not tell a change.
	Resolution *float64 `json:"resolution,omitempty"`
	// Because says why the value is CannotTell.
	Because  string   `json:"because,omitempty"`
	Evidence []string `json:"evidence"`
	Probe    string   `json:"probe"`
	Expected string   `json:"expected,omitempty"` // from expect:, as written
	// Verdict: pass (met, or nothing expected), fail (contradicted),
	// incomplete (expected, but the value could not be told).
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

// Judge sets the contract's verdict and reasons from its findings and
// probes: the worst of them, where a probe that wrote no report is an error
// and one whose run was not pass (its plan not held, interrupted) leaves the
// characterisation incomplete at best — never pass on a probe that did not
// run as planned.
func (c *Contract) Judge() {
	vs := []string{VerdictPass}
	c.Reasons = []string{}
	for _, p := range c.Probes {
		switch {
		case p.Err != "":
			vs = append(vs, VerdictError)
			c.Reasons = append(c.Reasons, fmt.Sprintf("probe %s: %s (environment or msgload)", p.Name, p.Err))
		case p.Verdict == VerdictError:
			vs = append(vs, VerdictError)
			c.Reasons = append(c.Reasons, fmt.Sprintf("probe %s: its run ended error (measurement: %s; see %s)", p.Name, strings.Join(p.Reasons, "; "), p.Dir))
		case p.Verdict != VerdictPass && p.Verdict != verdictFail && p.Verdict != ProbeSkipped:
			// fail is the probe's own thresholds (none are set); incomplete
			// is the environment's: the plan was not held.
			vs = append(vs, VerdictIncomplete)
			c.Reasons = append(c.Reasons, fmt.Sprintf("probe %s: its run was %s (environment: %s; see %s)", p.Name, p.Verdict, strings.Join(p.Reasons, "; "), p.Dir))
		}
	}
	for _, f := range c.Findings {
		vs = append(vs, f.Verdict)
		if f.Verdict != VerdictPass {
			c.Reasons = append(c.Reasons, f.Rule+": "+f.Reason)
		}
	}
	c.Verdict = WorstVerdict(vs...)
}

// WriteJSON writes contract.json.
func (c *Contract) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// WriteJUnit writes junit.xml: one test case per rule (failing when the
// finding contradicts the expectation, an error when it could not be told
// against one), in the strict schema the run's junit.xml follows.
func (c *Contract) WriteJUnit(w io.Writer) error {
	suite := JUnitSuite{
		Name: "msgload contract: " + c.Name, Package: "msgload", Timestamp: JUnitTimestamp(c.Start), Hostname: "localhost", Time: "0",
		Properties: []JUnitProperty{{"contract.name", c.Name}, {"contract.api", c.API}, {"contract.target", c.Target}, {"verdict", c.Verdict}},
		Cases:      []JUnitCase{},
		SystemOut:  strings.Join(c.Reasons, "\n"),
	}
	for _, f := range c.Findings {
		tc := JUnitCase{Name: f.Rule + " = " + f.Value, Classname: "msgload.contract." + c.Name, Time: "0"}
		fl := &JUnitFailure{Message: f.Reason, Type: f.Verdict, Text: strings.Join(f.Evidence, "\n")}
		switch f.Verdict {
		case VerdictPass:
		case verdictFail:
			tc.Failure = fl
			suite.Fails++
		default:
			tc.Error = fl
			suite.Errors++
		}
		suite.Cases = append(suite.Cases, tc)
	}
	suite.Tests = len(suite.Cases)
	return WriteJUnitDoc(w, JUnitSuites{Suites: []JUnitSuite{suite}})
}

// Text is the contract for a terminal or report.md: one line per rule.
func (c *Contract) Text(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "contract of %s (%s, %s): %d of %d requests of the budget sent\n", c.Name, c.API, c.Target, c.Sent, c.Budget)
	for _, f := range c.Findings {
		v := f.Value
		if f.Low != nil && f.High != nil && *f.Low != *f.High {
			v += fmt.Sprintf(" [%g, %g]", *f.Low, *f.High)
		}
		if f.Because != "" {
			v += ", because " + f.Because
		}
		exp := ""
		if f.Expected != "" {
			exp = fmt.Sprintf(" (expected %s: %s)", f.Expected, strings.ToUpper(f.Verdict))
		}
		fmt.Fprintf(&b, "  %-34s %s%s\n", f.Rule, v, exp)
	}
	fmt.Fprintf(&b, "verdict: %s", strings.ToUpper(c.Verdict))
	if len(c.Reasons) > 0 {
		b.WriteString(": " + strings.Join(c.Reasons, "; "))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes report.md of a characterisation: the verdict, one
// table row per rule (value, interval, expected, verdict, evidence), then
// the probes.
func (c *Contract) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Contract of %s (%s, %s): %s\n\n", MDEscape(c.Name), MDEscape(c.API), MDEscape(c.Target), strings.ToUpper(c.Verdict))
	for _, r := range c.Reasons {
		fmt.Fprintf(&b, "- %s\n", MDEscape(r))
	}
	fmt.Fprintf(&b, "\n%d of %d requests of the budget sent.\n\n| Rule | Found | Expected | Verdict | Evidence |\n|---|---|---|---|---|\n", c.Sent, c.Budget)
	for _, f := range c.Findings {
		v := f.Value
		if f.Low != nil && f.High != nil && *f.Low != *f.High {
			v += fmt.Sprintf(" [%g, %g]", *f.Low, *f.High)
		}
		if f.Because != "" {
			v += ", because " + f.Because
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", f.Rule, MDEscape(v), MDEscape(f.Expected), f.Verdict, MDEscape(strings.Join(f.Evidence, "; ")))
	}
	b.WriteString("\n## Probes\n\n| Probe | What | Requests (planned) | Run |\n|---|---|---|---|\n")
	for _, p := range c.Probes {
		fmt.Fprintf(&b, "| %s | %s | %d (%d) | %s |\n", p.Name, MDEscape(p.What), p.Sent, p.Planned, MDEscape(p.Verdict+" "+p.Err))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// overlap reports whether two numbers' intervals overlap: the two
// characterisations cannot be told apart on that rule.
func overlap(a, b Finding) bool {
	if a.Low == nil || a.High == nil || b.Low == nil || b.High == nil {
		return false
	}
	res := max(resolution(a), resolution(b))
	return *a.Low <= *b.High+res && *b.Low <= *a.High+res
}

// resolution is f's Resolution, 0 when it states none.
func resolution(f Finding) float64 {
	if f.Resolution == nil {
		return 0
	}
	return *f.Resolution
}

// ContractChange is one rule whose finding differs between two
// characterisations (msgload compare of two of them).
type ContractChange struct {
	Rule string `json:"rule"`
	Base string `json:"base"` // its value in the base ("absent" when not there)
	New  string `json:"new"`
}

// ContractDrift is what changed from base to new, rule by rule, in base's
// order then new's: a value that changed (cannot tell on one side is a
// change; two numbers whose intervals overlap, or miss each other by no
// more than their Resolution, are not), and a rule found in
// one only.
func ContractDrift(base, new *Contract) []ContractChange {
	val := func(c *Contract) (map[string]string, []string, map[string]Finding) {
		m, order, fs := map[string]string{}, []string{}, map[string]Finding{}
		for _, f := range c.Findings {
			m[f.Rule] = f.Value
			order = append(order, f.Rule)
			fs[f.Rule] = f
		}
		return m, order, fs
	}
	b, bo, bf := val(base)
	n, no, nf := val(new)
	var out []ContractChange
	seen := map[string]bool{}
	for _, r := range append(bo, no...) {
		if seen[r] {
			continue
		}
		seen[r] = true
		bv, ok1 := b[r]
		nv, ok2 := n[r]
		if !ok1 {
			bv = "absent"
		}
		if !ok2 {
			nv = "absent"
		}
		if bv != nv && !overlap(bf[r], nf[r]) {
			out = append(out, ContractChange{Rule: r, Base: bv, New: nv})
		}
	}
	return out
}
