package attack

import (
	"net/http"
	"net/url"
	"time"

	"github.com/msgload/msgload/rundir"
)

// terminal reports whether a polled state ends the message, by the one
// end-of-message rule (rundir.Chain); *cur is the item the message is on, for
// a record without a channel (placed by rundir.Chain.Place).
func (e *engine) terminal(state, channel string, cur *int) bool {
	chain := rundir.ParseChain(e.o.Chain)
	i := chain.Place(channel, state, *cur)
	if chain.FailsOver(state, i) {
		*cur = max(*cur, i+1)
	}
	return chain.Ends(state, i)
}

// poll asks check-status for m every Interval until a terminal state or Until.
func (e *engine) poll(m *message, txID string) {
	p := e.o.Poll
	deadline := m.first.Add(p.Until)
	u := e.statusURL + url.PathEscape(txID)
	next := time.Now().Add(p.Interval)
	cur := 0
	for k := 1; ; k++ {
		if next.After(deadline) || !e.sleep(time.Until(next)) {
			return
		}
		a := e.attempt(m, opCheckStatus, k)
		a.ExternalID = ""
		a.Intended = next
		a.TxID = txID
		ans, _ := e.exchange(e.abort, m.client, a, http.MethodGet, u, nil)
		if a.TxID == "" {
			a.TxID = txID
		}
		e.write(m.client, a)
		if a.Outcome == rundir.OutcomeOK && e.terminal(ans.State, ans.Channel, &cur) {
			return
		}
		next = next.Add(p.Interval)
		if now := time.Now(); next.Before(now) {
			next = now
		}
	}
}
