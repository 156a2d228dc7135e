package reports

import (
	"fmt"
	"math"

	"github.com/dustin/go-humanize"
)

// The run's storage (issue 23: what a soak does to the disk). Three records
// of run.json say the environment's storage failed the run: disk_low, the
// disk guard stopped its sends (harness/disk.go), sink_write_errors, the
// calls its sink could not write, and sink_unread, what the run could not
// read of a standalone sink. Each makes the run incomplete when it can have
// changed a figure — never pass, and never the service's fail.

// diskReason adds the reason of a run whose disk ran low (run.json
// disk_low): the environment's, incomplete. The disk guard stopped its sends
// (harness/disk.go), so its plan was not sent; when the disk ran low in the
// grace period, the callbacks then may not have been written.
func (a *analyzer) diskReason() {
	d := a.meta.DiskLow
	if d == nil {
		return
	}
	when := ts(d.At)
	if !a.meta.Start.IsZero() && d.At.After(a.meta.Start) {
		when += fmt.Sprintf(" (%s after the start)", dur(d.At.Sub(a.meta.Start).Seconds()))
	}
	free, reserve := DiskSizes(d.Free, d.Reserve)
	what := "its sends were stopped there; the figures cover what ran until then and its grace period"
	if !a.meta.AttackEnd.IsZero() && d.At.After(a.meta.AttackEnd) {
		what = "in the grace period, after the sends: callbacks that came then may not have been written"
	}
	a.s.early = append(a.s.early, reason(WhoseEnvironment, VerdictIncomplete,
		fmt.Sprintf("the run's disk ran low at %s: %s had %s free, under the %s reserve the run keeps; %s", when, d.Path, free, reserve, what),
		"free space on that disk (the plan's size: msgload validate), or write the run directory to a larger one (--out), and run again"))
}

// failedReason is the verdict's reason when the attack stopped on a
// failure of msgload's own (run.json failed): it sent less than its plan
// for no reason of the service's — a few per cent short would have read as
// a plan held (loadShort) and the run could have passed, the cause told on
// stderr alone. The environment's (the disk under the attempt log, most
// often), the run incomplete.
func (a *analyzer) failedReason() {
	if a.meta.Failed == "" {
		return
	}
	a.s.early = append(a.s.early, reason(WhoseEnvironment, VerdictIncomplete,
		"the sends stopped before the plan was sent, on a failure of msgload's own: "+a.meta.Failed+"; the figures cover what was sent until then and its grace period",
		"fix what failed (the run directory's disk, the scenario's message template) and run again"))
}

// sinkWriteReason says what the run's sink's write failures (run.json
// sink_write_errors) do to the figures: it answered those calls 500 or 503,
// so their senders may have retried them. When every accepted message has
// its final status nothing is missing: a warning. When some have none,
// their callbacks may be among the calls the sink failed — the environment's
// (a full or failing disk), not the service's loss — so the run is
// incomplete, whatever the thresholds on delivery say.
func (a *analyzer) sinkWriteReason() {
	n := a.meta.SinkWriteErrors
	if n <= 0 || !a.s.Delivery.Measured {
		return
	}
	what := fmt.Sprintf("the sink could not write %s sent to it (it answered %s 500 or 503: a full or failing disk, or stalled storage)",
		Plural(n, "call"), oneOr(n, "it", "them"))
	a.sinkLogReason(what, "their senders sent them again: every accepted message has its final status", "those calls",
		"find why the sink could not write (its disk's free space, errors in the system log) and run again")
}

// sinkLogReason says what a doubt about the sink's log (what) does to the
// verdict: a warning (what; ok) when every accepted message has its final
// status — nothing is missing — and the run incomplete, the environment's,
// when some have none: their callbacks may be among the calls the sink did
// not log (among), so their loss is not known to be the service's.
func (a *analyzer) sinkLogReason(what, ok, among, next string) {
	lost := a.s.Delivery.Lost
	if lost == 0 {
		a.s.Warnings = append(a.s.Warnings, what+"; "+ok)
		return
	}
	a.s.sinkDoubt = what
	a.s.early = append(a.s.early, reason(WhoseEnvironment, VerdictIncomplete,
		fmt.Sprintf("%s, and %s no final status: %s callbacks may be among %s, so the delivery figures (lost, latency) are not known to be the service's",
			what, Plural(lost, "accepted message")+oneOr(lost, " has", " have"), oneOr(lost, "its", "their"), among), next))
}

// DiskSizes are the free space and the reserve of a disk for people, in
// binary units (200 MiB, 256 MiB), or in bytes when those would read the
// same (59 GiB under 59 GiB).
func DiskSizes(free, reserve uint64) (string, string) {
	f, r := humanize.IBytes(free), humanize.IBytes(reserve)
	if f == r && free != reserve {
		return humanize.Comma(int64(min(free, math.MaxInt64))) + " bytes", humanize.Comma(int64(min(reserve, math.MaxInt64))) + " bytes"
	}
	return f, r
}

// sinkUnreadReason says what the run could not read of its standalone sink
// (run.json sink_unread) leaves unknown. Events the copy did not reach read
// as calls never made: fewer duplicates, late events or callbacks than the
// sink took, so the run is incomplete whatever else it shows. An unread
// count of write failures hides a sink that could not write callbacks: with
// every accepted message's final status nothing is missing (a warning);
// with some missing, their loss may be the sink's, not the service's.
func (a *analyzer) sinkUnreadReason() {
	u := a.meta.SinkUnread
	if u == nil {
		return
	}
	if u.Events != "" {
		a.s.early = append(a.s.early, reason(WhoseEnvironment, VerdictIncomplete,
			"the copy of the sink's events did not finish ("+u.Events+"): the callbacks, duplicates and late events the sink took after it are not in the figures",
			"copy events.jsonl from the sink into the run directory and run msgload report on it again; find why the sink's read API failed"))
	}
	if u.WriteErrors == "" || !a.s.Delivery.Measured {
		return
	}
	a.sinkLogReason("the sink's count of calls it could not write is unknown ("+u.WriteErrors+")",
		"every accepted message has its final status all the same", "calls the sink could not write",
		"make the sink's GET /v1/stats readable with the run's credentials (and the sink run through the whole run), and run again")
}
