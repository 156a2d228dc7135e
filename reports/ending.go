package reports

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/msgload/msgload/rundir"
)

// The end of a message and the duplicates are functions of the set of the
// message's records, not of the order they arrived or were logged in
// (DESIGN.md, "Figures do not depend on arrival order"). A callback held back
// by the service (or a network) can arrive after a later one, and the sink
// logs in commit order; a record without a channel (vkok's, FAILED and
// EXPIRED may omit it) belongs to the item the message was on when its status
// changed, which only the record's own time (updatedAt) tells. So the records
// of a message are kept while the run is read (keepRecord) and judged once
// every one is in (judgeRecords):
//
//   - each is placed on its item of the chain by rundir.Chain.Place, walking
//     the message's records of one txId in the order of their own times
//     (updatedAt; the arrival time for a polled record, which has none);
//   - a (txId, channel, state) is one status: its first arrival (the earliest
//     received_at, whichever line holds it) is the one the figures use; each
//     later arrival is a duplicate, or a redelivery when the arrival before
//     it was refused by the sink on purpose;
//   - the step into chain item i is first shown by the earliest arrival of a
//     record on item i or later (or failing over from i-1): its time runs
//     from the step before (the first send for the first);
//   - a message ended twice (idempotency.duplicate_deliveries) when records
//     end it under two txIds (messaging) or with two terminal statuses
//     (notify), whichever arrived first.
//
// Cost: a record is 32 bytes (recList) kept from its arrival to the end of
// reading, in place of the ~80 bytes of running state a message with records
// used to keep; a message with one or two records costs about what it did,
// each duplicate arrival 32 bytes more. Repeated polls of one status are kept
// as one record.

// delRec is one record of a message as kept until it is judged.
type delRec struct {
	at    int64  // arrival at the sink (a poll's answer), unix ns
	upd   int64  // the status's own time (updatedAt), unix ns; at when the record has none
	tx    uint64 // hash of the txId (messaging), 0: none
	next  uint32 // the message's next record in recList (index+1), 0: none
	sid   uint8  // state, interned
	cid   uint8  // channel, interned; set from the chain when placed
	flags uint8  // rec… bits
	item  int8   // chain item, set when placed; -1: none
}

// delRec flags.
const (
	recChain   = 1 << iota // a messaging status record: judged by the chain
	recNotify              // a notification's webhook
	recPolled              // read by check_status: never a duplicate
	recRefused             // the sink refused the call on purpose
	recHeld                // the sink held its answer on purpose (a delay fault): the service may send it again
	recPlaced              // named no channel: its channel was set by placeRecords
)

// recList holds every message's records in blocks of recBlock: no slice per
// message, no copying as they grow; a message links its own (msgDelivery.head).
type recList struct {
	blocks [][]delRec
	n      uint32
	free   uint32 // the first record let go (release), linked by next; 0: none
	buf    []delRec
}

const recBlock = 1024

func (l *recList) get(i uint32) *delRec { i--; return &l.blocks[i/recBlock][i%recBlock] }

// push adds r to md's records.
func (l *recList) push(md *msgDelivery, r delRec) {
	if i := l.free; i != 0 {
		p := l.get(i)
		l.free = p.next
		r.next = md.head
		*p = r
		md.head = i
		return
	}
	if l.n%recBlock == 0 {
		l.blocks = append(l.blocks, make([]delRec, recBlock))
	}
	r.next = md.head
	l.blocks[l.n/recBlock][l.n%recBlock] = r
	l.n++
	md.head = l.n
}

// records appends md's records to buf, in their list's order, and keeps
// them (release lets them go).
func (l *recList) records(md *msgDelivery, buf []delRec) []delRec {
	for i := md.head; i != 0; {
		r := l.get(i)
		buf = append(buf, *r)
		i = r.next
	}
	return buf
}

// release lets md's records go (their places are reused) and returns a copy
// of them, valid until the next release: a run analysed in passes judges a
// message when it lands, and holds only the records of those in flight.
func (l *recList) release(md *msgDelivery) []delRec {
	l.buf = l.buf[:0]
	for i := md.head; i != 0; {
		r := l.get(i)
		l.buf = append(l.buf, *r)
		next := r.next
		r.next = l.free
		l.free = i
		i = next
	}
	md.head = 0
	return l.buf
}

