package harness

import (
	"hash/maphash"
	"sync"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/rundir"
)

// tally tells the grace wait against a real target when every accepted
// message has a final status. The unit is the message (the scenario's
// sequence), not the id the service gave it: a retry after an unknown outcome
// ("processed, then reset") makes a second txId for the same message, and a
// final status for either ends it — but while any send's outcome is unknown
// the wait is never ended early (unsure): the other id's callbacks may still
// come. Accepted is counted as the report counts
// it (a send of the sequence answered 2xx), so the wait and the report agree.
//
// Events carrying this run's and part's tag give their sequence; the others
// (untagged: the service dropped trackData, or the scenario sends its own
// externalIds; or tagged by another run: a replay that kept a recording's
// externalIds) are joined by the id the service gave them — txId or
// notificationId, never the externalId, unique only per client — to the ids
// the service answered the run's own sends with, indexed as the attack
// records them. The index holds a 64-bit hash per id (about 40 bytes an
// entry), only for runs against a real target, and at most maxIndexed ids:
// past that, an untagged final status of a message not indexed is not
// counted, and the wait lasts until the grace period ends (longer, never
// shorter, than needed). A message that has its final status needs its ids
// no more (another final of it changes nothing): they are swept out each time
// the index doubles (issue 23: it held every id of the run), so it holds
// about the messages still waiting. The sequences' bits are a byte a
// sequence in pages (seqPages), not a map entry.
type tally struct {
	run   string
	part  string // rundir.Tag.Part of this part's messages
	seed  maphash.Seed
	chain rundir.Chain // the scenario's failover chain (messaging), set before the attack

	mu        sync.Mutex
	ids       map[uint64]int64 // hash of an id of a send → its sequence, while it is not done
	nextSweep int              // the size of ids at which the done ones are swept out
	msgs      seqPages         // sequence → msgAccepted | msgFinal | the chain item it is on << itemShift
	accepted  int64            // sequences with msgAccepted
	done      int64            // sequences with both bits
	// unsure: a send had an unknown outcome (a timeout, a reset, a 2xx that
	// was not the API's answer): the service may have made a message of it
	// under an id the run never got, whose callbacks — a duplicate delivery,
	// a failover — still come after the final status of the message's other
	// id. The wait then lasts the whole grace period: ended at the first
	// final status, it missed them (and idempotency.duplicate_deliveries
	// read 0).
	unsure bool
}

// minSweep is the least size of the tally's index at which it is swept.
const minSweep = 4096

// maxIndexed bounds the ids the tally remembers (about 170 MB at the cap).
const maxIndexed = 1 << 22

const (
	msgAccepted uint8 = 1 << iota
	msgFinal

	itemShift = 2 // the rest of a msgs entry: the chain item a message is on
)

func newTally(run, part string) *tally {
	return &tally{run: run, part: part, seed: maphash.MakeSeed(), ids: map[uint64]int64{}, nextSweep: minSweep}
}

func (t *tally) hash(id string) uint64 { return maphash.String(t.seed, id) }

// mark sets bit on seq; call with mu held.
func (t *tally) mark(seq int64, bit uint8) {
	old := t.msgs.get(seq)
	now := old | bit
	if now == old {
		return
	}
	t.msgs.set(seq, now)
	if bit == msgAccepted {
		t.accepted++
	}
	if now&(msgAccepted|msgFinal) == msgAccepted|msgFinal {
		t.done++
	}
}

// attempt takes one attempt of the attack: the ids of a send, and whether it
// was accepted.
func (t *tally) attempt(a *rundir.Attempt) {
	if (a.Op != "" && a.Op != attack.OpSend) || a.Seq <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range [...]string{a.TxID, a.NotificationID} {
		if id != "" && len(t.ids) < maxIndexed {
			t.ids[t.hash(id)] = a.Seq
		}
	}
	if len(t.ids) >= t.nextSweep {
		t.sweep()
	}
	if a.Code >= 200 && a.Code < 300 && (a.Class == rundir.ClassOK || a.Class == "") { // the report's rule: a 2xx that is the API's answer
		t.mark(a.Seq, msgAccepted)
	}
	if a.Outcome == rundir.OutcomeUnknown {
		t.unsure = true
	}
}

// event takes one event of the sink: a final status of one of the run's
// messages, by its tag or joined by its key.
func (t *tally) event(e *rundir.Event) {
	c := e.Corr
	if c == nil || (e.Kind != rundir.KindCallback && e.Kind != rundir.KindWebhook) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	seq := int64(0)
	switch {
	case c.Run == t.run && c.Part == t.part:
		seq = c.Seq
	case c.Run == t.run:
		return // another part's message
	default:
		if id := e.ServiceID(); id != "" {
			seq = t.ids[t.hash(id)]
		}
	}
	if seq <= 0 {
		return
	}
	// The end of a message by the one rule (rundir.Chain) and the scenario's
	// chain, as the report judges it: an untagged callback carries no chain,
	// so the sink's own judgement of it is by state alone.
	final := e.Kind == rundir.KindWebhook
	if !final {
		v := t.msgs.get(seq)
		cur := int(v >> itemShift)
		i := t.chain.Place(c.Channel, c.State, cur)
		if t.chain.FailsOver(c.State, i) && i+1 > cur && i+1 < 64 {
			t.msgs.set(seq, v&(msgAccepted|msgFinal)|uint8(i+1)<<itemShift)
		}
		final = t.chain.Ends(c.State, i)
	}
	if final {
		t.mark(seq, msgFinal)
	}
}

// sweep drops the ids of the messages that are done, into a new map (a map
// does not shrink), and sets the next sweep at twice what is left; call with
// mu held.
func (t *tally) sweep() {
	kept := make(map[uint64]int64, len(t.ids)/2)
	for h, seq := range t.ids {
		if t.msgs.get(seq)&(msgAccepted|msgFinal) != msgAccepted|msgFinal {
			kept[h] = seq
		}
	}
	t.ids = kept
	t.nextSweep = max(minSweep, 2*len(kept))
}

// complete reports whether every accepted message has a final status, and
// no send had an unknown outcome (unsure).
func (t *tally) complete() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done >= t.accepted && !t.unsure
}

// tallyRecorder hands every attempt to the tally before the run's recorder.
type tallyRecorder struct {
	attack.Recorder
	t *tally
}

func (r tallyRecorder) Record(a *rundir.Attempt, res *vegeta.Result) error {
	r.t.attempt(a)
	return r.Recorder.Record(a, res)
}

// tallyPage is how many sequences a page of seqPages holds.
const tallyPage = 4096

// seqPages is a byte a sequence, in pages made as sequences land in them
// (a part's sequences are dense from 1).
type seqPages map[int64]*[tallyPage]uint8

func (p seqPages) get(seq int64) uint8 {
	if pg := p[seq/tallyPage]; pg != nil {
		return pg[seq%tallyPage]
	}
	return 0
}

// set gives seq the byte v; seqPages is made by its first set.
func (p *seqPages) set(seq int64, v uint8) {
	if *p == nil {
		*p = seqPages{}
	}
	pg := (*p)[seq/tallyPage]
	if pg == nil {
		pg = new([tallyPage]uint8)
		(*p)[seq/tallyPage] = pg
	}
	pg[seq%tallyPage] = v
}
