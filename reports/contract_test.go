package reports

import (
	"encoding/xml"
	"strings"
	"testing"
)

// The contract's verdict is the worst of its findings and its probes: a
// probe whose run did not hold its plan leaves it incomplete even when every
// finding matched, and a probe that disagreed with its truth makes it error.
// junit.xml has one case per rule: a failure for a contradicted expectation,
// an error for one that could not be told.
func TestContractJudgeAndJUnit(t *testing.T) {
	fs := []Finding{
		{Rule: "a", Value: "1", Verdict: VerdictPass},
		{Rule: "b", Value: "2", Expected: "3", Verdict: verdictFail, Reason: "expected 3, found 2"},
		{Rule: "c", Value: CannotTell, Expected: "x", Verdict: VerdictIncomplete, Reason: "cannot tell"},
	}
	for _, tc := range []struct {
		findings []Finding
		probes   []ContractProbe
		want     string
	}{
		{fs[:1], []ContractProbe{{Name: "p", Verdict: VerdictPass}}, VerdictPass},
		{fs[:1], []ContractProbe{{Name: "p", Verdict: VerdictIncomplete}}, VerdictIncomplete},
		{fs[:1], []ContractProbe{{Name: "p", Verdict: VerdictError}}, VerdictError},
		{fs[:1], []ContractProbe{{Name: "p", Err: "no report"}}, VerdictError},
		{fs[:2], []ContractProbe{{Name: "p", Verdict: VerdictPass}}, verdictFail},
		{fs, []ContractProbe{{Name: "p", Verdict: VerdictPass}}, VerdictIncomplete},
	} {
		c := &Contract{Name: "n", Findings: tc.findings, Probes: tc.probes}
		c.Judge()
		if c.Verdict != tc.want || (c.Verdict != VerdictPass) != (len(c.Reasons) > 0) {
			t.Errorf("%+v / %+v: %s %q, want %s", tc.findings, tc.probes, c.Verdict, c.Reasons, tc.want)
		}
	}
	c := &Contract{Name: "n", Findings: fs, Probes: []ContractProbe{{Name: "p", Verdict: VerdictPass}}}
	c.Judge()
	var b strings.Builder
	if err := c.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var doc JUnitSuites
	if err := xml.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Suites[0]
	if s.Tests != 3 || len(s.Cases) != 3 || s.Fails != 1 || s.Errors != 1 || s.Cases[1].Failure == nil || s.Cases[2].Error == nil || s.Cases[0].Failure != nil {
		t.Errorf("junit: %s", b.String())
	}
	var md strings.Builder
	if err := c.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "| b | 2 | 3 | fail |") {
		t.Errorf("report.md: %v\n%s", err, md.String())
	}
}

// compare of two characterisations names the rule that changed, and only it.
func TestContractDrift(t *testing.T) {
	a, b, c := 12.0, 20.0, 21.0
	base := &Contract{Findings: []Finding{{Rule: "rate_limit.refusals_use_quota", Value: "no"}, {Rule: "rate_limit.limit", Value: "100/1m"}, {Rule: "x", Value: CannotTell},
		{Rule: "rate_limit.burst", Value: "12", Low: &a, High: &b}}}
	nw := &Contract{Findings: []Finding{{Rule: "rate_limit.refusals_use_quota", Value: "yes"}, {Rule: "rate_limit.limit", Value: "100/1m"}, {Rule: "x", Value: CannotTell}, {Rule: "y", Value: "1"},
		{Rule: "rate_limit.burst", Value: "20", Low: &b, High: &c}}}
	got := ContractDrift(base, nw)
	want := []ContractChange{{"rate_limit.refusals_use_quota", "no", "yes"}, {"y", "absent", "1"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("%+v, want %+v", got, want)
	}
}