// keepRecord keeps the record e tells of message md until every record is read.
func (a *analyzer) keepRecord(md *msgDelivery, e *rundir.Event, polled bool) {
	c := e.Corr
	if sane(c.FirstSent) && a.owns(c) { // another run's tag carries that run's send time
		if t := c.FirstSent.UnixNano(); md.first == 0 || t < md.first {
			md.first = t
		}
	}
	at := e.ReceivedAt.UnixNano()
	r := delRec{at: at, upd: at, sid: a.states.id(c.State), item: -1}
	if c.Channel != "" {
		r.cid = a.chans.id(c.Channel)
	}
	switch {
	case e.API == rundir.APINotify:
		r.flags |= recNotify
	case e.Kind == rundir.KindCallback:
		r.flags |= recChain
		if u, ok := updatedAt(e.Payload); ok {
			r.upd = u
		}
	}
	if c.Key != "" && e.API != rundir.APINotify {
		r.tx = hashID(c.Key)
	}
	if id := e.ServiceID(); id != "" && e.API == rundir.APINotify {
		// Two notifications under one externalId (a service that forgot it)
		// are two statuses each, not duplicates of one: the second is a
		// duplicate delivery (Idempotency), the first's figures its own.
		r.tx = hashID(id)
	}
	if e.Answered != 0 && !is2xx(e.Answered) {
		r.flags |= recRefused
		a.s.Delivery.Refused++
	}
	if e.Delayed > 0 {
		r.flags |= recHeld
	}
	if polled {
		r.flags |= recPolled
		if a.samePoll(md, r) {
			return
		}
	}
	a.recs.push(md, r)
}

// samePoll folds a poll that read a status already read into that record
// (the earlier of the two): polls read one status many times.
func (a *analyzer) samePoll(md *msgDelivery, r delRec) bool {
	for i := md.head; i != 0; {
		p := a.recs.get(i)
		if p.flags&recPolled != 0 && p.tx == r.tx && p.cid == r.cid && p.sid == r.sid {
			p.at, p.upd = min(p.at, r.at), min(p.upd, r.upd)
			return true
		}
		i = p.next
	}
	return false
}

var updatedAtKey = []byte(`"updatedAt"`)

