package render

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// cardRun is a run whose latency threshold fails: a service reason.
func cardRun() *run {
	r := passingRun()
	r.meta.Thresholds = []string{"requests.latency.p95 < 5ms", "delivery.lost == 0"}
	return r
}

// TestVerdictCardInEveryReport: the terminal, report.md and report.html open
// with the verdict card: the verdict, each reason with whose it is and the
// next step, planned against sent, and the thresholds with units and
// headroom — no `(value 0.01)`.
func TestVerdictCardInEveryReport(t *testing.T) {
	s, f := build(t, cardRun())
	requireVerdict(t, s, verdictFail, "requests.latency.p95")
	for _, r := range s.Reasons {
		if r.Whose == reports.WhoseService && r.Next == "" {
			t.Errorf("service reason %q has no next step", r.Text)
		}
	}
	failing := "requests.latency.p95 10.0 ms ≥ 5 ms (over by 100 %)"
	holding := "delivery.lost 0 = 0"
	for _, name := range []string{"terminal", rundir.MarkdownFile, rundir.HTMLFile} {
		out := f[name]
		card := out
		if i := strings.Index(out, "Key figures"); name == rundir.HTMLFile && i > 0 {
			card = out[:i] // the card comes before the figures
		}
		for _, want := range []string{"FAIL", "service", "Next", failing, holding, "Sent 1 of 1 planned"} {
			if !strings.Contains(card, want) {
				t.Errorf("%s: the card lacks %q:\n%s", name, want, card)
			}
		}
		if strings.Contains(out, "(value 0.01)") || strings.Contains(out, "value 0.01") {
			t.Errorf("%s shows a bare value:\n%s", name, out)
		}
	}
}

// TestLostMessagesListed: the reports list the lost and late messages (the
// first 20 by sequence number, whatever order the records came in) and a jq
// line that, run in the run directory, gives the answers of every lost
// message (lost.jsonl joined with attempts.jsonl), not only those 20.
func TestLostMessagesListed(t *testing.T) {
	r := passingRun()
	r.meta.Thresholds = nil
	for seq := int64(2); seq <= 30; seq++ {
		r.send(seq, "c1", float64(seq), 200, 0.01)
	}
	r.callback(2, 75, "DELIVERED", "sms", true, false) // after the deadline (70 s + grace): late
	slices.Reverse(r.attempts)
	dir := r.write(t)
	s, f := buildDir(t, dir)
	wantLost := []int64{2}
	for seq := int64(3); len(wantLost) < reports.MaxListed; seq++ {
		wantLost = append(wantLost, seq)
	}
	if s.Delivery.Lost != 29 || !slices.Equal(s.Delivery.LostSeqs, wantLost) || !slices.Equal(s.Delivery.LateSeqs, []int64{2}) {
		t.Fatalf("lost %d %v, late %v; want 29 %v, late [2]", s.Delivery.Lost, s.Delivery.LostSeqs, s.Delivery.LateSeqs, wantLost)
	}
	for _, name := range []string{rundir.MarkdownFile, rundir.HTMLFile} {
		if !strings.Contains(f[name], "Lost and late messages") || !strings.Contains(f[name], "2, 3, 4") {
			t.Errorf("%s does not list the lost messages", name)
		}
	}
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("no jq")
	}
	line := s.LostJQ()
	cmd := exec.Command("sh", "-c", strings.Replace(line, "jq ", jq+" ", 1))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	var got []int64
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var a struct{ Seq int64 }
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, a.Seq)
	}
	slices.Sort(got)
	var every []int64
	for seq := int64(2); seq <= 30; seq++ {
		every = append(every, seq)
	}
	if !slices.Equal(got, every) {
		t.Errorf("the jq line lists %v, want %v", got, every)
	}
}

// TestHeaderNamesTheCommitOnce: the header's msgload row names the commit
// once when msgload's version already carries it.
func TestHeaderNamesTheCommitOnce(t *testing.T) {
	rows := buildRows("v1.2.0 (commit 0123456789ab, 2026-11-22T18:00:00Z)", "0123456789abcdef0123456789abcdef01234567", "2026-11-22T18:00:00Z", "")
	if n := strings.Count(rows[0].value, "commit"); n != 1 {
		t.Errorf("msgload row %q names the commit %d times", rows[0].value, n)
	}
	rows = buildRows("v1.2.0", "0123456789abcdef0123456789abcdef01234567", "", "")
	if !strings.Contains(rows[0].value, "commit 0123456789abcdef") {
		t.Errorf("msgload row %q lacks the commit", rows[0].value)
	}
}
