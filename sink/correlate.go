package sink

import (
	"hash/maphash"
	"sync"
	"time"

	"github.com/msgload/msgload/rundir"
)

// DefaultMaxTracked is how many messages the correlation table remembers.
const DefaultMaxTracked = 1 << 20

// msgState is what the sink remembers of one message: about 24 bytes of table
// entry, whatever the size of its key.
type msgState struct {
	// seen: bit 8·channel+state for a messaging (channel, state) that already
	// arrived — a duplicate is the same state on the same channel again, not
	// the same state on the next channel of a cascade; for notify, a status
	// hash bit.
	seen uint64
	// asked: the seen bits whose last arrival the sink refused or held on
	// purpose (a fault): the next arrival of that bit is redelivered on
	// request, not a duplicate.
	asked    uint64
	channel  uint8 // channel id of the last event that named one (0: none)
	item     uint8 // the chain item the message is on: 0 at first, i+1 after a failover step from i
	steps    uint8 // bit i: the failover step into chain[i] was counted
	terminal bool
	fault    uint8 // Fault.PerMessage: 0 not drawn yet, faultSpared, faultChosen
}

// The per-message fault draw, kept in msgState.fault.
const (
	faultSpared uint8 = 1 + iota
	faultChosen
)

// drawFault decides whether this call gets the sink's fault: per call, or
// with Fault.PerMessage once per message (st nil: a call with no message
// state, drawn per call), so that every arrival of a chosen message gets it.
func (s *Sink) drawFault(out *outcome, st *msgState) {
	f := s.opts.Fault
	if !f.active() {
		return
	}
	if f.PerMessage && st != nil {
		if st.fault == 0 {
			st.fault = faultSpared
			if f.Pick() {
				st.fault = faultChosen
			}
		}
		out.provoke = st.fault == faultChosen
	} else {
		out.provoke = f.Pick()
	}
	out.refuse = out.provoke && f.Code != 0 && (f.Code < 200 || f.Code > 299)
}

// table is the bounded correlation state: message key hash → msgState. Keys
// are 64-bit hashes under a per-sink random seed: two distinct keys collide
// with probability about n²/2⁶⁵ (3·10⁻⁸ at a million messages). The newest
// messages are in a map; every gen new ones the map is frozen into a
// generation (table.go): 9 bytes a message instead of the map's ~70 (issue
// 23: a run with callbacks grew by its table). Past max messages the
// oldest generation is forgotten.
type table struct {
	mu      sync.Mutex
	seed    maphash.Seed
	m       map[uint64]entry // the messages that came since the last generation was frozen
	gens    []*generation    // older messages, the oldest first
	dict    stateDict        // the distinct states of the generations' messages
	n       int              // messages remembered: the map's and the generations'
	max     int
	gen     int // how many new messages make a generation
	evicted uint64
	// spill holds the frozen generations' hashes and states (spill.go),
	// opened at the first freeze in spillDir ($TMPDIR when ""); noSpill
	// after it could not be opened, or once closed.
	spill    *spillFile
	spillDir string
	noSpill  bool
}

func newTable(max int) *table {
	if max <= 0 {
		max = DefaultMaxTracked
	}
	return &table{seed: maphash.MakeSeed(), m: make(map[uint64]entry), max: max, gen: genLen(max)}
}

func (t *table) hash(api, key string) uint64 {
	var h maphash.Hash
	h.SetSeed(t.seed)
	h.WriteString(api)
	h.WriteByte(0)
	h.WriteString(key)
	return h.Sum64()
}

// entry is a message of the table's map: its state, and the millisecond
// its tag says it was first sent (unix; 0: untagged), by which a generation
// frozen from it is found (table.go: sentRanges).
type entry struct {
	st   msgState
	sent int64
}

// sentMilli is the unix millisecond of a tag's first send, by which the
// table finds a tagged message's generation (0: no tag, or none before 1970).
func sentMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixMilli(), 0)
}

// update runs fn on the state of (api, key) under the table lock and stores the
// result; it returns how many old messages were forgotten to make room. sent
// is the millisecond the call's tag says the message was first sent
// (sentMilli; 0: untagged).
func (t *table) update(api, key string, sent int64, fn func(st *msgState, existed bool)) (evicted int) {
	h := t.hash(api, key)
	t.mu.Lock()
	defer t.mu.Unlock()
	st, at, ok := t.find(h, sent)
	fn(&st, ok)
	if ok {
		t.store(h, at, st)
		return 0
	}
	t.m[h] = entry{st: st, sent: sent}
	t.n++
	return t.admit()
}

