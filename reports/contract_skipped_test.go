package reports

import "testing"

// A probe skipped (nothing to send) judges nothing itself: with every
// finding met, the contract passes; a probe whose run was incomplete still
// makes it incomplete, and an expectation that cannot be told too.
func TestContractSkippedProbe(t *testing.T) {
	for _, tc := range []struct {
		probe, finding, want string
	}{
		{ProbeSkipped, VerdictPass, VerdictPass},
		{VerdictIncomplete, VerdictPass, VerdictIncomplete},
		{ProbeSkipped, VerdictIncomplete, VerdictIncomplete},
	} {
		c := &Contract{Probes: []ContractProbe{{Name: "burst", Verdict: VerdictPass}, {Name: "straddle", Verdict: tc.probe}},
			Findings: []Finding{{Rule: "rate_limit.boundary_straddle", Value: CannotTell, Verdict: tc.finding}}}
		c.Judge()
		if c.Verdict != tc.want {
			t.Errorf("probe %s, finding %s: %s, want %s (%q)", tc.probe, tc.finding, c.Verdict, tc.want, c.Reasons)
		}
	}
}