// updatedAt reads a status record's updatedAt (the time of its state change)
// from the body the sink logged: a quick look for the one key, else
// encoding/json; false when there is none that reads as a time.
func updatedAt(payload []byte) (int64, bool) {
	i := bytes.Index(payload, updatedAtKey)
	if i < 0 {
		return 0, false
	}
	v, quick := payload[i+len(updatedAtKey):], bytes.Count(payload, updatedAtKey) == 1
	v = bytes.TrimLeft(v, " \t\r\n")
	quick = quick && len(v) > 0 && v[0] == ':'
	if quick {
		v = bytes.TrimLeft(v[1:], " \t\r\n")
		quick = len(v) > 1 && v[0] == '"'
	}
	if quick {
		end := bytes.IndexByte(v[1:], '"')
		quick = end >= 0 && bytes.IndexByte(v[1:1+end], '\\') < 0
		if quick {
			v = v[1 : 1+end]
		}
	}
	s := string(v)
	if !quick {
		var p struct {
			UpdatedAt string `json:"updatedAt"`
		}
		if json.Unmarshal(payload, &p) != nil {
			return 0, false
		}
		s = p.UpdatedAt
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !sane(t) {
		return 0, false
	}
	return t.UnixNano(), true
}

// judgeAllRecords judges every message's records, once all are read, and
// lets the records go.
func (a *analyzer) judgeAllRecords() {
	var buf []delRec
	a.msgs.each(func(_ int64, m *msg) {
		if m.d == nil {
			return
		}
		buf = a.recs.records(m.d, buf[:0])
		m.d.head = 0
		a.judgeRecords(m, buf)
	})
	a.recs = recList{}
}

// judgeRecords judges the set of records of m: where each belongs, the
// failover steps they show, the duplicates, and the message's end.
func (a *analyzer) judgeRecords(m *msg, recs []delRec) {
	first := m.first
	if m.d.first != 0 {
		first = m.d.first
	}
	a.placeRecords(recs)
	a.countSteps(m.d, recs, first)
	a.judgeStatuses(m.d, recs, first)
}

// byOwnTime orders a message's records for placing them: per txId, by the
// status's own time; at one time a record with a channel first (a failover
// and the next item's status in one instant: the step comes first), then by
// arrival, and the rest only so that the order is total.
func byOwnTime(x, y delRec) int {
	return cmp.Or(cmp.Compare(x.tx, y.tx), cmp.Compare(x.upd, y.upd), cmp.Compare(noChannel(x), noChannel(y)),
		cmp.Compare(x.at, y.at), cmp.Compare(x.sid, y.sid), cmp.Compare(x.cid, y.cid), cmp.Compare(x.flags, y.flags))
}

func noChannel(r delRec) int {
	if r.cid == 0 {
		return 1
	}
	return 0
}

// placeRecords sets each messaging record's chain item (and the channel of
// one that named none) by the one rule of rundir.Chain, walking each txId's
// records in their own time's order: the item the message is on is 0 at
// first, then one past each item a record fails over from.
func (a *analyzer) placeRecords(recs []delRec) {
	slices.SortFunc(recs, byOwnTime)
	cur := 0
	for i := range recs {
		r := &recs[i]
		if i == 0 || r.tx != recs[i-1].tx {
			cur = 0
		}
		if r.flags&recChain == 0 {
			continue
		}
		if r.cid == 0 && placedCopy(recs[:i], r) {
			continue
		}
		state := a.states.names[r.sid]
		idx := a.chain.Place(a.chans.names[r.cid], state, cur)
		if idx < 0 {
			continue
		}
		r.item = int8(idx)
		if r.cid == 0 {
			r.cid = a.chans.id(a.chain[idx].Channel)
			r.flags |= recPlaced
		}
		next := idx
		if a.chain.FailsOver(state, idx) {
			next++
		}
		cur = max(cur, next)
	}
}

// placedCopy places r, a record without a channel, where an earlier copy
// of it was placed (the same txId, state and own time: one status change the
// service sent twice), reporting whether there was one. Placed anew, the
// copy would land after the failover step its first copy made (EXPIRED on
// vkok, then a copy of it on the next item, where it ends the message).
// Records of one txId and time are next to each other in byOwnTime's order.
func placedCopy(before []delRec, r *delRec) bool {
	for k := len(before) - 1; k >= 0 && before[k].tx == r.tx && before[k].upd == r.upd; k-- {
		if p := before[k]; p.flags&recPlaced != 0 && p.sid == r.sid {
			r.item, r.cid, r.flags = p.item, p.cid, r.flags|recPlaced
			return true
		}
	}
	return false
}

// countSteps counts the failover steps the records show (once per message)
// and times them: the step into chain item i from the step before it (the
// first send for the first) to the first arrival of a record that shows it.
// Without a chain, or on a channel it does not name, every change of channel
// in the records' own order is a step.
func (a *analyzer) countSteps(md *msgDelivery, recs []delRec, first int64) {
	var stepAt [31]int64 // first arrival showing the step into item i
	top := 0
	for _, r := range recs {
		if r.item < 0 {
			continue
		}
		upto := int(r.item)
		if a.chain.FailsOver(a.states.names[r.sid], upto) {
			upto++
		}
		upto = min(upto, len(stepAt)-1)
		for i := 1; i <= upto; i++ {
			if stepAt[i] == 0 || r.at < stepAt[i] {
				stepAt[i] = r.at
			}
		}
		top = max(top, upto)
	}
	stepped := top > 0
	since := first
	for i := 1; i <= top; i++ {
		a.step(md, a.chain[i-1].Channel, a.chain[i].Channel, stepAt[i]-since)
		since = stepAt[i]
	}
	var last uint8
	for _, r := range recs { // in their own time's order (placeRecords)
		if r.item < 0 && r.cid != 0 && last != 0 && last != r.cid {
			a.step(md, a.chans.names[last], a.chans.names[r.cid], r.at-since)
			since, stepped = r.at, true
		}
		if r.cid != 0 {
			last = r.cid
		}
	}
	if stepped {
		a.s.Delivery.Failover.Messages++
		md.lastStepAt = since
	}
	md.item, md.lastChan = uint8(min(top, 255)), last
}

// step records one failover step of a message, d nanoseconds long.
func (a *analyzer) step(md *msgDelivery, from, to string, d int64) {
	k := [2]string{from, to}
	h := a.steps[k]
	if h == nil {
		h = a.newHist(false)
		a.steps[k] = h
		for _, v := range a.stepWait[k] {
			h.censor(v)
		}
		delete(a.stepWait, k)
	}
	h.observe(float64(d) / 1e9)
	md.reached |= 1 << a.chans.id(to)
}

// byStatus orders placed records by status — (txId, channel, state) — then
// by arrival: the first of each status is the one the figures use.
func byStatus(x, y delRec) int {
	return cmp.Or(cmp.Compare(x.tx, y.tx), cmp.Compare(x.cid, y.cid), cmp.Compare(x.sid, y.sid),
		cmp.Compare(x.at, y.at), cmp.Compare(x.flags, y.flags), cmp.Compare(x.upd, y.upd))
}

// judgeStatuses takes each status of the message once, at its first arrival:
// the latency by state, the channels reached, the duplicates, and the end —
// the first arrival of a status that ends the message (rundir.Chain.Ends on
// its item), the final state the highest ranked of those.
func (a *analyzer) judgeStatuses(md *msgDelivery, recs []delRec, first int64) {
	slices.SortFunc(recs, byStatus)
	var lastEndTx uint64
	var ends, endedTxs int
	var final delRec
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].tx == recs[i].tx && recs[j].cid == recs[i].cid && recs[j].sid == recs[i].sid {
			j++
		}
		a.countArrivals(recs[i:j])
		f := recs[i]
		i = j
		state := a.states.names[f.sid]
		if first > 0 {
			h := a.byState[state]
			if h == nil {
				h = a.newHist(false)
				a.byState[state] = h
			}
			h.observe(float64(f.at-first) / 1e9)
		}
		if f.cid != 0 {
			md.reached |= 1 << f.cid
		}
		if f.flags&recChain != 0 && !a.chain.Ends(state, int(f.item)) {
			continue
		}
		ends++
		if f.tx != 0 && f.tx != lastEndTx {
			endedTxs++
			lastEndTx = f.tx
		}
		if md.terminalAt == 0 || f.at < md.terminalAt {
			md.terminalAt = f.at
		}
		if rank, best := stateRank[state], stateRank[a.states.names[final.sid]]; ends == 1 || rank > best || rank == best && f.at < final.at {
			final = f
		}
	}
	if ends == 0 {
		return
	}
	md.finalState, md.finalChan = final.sid, final.cid
	if final.cid == 0 {
		md.finalChan = channelBefore(recs, final)
	}
	if final.flags&recNotify != 0 {
		md.dupTerm = ends > 1 // two terminal statuses of one notification
	} else {
		md.dupTerm = endedTxs > 1 // ended under two txIds: the message was sent twice
	}
}