// undo clears what one call set in the state of (api, key): the seen and step
// bits it added and the terminal mark it made. A message no longer remembered
// is left alone.
func (t *table) undo(api, key string, sent int64, seen uint64, steps uint8, terminal bool) {
	h := t.hash(api, key)
	t.mu.Lock()
	defer t.mu.Unlock()
	st, at, ok := t.find(h, sent)
	if !ok {
		return
	}
	st.seen &^= seen
	st.steps &^= steps
	if terminal {
		st.terminal = false
	}
	t.store(h, at, st)
}

// lookup reports whether (api, key) is remembered.
func (t *table) lookup(api, key string) bool {
	h := t.hash(api, key)
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _, ok := t.find(h, 0)
	return ok
}

// statusBits maps notification statuses to a bit of msgState.seen: the first 7
// distinct statuses get a bit each, any later one shares bit 7.
type statusBits struct {
	mu sync.Mutex
	m  map[string]uint8
}

func (b *statusBits) bit(s string) uint8 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]uint8{}
	}
	if v, ok := b.m[s]; ok {
		return v
	}
	if len(b.m) < 7 {
		v := uint8(1) << len(b.m)
		b.m[s] = v
		return v
	}
	return 1 << 7
}

// parseChain keeps the chain only when every channel is known and there are at
// most 8 items (one bit each in msgState.steps).
func parseChain(c []string) rundir.Chain {
	chain := rundir.ParseChain(c)
	if len(chain) > 8 {
		return nil
	}
	for _, l := range chain {
		if channelID(l.Channel) == 0 {
			return nil
		}
	}
	return chain
}

// ours reports whether a tag is of the sink's run and part: any msgload tag
// when the sink serves no run in particular (a standalone sink).
func (s *Sink) ours(t rundir.Tag) bool {
	return s.opts.RunID == "" || t.Owns(s.opts.RunID, s.opts.Part)
}

// seen records in st the arrival of the (message, state) of bit: a second
// arrival is redelivered on request when the sink refused or held the one
// before it on purpose, else a duplicate of the service's; an arrival the
// sink answers with its fault asks for the next one. An arrival the sink
// refuses again is neither: a refusal of the sink's (Event.Answered).
func (out *outcome) seen(st *msgState, bit uint64) {
	again := st.seen&bit != 0
	asked := again && st.asked&bit != 0
	out.redelivered = asked && !out.refuse
	out.duplicate = again && !asked
	if !again {
		out.setSeen = bit
	}
	st.seen |= bit
	if out.provoke {
		st.asked |= bit
	} else {
		st.asked &^= bit
	}
}

