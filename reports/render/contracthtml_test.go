package render

import (
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
)

// report.html of a characterisation: one row per rule with what was found
// (its interval), why it cannot be told, what was expected, the verdict and
// the evidence — escaped — then the probes.
func TestContractHTML(t *testing.T) {
	lo, hi := 0.7, 2.3
	c := &reports.Contract{Name: "n", API: "notify", Target: "embedded", Budget: 600, Sent: 420, Findings: []reports.Finding{
		{Rule: "idempotency.window", Value: "0.7s..2.3s", Low: &lo, High: &hi, Expected: "1500ms", Verdict: reports.VerdictPass, Evidence: []string{"resent after 1.02s: <kept>"}},
		{Rule: "idempotency.retry_5xx_one_side_effect", Value: reports.CannotTell, Because: "no 500 came", Expected: "yes", Verdict: reports.VerdictIncomplete, Reason: "expected yes, cannot tell"},
	}, Probes: []reports.ContractProbe{{Name: "idempotency-window", What: "3 notifications", Planned: 6, Sent: 6, Verdict: reports.VerdictPass}}}
	c.Judge()
	var b strings.Builder
	if err := ContractHTML(&b, c); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<code>idempotency.window</code></td><td>0.7s..2.3s [0.7, 2.3]</td><td>1500ms</td>",
		"cannot tell, because no 500 came", "resent after 1.02s: &lt;kept&gt;", `class="v incomplete">INCOMPLETE</span>`,
		"<td>idempotency-window</td><td>3 notifications</td><td>6 (6)</td>", "420 of 600 requests",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q:\n%s", want, page)
		}
	}
}
