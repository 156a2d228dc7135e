package reports

import (
	"fmt"
	"time"

	"github.com/msgload/msgload/rundir"
)

// A carried analysis that reads the sink's events too (NewCarried with
// events: a threshold on delivery.duplicates, delivery.malformed or
// delivery.unauthorized judged live) is fed events.jsonl as the sink writes
// it beside attempts.jsonl, each record read by the analyzer as the file's
// analysis reads it (event, delivered, flightEvent). What it cannot know
// is when a message has all its records: its callbacks come after its
// sends, seconds or minutes later, and a duplicate after its first copy.
// So a message is settled once it is quiet: its attacker sends no more for
// it (lastRecord), it was refused for good or a status the sink took ends
// it (ended: the rule judgeStatuses ends a message by), and no record of it
// came for carriedQuiet by the records' own clock (the newest record read,
// not the machine's) — a record's time taken as the reader's clock when it
// was read at most: one stamped ahead (a sink on a host whose clock runs
// ahead, a clock stepped forward) would otherwise make every message read
// before it quiet at once, or hold every one read after it until its time
// came. Any other message is held (a judgement lands it on
// its copy, as the file's analysis lands it at the file's end). A record of
// a message settled — a duplicate later than carriedQuiet, a status after an
// end — stops the carrying (errNotCarried), before any figure counts it:
// the judgements are a child's from the files from then on, slower, never
// other figures. So do runs whose callbacks the file's analysis joins by
// the id the service answered or reads in one pass (countSeqs: no tag of
// this run, a chain run.json does not name).
//
// The same rule settles the messages of a run via poll (a poll is a record
// of its message in attempts.jsonl; a status polled ends it as a callback
// does) and of a run with idempotency probes (the resends after a send's
// answer are records of its message), with events or without. Without
// them, and with delivery none, nothing ends a message but its sends: one
// is settled once its sends are done and it is quiet (awaitEnd).
//
// An incoming reply is counted as received, but not joined to the message
// it quotes: the file's analysis joins them on disk at the end, by the id
// the service answered (replyjoin.go), and no live threshold reads what
// the join gives (incoming.replies, incoming.reply_latency: only known
// after the grace period, summary.CheckLive). Those two figures of a
// carried summary are not the run's.
//
// What it holds is the messages not settled: rate × (delivery time +
// carriedQuiet), and those never ended (lost so far), up to
// carriedMaxHeld, past which it stops.

// carriedQuiet is how long a message ended is held after its newest record
// before it is settled.
const carriedQuiet = 10 * time.Second

// carriedMaxHeld is the most messages a carried analysis with events holds
// (a service losing most messages of a long run): past it, it stops.
const carriedMaxHeld = 200_000

// quietQueue is the messages touched, in the order their records were
// read from each file (attempts.jsonl, events.jsonl: each written as its
// records come, so nearly in their times' order), each with its newest
// record's time then: those quiet are at the heads.
type quietQueue struct {
	items [2][]quietItem // by file: quietAttempts, quietEvents
	head  [2]int
	now   int64 // the newest record's time read (unix ns)
	// read is the reader's clock when the lines being read were read
	// (unix ns; 0: none): no record's time is taken past it (stamp).
	read int64
	// events: the analysis reads events.jsonl (a carried analysis of a
	// run's polls or probes alone reads its sends alone).
	events bool
}

// awaitEnd says whether a message accepted is settled only once ended:
// its callbacks are read, or its polls are the records of its delivery;
// otherwise its sends done and quiet settle it.
func (a *analyzer) awaitEnd() bool {
	via := a.meta.Delivery.Via
	return via == "poll" || a.st.quiet.events && via != "none"
}

// The files a quietQueue's items come from.
const (
	quietAttempts = iota
	quietEvents
)

type quietItem struct {
	seq, at int64
}

