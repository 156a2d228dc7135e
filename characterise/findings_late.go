package characterise

import (
	"fmt"
	"slices"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// idemLate is how long after its first's answer a resend may leave and
// still be the probe's plan (right after the answer): a resend later than
// that may have reached the service after the key's window.
const idemLate = 250 * time.Millisecond

// resendKinds are the resends after the answer (the changed body's id is
// not compared: it is never Mismatch).
var resendKinds = []string{"sequential", "concurrent", rundir.ProbeChangedBody}

// resendDoubt is what the idempotency probe's resends after the answer say
// of the machine: how many were sent after an accepted first, how many of
// them got no answer, and how many got another id but left late.
type resendDoubt struct {
	planned, unanswered, late int
	latest                    time.Duration // the latest such resend's delay after its first's answer
}

// resendDoubts reads the doubt off the probe's attempts.
func resendDoubts(as []rundir.Attempt) resendDoubt {
	answered := map[int64]time.Time{}
	for _, a := range as {
		if a.Probe == "" && a.Attempt == 1 && is2xx(a.Code) {
			answered[a.Seq] = a.Sent.Add(time.Duration(a.Latency * float64(time.Second)))
		}
	}
	// each accepted first is resent once and idemCopies times at once (and
	// with another body, when the body has a text to change: counted when
	// one such resend was recorded): one not recorded was never sent
	per := 1 + idemCopies
	if slices.ContainsFunc(as, func(a rundir.Attempt) bool { return a.Probe == rundir.ProbeChangedBody }) {
		per += idemChanged
	}
	d := resendDoubt{planned: len(answered) * per}
	d.unanswered = d.planned
	for _, a := range as {
		end, ok := answered[a.Seq]
		if !ok || !slices.Contains(resendKinds, a.Probe) || a.Code == 0 {
			continue
		}
		d.unanswered--
		if after := a.Sent.Sub(end); a.Mismatch && after > idemLate {
			d.late++
			d.latest = max(d.latest, after)
		}
	}
	d.unanswered = max(d.unanswered, 0)
	return d
}

// lateWhy is why a late resend's other id tells nothing, "" when none was.
func (d resendDoubt) lateWhy() string {
	if d.late == 0 {
		return ""
	}
	return fmt.Sprintf("%d resends answered with another notificationId left up to %s after their first's answer, later than planned (right after it): the key's window may have passed — no evidence about it",
		d.late, d.latest.Round(time.Millisecond))
}

// unansweredWhy names the resends after an accepted first that got no
// answer, "" when every one got one.
func (d resendDoubt) unansweredWhy() string {
	if d.unanswered == 0 {
		return ""
	}
	return fmt.Sprintf("%d of the %d resends after an accepted first were not answered (never sent: the run ended before them, or no answer came)", d.unanswered, d.planned)
}

// doubtIDs makes the resend rules' findings cannot tell when a late resend
// got another id (a "no" it would give is no evidence).
func (d resendDoubt) doubtIDs(fs []reports.Finding) {
	for i, f := range fs {
		if d.lateWhy() != "" && f.Value != reports.CannotTell {
			fs[i] = cannot(f.Rule, f.Probe, d.lateWhy()+" (the resends': "+f.Value+")", f.Evidence...)
		}
	}
}

// noteUnanswered adds the unanswered resends to the reason of each resend
// rule that cannot be told: what no answer left out.
func (d resendDoubt) noteUnanswered(fs []reports.Finding) {
	for i, f := range fs {
		if f.Value == reports.CannotTell && d.unansweredWhy() != "" && slices.Contains([]string{RuleRetrySameID, RuleCopiesSameID, RuleChangedBody}, f.Rule) {
			fs[i].Because += "; " + d.unansweredWhy()
		}
	}
}

// busyResends is the environment's reason for the idempotency probe's
// resends against the embedded simulator ("" when none): a resend sent
// late, or never answered, is the machine's (msgload's generator or the
// simulator in its process), never the service's.
func (st *state) busyResends() string {
	pd := st.data[probeIdempotency]
	if pd == nil || !st.base.Target.Embedded {
		return ""
	}
	d := resendDoubts(pd.attempts)
	why := cmpOr(d.lateWhy(), d.unansweredWhy())
	if why == "" {
		return ""
	}
	return tooBusy(why)
}