// countArrivals counts the arrivals of one status after its first (as, in
// arrival order): redelivered on request when the arrival before it was
// refused or held by the sink on purpose (the service sending again what the
// sink asked for: the sink's fault, never the service's duplicate; refused
// again, it is the sink's refusal only), else a duplicate. Polls read a
// status as often as they ask: never a duplicate.
func (a *analyzer) countArrivals(as []delRec) {
	d := &a.s.Delivery
	var prev *delRec
	for k := range as {
		r := &as[k]
		if r.flags&recPolled != 0 {
			continue
		}
		switch {
		case prev == nil:
		case prev.flags&(recRefused|recHeld) != 0:
			if r.flags&recRefused == 0 {
				d.Redelivered++
			}
			a.retries.observe(float64(r.at-prev.at) / 1e9)
		default:
			d.Duplicates++
		}
		prev = r
	}
}

// channelBefore is the channel of the latest record with one at or before r
// in the records' own time: where an end that names no channel, and has no
// chain to place it, happened. 0: none.
func channelBefore(recs []delRec, r delRec) uint8 {
	var best *delRec
	for k := range recs {
		x := &recs[k]
		if x.cid == 0 || cmp.Or(cmp.Compare(x.upd, r.upd), cmp.Compare(x.at, r.at)) > 0 {
			continue
		}
		if best == nil || cmp.Or(cmp.Compare(x.upd, best.upd), cmp.Compare(x.at, best.at), cmp.Compare(x.cid, best.cid)) > 0 {
			best = x
		}
	}
	if best == nil {
		return 0
	}
	return best.cid
}