// quietAfter notes that message seq (flight f) had a record at t (unix
// ns; 0: none placed in time) in file src. An item behind a later one of
// its file waits for it, which holds a message longer, never less.
func (a *analyzer) quietAfter(src int, seq int64, f *flight, t int64) {
	q := a.st.quiet
	t = q.stamp(t)
	q.now = max(q.now, t)
	f.last = max(f.last, t)
	q.items[src] = append(q.items[src], quietItem{seq: seq, at: f.last})
}

// stamp is record time t (unix ns; 0: none) as the quiet rule takes it: no
// later than the reader's clock when it was read, which a line read was
// written before.
func (q *quietQueue) stamp(t int64) int64 {
	if q.read > 0 && t > q.read {
		return q.read
	}
	return t
}

// settleQuiet settles every message quiet for carriedQuiet that its
// attacker is done with and that was refused for good or ended (see
// above); after a reading, never within a record's.
func (a *analyzer) settleQuiet() {
	q, await := a.st.quiet, a.awaitEnd()
	for src := range q.items {
		items, head := q.items[src], q.head[src]
		for head < len(items) && items[head].at < q.now-int64(carriedQuiet) {
			it := items[head]
			head++
			f := a.fly[it.seq]
			if f == nil || f.last != it.at || !f.done || await && f.m.accepted && !a.ended(f) {
				continue // settled already, touched since (a later item), or not done
			}
			a.land(it.seq, f)
			a.st.settled.add(it.seq)
		}
		if head > len(items)/2 && head > 1024 {
			items, head = items[:copy(items, items[head:])], 0
		}
		q.items[src], q.head[src] = items, head
	}
	if len(a.fly) > carriedMaxHeld && a.st.err == nil {
		a.st.err = fmt.Errorf("%w: more than %d messages held with no end", errNotCarried, carriedMaxHeld)
	}
}

// ended says whether the records of f read so far end its message by the
// rule judgeStatuses ends one by — a status its chain item ends on, any
// status of a notification — taken by the sink (not refused or held on
// purpose: the service sends those again).
func (a *analyzer) ended(f *flight) bool {
	md := f.m.d
	if md == nil {
		return false
	}
	buf := a.recs.records(md, a.endBuf[:0])
	a.endBuf = buf
	a.placeRecords(buf)
	for _, r := range buf {
		if r.flags&(recRefused|recHeld) == 0 && (r.flags&recChain == 0 || a.chain.Ends(a.states.names[r.sid], int(r.item))) {
			return true
		}
	}
	return false
}

// afterLast says whether a record of message seq may come after the last
// its attacker sends for it (lastRecord) in what a carried analysis reads:
// its callbacks (the sink's events read), its polls, its probes (the
// messages probed: rundir.Probed). A message none may follow is settled at
// its last send, not held until quiet.
func (a *analyzer) afterLast(seq int64) bool {
	q := a.st.quiet
	return q != nil && (q.events || a.meta.Delivery.Via == "poll" || rundir.Probed(seq, a.meta.Probes))
}

// answeredAt is when at's answer came (unix ns): its send and its latency;
// 0 when it cannot be placed in time.
func answeredAt(at *rundir.Attempt) int64 {
	t := sentAt(at)
	if t == 0 {
		return 0
	}
	return t + int64(max(at.Latency, 0)*1e9)
}

// carriedEvent reads one event of events.jsonl into a carried analysis, or
// stops it at one the file's analysis would read otherwise than in passes
// (countSeqs) or join at the end.
func (a *analyzer) carriedEvent(e rundir.Event) error {
	// An incoming reply is counted as received, not joined to its message
	// (incoming.replies, reply_latency: see above); a callback beside the
	// polls is counted, no record of a message (countSeqs).
	if e.Corr != nil && e.Kind != rundir.KindIncoming && a.meta.Delivery.Via != "poll" {
		if why := a.joinedOnce(&e, a.chain != nil); why != "" {
			return fmt.Errorf("%w: %s", errNotCarried, why)
		}
	}
	a.event(&e)
	if sane(e.ReceivedAt) {
		q := a.st.quiet
		q.now = max(q.now, q.stamp(e.ReceivedAt.UnixNano()))
	}
	return a.st.err
}
