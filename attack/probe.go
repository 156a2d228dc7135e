package attack

import (
	"net/http"
	"sync"
	"time"

	"github.com/msgload/msgload/rundir"
)

// answerID is the id a send was answered: the notificationId, or for
// messaging the txId (a messaging resend answered another made a second
// message: the seed has no key to make it one).
func (e *engine) answerID(ans answer) string {
	if e.o.API == rundir.APIMessaging {
		return ans.TxID
	}
	return ans.NotificationID
}

// probe resends message m with the same body and externalId: once, then
// ProbeConcurrency times at once, and compares the ids (answerID); then,
// with Options.ProbeChangedBody, once with another text (its answer is the
// service's to choose: it is recorded, not compared).
func (e *engine) probe(m *message, want string) {
	n := m.attempts
	if e.o.ProbeInFlight > 0 { // numbered after the copies sent with the first
		n = max(n, e.inFlightFirst()+e.o.ProbeInFlight-1)
	}
	one := func(kind string, k int, body []byte) {
		a := e.attempt(m, OpSend, k)
		a.Probe = kind
		a.Intended = time.Now()
		ans, _ := e.exchange(e.halt, m.client, a, http.MethodPost, e.sendURL, body)
		e.prog.Probes.Add(1)
		if m.client.met != nil {
			m.client.met.m.probes.WithLabelValues(e.o.API).Inc()
		}
		if kind != rundir.ProbeChangedBody && a.Outcome == rundir.OutcomeOK && e.answerID(ans) != want {
			e.mismatch(m, a)
		}
		e.write(m.client, a)
	}
	if e.abort.Err() != nil {
		return
	}
	one(probeSequential, n+1, m.body)
	conc := e.o.ProbeConcurrency
	if conc <= 0 {
		conc = 2
	}
	var wg sync.WaitGroup
	for i := range conc {
		wg.Go(func() { one(probeConcurrent, n+2+i, m.body) })
	}
	wg.Wait()
	if b := changedBody(m.body); e.o.ProbeChangedBody && b != nil && e.abort.Err() == nil {
		one(rundir.ProbeChangedBody, n+2+conc, b)
	}
}
