package characterise

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// RuleFailoverAfterTTL (messaging): seconds from the first channel's ttl
// running out to the service failing over (negative: before it).
const RuleFailoverAfterTTL = "failover.after_ttl"

// failedOver is one message of the failover probe that expired on its first
// channel: the bounds of its failover after the ttl, and a point between.
type failedOver struct{ lo, hi, at float64 }

// failoverFinding reads the failover probe: for each accepted message whose
// first channel's EXPIRED record came, when the service failed over against
// acceptance plus the ttl. The record left the service no later than the
// sink received it and the message was accepted no earlier than it was
// sent: the upper end is the receipt less the send less the ttl. The record's
// updatedAt (the service's clock: the same as the sink's for the embedded
// target, a real one's skew is not taken out) is no earlier than the
// failover, and the acceptance no later than the send's answer: the lower
// end is updatedAt less the answer less the ttl.
func (st *state) failoverFinding() reports.Finding {
	const rule = RuleFailoverAfterTTL
	pd, why := st.msgStatusData()
	switch {
	case pd == nil:
		return cannot(rule, probeMsgStatus, why)
	case len(st.base.Message.Scenario) < 2:
		return cannot(rule, probeMsgStatus, oneChannel)
	}
	fos, other, err := readFailovers(pd)
	if err != nil {
		return cannot(rule, probeMsgStatus, "its events.jsonl cannot be read: "+err.Error())
	}
	ev := fmt.Sprintf("%d messages accepted with a ttl of %d s on their first channel: %d expired on it, %d moved on or ended without EXPIRED", len(fos)+other, failoverTTL, len(fos), other)
	if len(fos) == 0 {
		return cannot(rule, probeMsgStatus, "no message's first channel expired (each was seen, failed or still pending within the wait)", ev)
	}
	return failoverInterval(fos, ev)
}

// failoverInterval is the interval every failover fell in, its value the
// median failover's estimate.
func failoverInterval(fos []failedOver, ev string) reports.Finding {
	lo, hi := math.Inf(1), math.Inf(-1)
	var at []float64
	for _, f := range fos {
		lo, hi = min(lo, f.lo), max(hi, f.hi)
		at = append(at, f.at)
	}
	slices.Sort(at)
	ev += "; " + failoverSide(lo, hi)
	f := interval(RuleFailoverAfterTTL, probeMsgStatus, lo, hi, ev)
	pointIn(&f, at[len(at)/2])
	return f
}

// failoverSide says where the failovers fell against the ttl.
func failoverSide(lo, hi float64) string {
	switch {
	case hi < 0:
		return "early: every failover came before the ttl ran out"
	case lo > 1:
		return "late: every failover came more than a second after the ttl"
	}
	return "at the ttl, within the interval's uncertainty"
}

// readFailovers reads the probe's accepted messages against their
// callbacks: each one with an EXPIRED record, and how many had none.
func readFailovers(pd *probeData) ([]failedOver, int, error) {
	sends := map[string]rundir.Attempt{}
	for _, a := range pd.attempts {
		if a.Code >= 200 && a.Code < 300 && a.TxID != "" {
			sends[a.TxID] = a
		}
	}
	expired := map[string]rundir.Event{}
	err := pd.eachEvent(func(e rundir.Event) error {
		if e.Kind != rundir.KindCallback || e.Corr == nil || e.Corr.State != rundir.StateExpired {
			return nil
		}
		if _, seen := expired[e.Corr.Key]; !seen {
			expired[e.Corr.Key] = e
		}
		return nil
	})
	var fos []failedOver
	ttl := float64(failoverTTL)
	for tx, a := range sends {
		e, ok := expired[tx]
		if !ok {
			continue
		}
		answer := a.Sent.Add(time.Duration(a.Latency * float64(time.Second)))
		f := failedOver{hi: e.ReceivedAt.Sub(a.Sent).Seconds() - ttl, lo: -ttl}
		if u := updatedAt(e.Payload); !u.IsZero() {
			f.lo = min(u.Sub(answer).Seconds()-ttl, f.hi)
			f.at = min(u.Sub(a.Sent).Seconds()-ttl, f.hi)
		} else {
			f.at = f.hi
		}
		fos = append(fos, f)
	}
	return fos, len(sends) - len(fos), err
}

// msgStatusData is the messaging-status probe's data, or why there is none
// to read.
func (st *state) msgStatusData() (*probeData, string) {
	pd := st.data[probeMsgStatus]
	switch {
	case st.plan.failWhy != "":
		return nil, st.plan.failWhy
	case pd == nil || pd.sum == nil:
		return nil, "the " + probeMsgStatus + " probe did not run or wrote no report"
	case pd.verdict == reports.VerdictError:
		return nil, distrusted
	}
	return pd, ""
}