func (s *Sink) correlateCallback(ev *rundir.Event, body []byte, out *outcome) error {
	rec, err := ParseStatusRecord(body)
	if err != nil {
		return err
	}
	ev.Kind = rundir.KindCallback
	c := &rundir.Correlation{Key: rec.TxID, State: rec.State, Channel: rec.Channel}
	tag, terr := rundir.ParseTrackData(rec.TrackData)
	if terr == nil {
		c.Run, c.Part, c.Seq, c.FirstSent = tag.Run, tag.Part, tag.Seq, tag.First
		c.Matched = s.ours(tag)
	}
	chain := parseChain(tag.Chain)
	out.sent = sentMilli(c.FirstSent)
	out.evicted = s.tab.update(rundir.APIMessaging, rec.TxID, out.sent, func(st *msgState, _ bool) {
		ch := rec.Channel
		idx := -1
		if chain != nil {
			// A record without a channel (FAILED and EXPIRED may omit it; vkok
			// is not in the record's enum) is placed by rundir.Chain.Place: a
			// DELIVERED, NOT_DELIVERED or SEEN on the first vkok item from the
			// one the message is on, FAILED and EXPIRED on that item (live, in
			// arrival order; the report places them by their own time).
			idx = chain.Place(ch, rec.State, int(st.item))
			if ch == "" && idx >= 0 {
				ch = chain[idx].Channel
			}
		}
		if ch == "" && st.channel != 0 {
			ch = channels[st.channel]
		}
		bit := uint64(1) << (8*uint(channelID(ch)) + uint(stateIndex(rec.State)))
		s.drawFault(out, st)
		out.seen(st, bit)
		if chain != nil && idx >= 0 {
			// A step into chain[i] is counted once, from whichever event shows it
			// first: an event on chain[i], or a failover from chain[i-1].
			if idx >= 1 && st.steps&(1<<idx) == 0 {
				st.steps |= 1 << idx
				out.setSteps |= 1 << idx
				out.steps = append(out.steps, [2]string{chain[idx-1].Channel, chain[idx].Channel})
			}
			if chain.FailsOver(rec.State, idx) && st.steps&(1<<(idx+1)) == 0 {
				st.steps |= 1 << (idx + 1)
				out.setSteps |= 1 << (idx + 1)
				out.steps = append(out.steps, [2]string{chain[idx].Channel, chain[idx+1].Channel})
			}
			next := idx
			if chain.FailsOver(rec.State, idx) {
				next = idx + 1
			}
			st.item = max(st.item, uint8(next))
		} else if id := channelID(rec.Channel); id != 0 && st.channel != 0 && st.channel != id {
			out.steps = append(out.steps, [2]string{channels[st.channel], rec.Channel})
		}
		if id := channelID(rec.Channel); id != 0 {
			st.channel = id
		}
		c.Terminal = chain.Ends(rec.State, idx)
		if c.Terminal && !st.terminal {
			st.terminal = true
			out.newTerminal = true
		}
	})
	out.api, out.key = rundir.APIMessaging, rec.TxID
	c.Duplicate, c.Redelivered = out.duplicate, out.redelivered
	c.FailoverStep = len(out.steps) > 0
	out.unmatched = !c.Matched
	out.stateLabel = rec.State
	out.channelLabel = orNone(rec.Channel)
	if c.Matched && !out.duplicate && !out.redelivered {
		c.Latency = ev.ReceivedAt.Sub(c.FirstSent).Seconds()
		out.latency, out.hasLatency = c.Latency, true
	}
	ev.Corr = c
	return nil
}

func (s *Sink) correlateWebhook(ev *rundir.Event, body []byte, out *outcome) error {
	wh, err := parseWebhook(body)
	if err != nil {
		return err
	}
	ev.Kind = rundir.KindWebhook
	// A notification is known by its tag (unique per run, part and message),
	// else by the notificationId the service gave it: an externalId of the
	// client's own is unique only per client, and two clients (or two runs)
	// sending order-1 are two notifications.
	key := wh.NotificationID
	c := &rundir.Correlation{State: wh.Status, Terminal: true}
	if tag, terr := rundir.ParseExternalID(wh.ExternalID); terr == nil {
		key = wh.ExternalID
		c.Run, c.Part, c.Seq, c.FirstSent = tag.Run, tag.Part, tag.Seq, tag.First
		c.Matched = s.ours(tag)
	}
	if key == "" {
		key = wh.ExternalID // no notificationId (the schema requires one): the best left
	}
	c.Key = key
	bit := uint64(s.notif.bit(wh.Status))
	out.sent = sentMilli(c.FirstSent)
	out.evicted = s.tab.update(rundir.APINotify, key, out.sent, func(st *msgState, _ bool) {
		s.drawFault(out, st)
		out.seen(st, bit)
		if !st.terminal {
			st.terminal = true
			out.newTerminal = true
		}
	})
	out.api, out.key = rundir.APINotify, key
	c.Duplicate, c.Redelivered = out.duplicate, out.redelivered
	out.unmatched = !c.Matched
	out.stateLabel = s.met.statusLabel(wh.Status)
	out.channelLabel = "none"
	if c.Matched && !out.duplicate && !out.redelivered {
		c.Latency = ev.ReceivedAt.Sub(c.FirstSent).Seconds()
		out.latency, out.hasLatency = c.Latency, true
	}
	ev.Corr = c
	return nil
}

func (s *Sink) correlateIncoming(ev *rundir.Event, body []byte, res *outcome) error {
	in, err := ParseIncoming(body)
	if err != nil {
		return err
	}
	ev.Kind = rundir.KindIncoming
	s.drawFault(res, nil)
	out := in.OutgoingTxID
	if out == "" && in.ReplyOnType == "OUTGOING" {
		out = in.ReplyOnTxID // a quotation of an outgoing message ties it too
	}
	c := &rundir.Correlation{Key: in.TxID, Channel: in.Channel, OutgoingTxID: out}
	// Tied to its outgoing message when that message is known to this sink.
	c.Matched = out != "" && s.tab.lookup(rundir.APIMessaging, out)
	res.stateLabel = "none"
	res.channelLabel = in.Channel
	ev.Corr = c
	return nil
}
