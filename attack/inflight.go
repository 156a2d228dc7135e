package attack

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/msgload/msgload/rundir"
)

// inFlight is the copies of a probed message sent at once with its first
// send, before any answer (Options.ProbeInFlight): their attempts are
// written once the message's own answer is known, to compare the ids.
type inFlight struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	got []inFlightCopy
}

type inFlightCopy struct {
	a  *rundir.Attempt
	id string // the notificationId it was answered
}

// inFlightFirst is the attempt number of a message's first in-flight copy:
// past every attempt its send may make (the first, the policy's retries,
// one retry after a refused token), so the numbers never meet.
func (e *engine) inFlightFirst() int { return e.o.Retry.Max + 3 }

// wantsInFlight is whether m's first send goes with in-flight copies.
func (e *engine) wantsInFlight(m *message) bool {
	return e.o.ProbeInFlight > 0 && e.o.Probes > 0 && !m.repeat && m.gaveUp == "" && rundir.Probed(m.seq, e.o.Probes)
}

// startInFlight sends ProbeInFlight copies of m (same body, same
// externalId) at once, now: with the first send, still in flight.
func (e *engine) startInFlight(m *message) *inFlight {
	fl := &inFlight{}
	for i := range e.o.ProbeInFlight {
		fl.wg.Go(func() {
			a := e.attempt(m, OpSend, e.inFlightFirst()+i)
			a.Probe, a.Intended = rundir.ProbeInFlight, time.Now()
			ans, _ := e.exchange(e.halt, m.client, a, http.MethodPost, e.sendURL, m.body)
			fl.mu.Lock()
			fl.got = append(fl.got, inFlightCopy{a, ans.NotificationID})
			fl.mu.Unlock()
		})
	}
	return fl
}

// finish waits for the copies and writes them, each compared with the id
// the message's own send was answered (want; "" when it was not accepted:
// then nothing is compared). It returns the id a copy was accepted with (""
// for none): a copy the service took first holds the key, and the own send
// is the one answered 409 (sim's inFlight: "409").
func (fl *inFlight) finish(e *engine, m *message, want string) (accepted string) {
	fl.wg.Wait()
	for _, c := range fl.got {
		if accepted == "" && c.a.Outcome == rundir.OutcomeOK {
			accepted = c.id
		}
		e.prog.Probes.Add(1)
		if m.client.met != nil {
			m.client.met.m.probes.WithLabelValues(e.o.API).Inc()
		}
		if want != "" && c.a.Outcome == rundir.OutcomeOK && c.id != want {
			e.mismatch(m, c.a)
		}
		e.write(m.client, c.a)
	}
	return accepted
}

// mismatch marks a: a probe answered with another notificationId than its
// message's.
func (e *engine) mismatch(m *message, a *rundir.Attempt) {
	a.Mismatch = true
	e.prog.Mismatches.Add(1)
	if m.client.met != nil {
		m.client.met.m.mismatches.WithLabelValues(e.o.API).Inc()
	}
}

// changedBody is a notification's body with another notificationText (its
// own with " (changed)" after it), the rest as it was: the same externalId.
func changedBody(body []byte) []byte {
	var b map[string]json.RawMessage
	if json.Unmarshal(body, &b) != nil {
		return nil
	}
	var text string
	if json.Unmarshal(b["notificationText"], &text) != nil {
		return nil
	}
	t, _ := json.Marshal(text + " (changed)")
	b["notificationText"] = t
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(b) != nil {
		return nil
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}
