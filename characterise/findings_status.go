package characterise

import (
	"fmt"
	"strings"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// RuleStatusAgrees (messaging): yes when check-status's final state of
// every probed message is its callbacks' final state.
const RuleStatusAgrees = "callbacks.status_agrees"

// opCheckStatus is the attempts' op of a check-status poll.
const opCheckStatus = "check_status"

// statusFinding compares, for each message of the messaging-status probe
// the service accepted, the last state check-status answered (the polls
// stop at a final one) with the state of the callback the sink found final:
// no when one disagrees (how many, the first named); yes when every
// message has both and they agree; cannot tell when one lacks either
// within the wait (a missing message is not counted as agreeing).
func (st *state) statusFinding() reports.Finding {
	const rule = RuleStatusAgrees
	pd, why := st.msgStatusData()
	if pd == nil {
		return cannot(rule, probeMsgStatus, why)
	}
	var txs []string
	for _, a := range pd.attempts {
		if a.Code >= 200 && a.Code < 300 && a.TxID != "" {
			txs = append(txs, a.TxID)
		}
	}
	polled, called, err := readFinalStates(pd)
	if err != nil {
		return cannot(rule, probeMsgStatus, "its attempts or events cannot be read: "+err.Error())
	}
	c := compareStatus(txs, polled, called)
	ev := fmt.Sprintf("%d messages accepted: %d with both final states, %d of them disagree%s; %d without a final state from check-status or from the callbacks within the wait",
		len(txs), c.both, c.disagree, c.first, c.missing)
	switch {
	case c.disagree > 0:
		return found(rule, probeMsgStatus, no, ev)
	case c.both == 0:
		return cannot(rule, probeMsgStatus, "no message had both a polled and a called-back final state", ev)
	case c.missing > 0:
		return cannot(rule, probeMsgStatus, fmt.Sprintf("%d of %d messages lacked one of the two final states: they may disagree", c.missing, len(txs)), ev)
	}
	return found(rule, probeMsgStatus, yes, ev)
}

// statusCompared counts messages by how their two final states compare.
type statusCompared struct {
	both, disagree, missing int
	first                   string // the first that disagrees, for the evidence
}

// compareStatus compares polled and called (txId → final state) over txs.
func compareStatus(txs []string, polled, called map[string]string) statusCompared {
	var c statusCompared
	for _, tx := range txs {
		p, c1 := polled[tx], called[tx]
		switch {
		case p == "" || c1 == "":
			c.missing++
		case p != c1:
			c.both++
			c.disagree++
			if c.first == "" {
				c.first = fmt.Sprintf(" (the first: %s, check-status %s, callbacks %s)", tx, p, c1)
			}
		default:
			c.both++
		}
	}
	return c
}

// readFinalStates reads the probe's last 2xx check-status state of each
// txId, and the state of each txId's callback the sink found final.
func readFinalStates(pd *probeData) (polled, called map[string]string, err error) {
	polled, called = map[string]string{}, map[string]string{}
	err = pd.eachAttempt(func(a rundir.Attempt) error {
		if a.Op == opCheckStatus && a.Code >= 200 && a.Code < 300 && a.TxID != "" && a.State != "" {
			polled[a.TxID] = strings.ToUpper(a.State)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	err = pd.eachEvent(func(e rundir.Event) error {
		if e.Kind == rundir.KindCallback && e.Corr != nil && e.Corr.Terminal && called[e.Corr.Key] == "" {
			called[e.Corr.Key] = strings.ToUpper(e.Corr.State)
		}
		return nil
	})
	return polled, called, err
}
