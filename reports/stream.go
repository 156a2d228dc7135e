package reports

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"slices"

	"github.com/msgload/msgload/rundir"
)

// A run with delivery: none, via the sink or via poll, with or without a
// ground truth (a truth whose messages name their sequence by a tag of this
// run: truthbounded.go joins it by sequence; polls without one), is analysed
// in bounded memory, in passes over attempts.jsonl (issue 23: an hour at
// 5,000/s is 18 M messages):
//
//  1. a census counts the records of each sequence (2 bits a sequence:
//     none, one, more); a message with one record — the common case, a send
//     accepted at once — is settled at that record (finishMessage) and never
//     held; only messages with more records (retries, probes, a duplicated
//     line) are held and deduplicated as before;
//  2. the analysis proper, whose hists only count (bounded.go), and whose
//     answered ids go to a sorted spill on disk (hashSpill) instead of a map,
//     and, with replies, to one merge-joined with the replies (replyjoin.go);
//  3. the analysis again, its hists keeping the values of the buckets that
//     hold a wanted rank, its id check limited to the ids given to more
//     than one message: its summary is the run's, the same to the byte as one pass
//     holding every value (TestStreamDifferential).
//
// The figures are exact at the microsecond, as every figure is reported.

// streamRun is the state a pass of a bounded analysis shares with the next.
type streamRun struct {
	census  *seqCensus
	ids     *hashSpill            // pass 2 (the first analysis): every id answered, to find those answered twice
	twice   map[uint64]struct{}   // pass 3: the ids given to more than one message
	sent    *sortedSpill[sentRec] // a run with a truth or replies: the messages as they land, for the joins (truthbounded.go, joinReplies)
	replies *sortedSpill[sentRec] // the incoming replies: sequence and arrival
	plans   []*boundedPlan        // pass 3: what pass 2's hists found, in the order they were made
	made    []*hist               // the bounded hists of this pass, in the order they were made
	err     error                 // the first error of the spill
	// maxFlying is the most messages held at once (waiting for records);
	// maxRecords the most places made for their callbacks' records.
	maxFlying, maxRecords int
	// answered: the ids the service answered, quoted: the ids the replies
	// quote, joined by resolveReplies (replyjoin.go); order numbers the
	// attempts that answered one.
	answered, quoted *sortedSpill[idRec]
	order            int64
	free             []*flight // landed messages' flights, emptied for the next (newFlight)
	// carried: a live analysis carried from one judgement to the next
	// (carried.go), fed the records as they are written: no census, a
	// message is settled at the record its attacker sends none after
	// (lastRecord), and settled remembers it, a bit a sequence.
	carried bool
	settled *seqCensus
	// quiet: a carried analysis that reads the sink's events too
	// (carriedevents.go), its messages settled once quiet; nil for one of the
	// sends alone.
	quiet *quietQueue
}

// twoPasses says whether the run is analysed in bounded memory: delivery
// none with no event, via the sink, or via poll with no truth; with a ground truth only
// when every true message is tagged (truthTagged: one the truth names by the
// id the service answered is joined through a map of the ids, in one pass).
// A run with callbacks is analysed in passes only when every callback names
// its message by this run's tag (one joined by the id the service answered
// needs a map of the ids) and the chain is in run.json or in no callback (a
// chain learnt from the first callback places the records of every message,
// even those judged before it in a stream): the census finds out. A truth
// not compared yet (truthPending: the live analysis of a run going) is no
// obstacle.
func twoPasses(fsys fs.FS) bool {
	m, ok := runMeta(fsys)
	if !ok || truthCompared(fsys, m) && !truthTagged(fsys) {
		return false
	}
	switch m.Delivery.Via {
	case "none":
		st, err := fs.Stat(fsys, rundir.EventsFile)
		return errors.Is(err, fs.ErrNotExist) || err == nil && st.Size() == 0
	case "sink", "":
		return true
	case "poll":
		// The polls are records in attempts.jsonl (flightPoll); a truth
		// compared with the polls reads every poll into a map (truthPolls).
		return !rundir.HasTruth(fsys)
	}
	return false
}

// runMeta is the run's run.json.
func runMeta(fsys fs.FS) (rundir.Meta, bool) {
	var m rundir.Meta
	b, err := rundir.ReadFileFS(fsys, rundir.MetaFile, rundir.MaxDocBytes)
	return m, err == nil && json.Unmarshal(b, &m) == nil
}

// errOnePass: a callback of the run is joined by the id the service
// answered (no tag of this run), or tells the chain run.json does not: the
// run is analysed in one pass (twoPasses).
var errOnePass = errors.New("a callback to read in one pass")

// analyzeBounded analyses a run in the passes above, each over
// attempts.jsonl and events.jsonl as long as they were when the first began
// (prefixFS). Only the last pass lists the lost messages (lost). counting
// stops after the pass that counts (AnalyzeSendsCounting): its summary has
// every figure but the percentiles and the id collisions.
func analyzeBounded(fsys fs.FS, name string, lost *lostList, counting bool) (*analyzer, error) {
	cut := prefixFS{FS: fsys, size: map[string]int64{}}
	for _, f := range []string{rundir.AttemptsFile, rundir.EventsFile} {
		if st, err := fs.Stat(fsys, f); err == nil {
			cut.size[f] = st.Size()
		}
	}
	fsys = cut
	census, err := countSeqs(fsys)
	if err != nil {
		// A callback to read in one pass (errOnePass), or a file that cannot
		// be read: the one pass says which, and why, as a problem of the
		// verdict (checkRawFiles), or fails as it would.
		return analyzeListing(fsys, name, false, nil, lost)
	}
	first := &streamRun{census: census, ids: &hashSpill{}, sent: sentSpill(fsys, census)}
	if counting {
		first.ids = nil // no id is checked: the collisions are the last pass's
	}
	defer first.ids.close()
	counted, err := analyzeOnce(fsys, name, false, first)
	first.closeSent()
	if err != nil {
		return nil, err
	}
	if first.err != nil {
		return nil, first.err
	}
	if counting {
		return counted, nil
	}
	second := &streamRun{census: census, sent: sentSpill(fsys, census)}
	defer second.closeSent()
	for _, h := range first.made {
		second.plans = append(second.plans, h.bk.planFor())
	}
	first.made = nil
	if second.twice, err = first.ids.twice(); err != nil {
		return nil, err
	}
	first.ids.close()
	a, err := analyzeListing(fsys, name, false, second, lost)
	if err != nil {
		return nil, err
	}
	if second.err != nil {
		return nil, second.err
	}
	if !second.agrees() {
		return nil, fmt.Errorf("%w: %s: %s changed between two readings", errBadRun, name, rundir.AttemptsFile)
	}
	return a, nil
}

// sentSpill is where a pass spills the messages as they land for the
// truth's join and the replies' (joinReplies), in a run with either; nil
// without.
func sentSpill(fsys fs.FS, c *seqCensus) *sortedSpill[sentRec] {
	if m, _ := runMeta(fsys); !truthCompared(fsys, m) && !c.replies {
		return nil
	}
	return newSentSpill()
}

// closeSent removes the spills of the messages and of the replies.
func (st *streamRun) closeSent() {
	if st.sent != nil {
		st.sent.close()
	}
	if st.replies != nil {
		st.replies.close()
	}
	for _, s := range []*sortedSpill[idRec]{st.answered, st.quoted} {
		if s != nil {
			s.close()
		}
	}
}

// reply is an incoming reply to message seq of a run analysed in passes,
// received at at (unix ns): spilled, joined to its message at the end.
func (a *analyzer) reply(seq, at int64) {
	st := a.st
	if st.replies == nil {
		st.replies = newSentSpill()
	}
	if err := st.replies.add(sentRec{seq: seq, first: at}); err != nil && st.err == nil {
		st.err = err
	}
}

// joinReplies counts the replies of a run analysed in passes, once every
// message has landed: each joined by sequence to its message's first send,
// as incoming does in one pass (a reply to a message never sent, or with no
// send time, is not a reply of the run's).
func (a *analyzer) joinReplies() {
	st := a.st
	if st == nil {
		return
	}
	a.resolveReplies()
	if st.replies == nil || st.sent == nil {
		return
	}
	sent, stop := iter.Pull(st.sent.sorted())
	defer stop()
	m, ok := sent()
	for r := range st.replies.sorted() {
		for ok && m.seq < r.seq {
			m, ok = sent()
		}
		if ok && m.seq == r.seq && m.first != 0 {
			a.s.Incoming.Replies++
			a.replies.observe(float64(r.first-m.first) / 1e9)
		}
	}
	for _, err := range []error{st.replies.err, st.sent.err} {
		if err != nil && st.err == nil {
			st.err = err
		}
	}
}

// prefixFS shows attempts.jsonl and events.jsonl cut at the size they had
// when the analysis began: the passes over a run still being written (the
// live analysis, a checkpoint) read the same lines, and a message settled at
// its last record in the census cannot get another in a later pass.
type prefixFS struct {
	fs.FS
	size map[string]int64
}

func (p prefixFS) Open(name string) (fs.File, error) {
	f, err := p.FS.Open(name)
	n, cut := p.size[name]
	if err != nil || !cut {
		return f, err
	}
	return &prefixFile{File: f, r: io.LimitReader(f, n)}, nil
}

// prefixFile is a file read up to a size.
type prefixFile struct {
	fs.File
	r io.Reader
}

func (f *prefixFile) Read(b []byte) (int, error) { return f.r.Read(b) }

// agrees reports whether the last pass counted in each hist what the pass
// before did (a file that changed under the report does not).
func (st *streamRun) agrees() bool {
	if len(st.made) != len(st.plans) {
		return false
	}
	for i, h := range st.made {
		p := st.plans[i]
		if p.n != h.bk.obs.n || p.nc != h.bk.cens.n {
			return false
		}
	}
	return true
}

// newHist is a hist of the analysis: bounded in a run analysed in passes,
// else one that keeps its values (compact: the per-request ones, see hist).
func (a *analyzer) newHist(compact bool) *hist {
	st := a.st
	if st == nil {
		if compact {
			return newCompactHist()
		}
		return newHist()
	}
	h := &hist{sorted: true, bk: &bounded{}}
	if st.plans != nil {
		h.bk.plan = &boundedPlan{broken: true}
		if i := len(st.made); i < len(st.plans) {
			h.bk.plan = st.plans[i]
		}
	}
	st.made = append(st.made, h)
	return h
}

// eventFeed reads events.jsonl a record at a time (iter.Pull) for a run
// with callbacks analysed in passes: readAttempts reads the callbacks that
// came before each attempt was logged, so that a message's records are read
// close together in time and it flies only from its send to its last
// callback. The figures do not depend on the order (the census says when a
// message's last record is in); only the memory does.
type eventFeed struct {
	next func() (rundir.Event, bool)
	stop func()
	head rundir.Event
	ok   bool
	bad  int64 // lines that did not decode
	err  error
}

// errFeedStopped ends the reading of a feed closed early.
var errFeedStopped = errors.New("feed stopped")

// openEvents opens the run's events.jsonl as a feed.
func (a *analyzer) openEvents() *eventFeed {
	f := &eventFeed{}
	f.next, f.stop = iter.Pull(func(yield func(rundir.Event) bool) {
		f.err = readEventsFile(a.fsys, func(e rundir.Event) error {
			if !yield(e) {
				return errFeedStopped
			}
			return nil
		}, func(int, error) { f.bad++ })
	})
	f.head, f.ok = f.next()
	return f
}

// until reads with fn every event that arrived before t (unix ns), and any
// that cannot be placed in time. fn is given the head itself, read over by
// the next: a copy of it would be made on the heap for every event.
func (f *eventFeed) until(t int64, fn func(*rundir.Event)) {
	for f.ok && (!sane(f.head.ReceivedAt) || f.head.ReceivedAt.UnixNano() < t) {
		fn(&f.head)
		f.head, f.ok = f.next()
	}
}

// close stops the feed (again: nothing) and returns its reading's error.
func (f *eventFeed) close() error {
	f.stop()
	f.ok = false
	if errors.Is(f.err, errFeedStopped) {
		return nil
	}
	return f.err
}

// sentAt is when at was sent, unix ns; 0 when it cannot be placed in time.
// The callbacks read before an attempt are those that came before it was
// sent: not before its answer came, which a timeout puts 30 s later (the
// callbacks of 30 s of messages not read yet would fly).
func sentAt(at *rundir.Attempt) int64 {
	if !sane(at.Sent) {
		return 0
	}
	return at.Sent.UnixNano()
}

// flight is a message of a run analysed in passes while records of it are
// still to be read: its state, the keys of its attempts read (a line that
// repeats one is a duplicate: both have its sequence), and how many records
// the census counted.
type flight struct {
	m          msg
	d          msgDelivery // m.d once a callback of it is read
	keys       []uint64
	read, want int
	// evs: callbacks read; insane: those of them not placed in time. Both
	// are unmatched when no send of the message comes (delivered).
	evs, insane int
	// A carried analysis with events (carriedevents.go): done once the
	// attacker sends no more for it (lastRecord); last, its newest record's
	// time (unix ns).
	done bool
	last int64
}

// flightAttempt reads a record of a message (seq > 0) of a run analysed in
// passes: checked against the message's own attempts for a repeated line,
// then read as any attempt; at the message's last record (as the census
// counted them) it is settled (finishMessage) and forgotten.
func (a *analyzer) flightAttempt(at *rundir.Attempt) {
	f := a.flight(at.Seq)
	a.cur = f
	f.read++
	k := attemptKey(at)
	if slices.Contains(f.keys, k) {
		a.s.Requests.Duplicates++ // counted once: a second copy of a line is no second send
	} else {
		if f.want > 1 {
			f.keys = append(f.keys, k)
		}
		a.attempt(at)
	}
	if e, ok := a.pollEvent(at); ok {
		a.flightRecord(at.Seq, f, &e, true) // every copy of a poll's line, as readPolls reads them
	}
	if a.st.carried {
		switch last := a.lastRecord(at); {
		case last && !a.afterLast(at.Seq):
			a.land(at.Seq, f)
			a.st.settled.add(at.Seq)
		case a.st.quiet != nil:
			f.done = f.done || last
			a.quietAfter(quietAttempts, at.Seq, f, answeredAt(at))
		}
		return
	}
	a.landIfRead(at.Seq, f)
}

// landIfRead settles message seq once its last record is read.
func (a *analyzer) landIfRead(seq int64, f *flight) {
	if f.read == f.want && f.want < a.st.census.more() {
		a.land(seq, f)
	}
}

// flightEvent reads a callback of message seq (> 0, tagged with this run)
// of a run analysed in passes, as delivered does: kept with the message's
// records, which are judged when it lands. Whether a send of it was read is
// known only then: a callback may be read before it.
func (a *analyzer) flightEvent(seq int64, e *rundir.Event) {
	f := a.flight(seq)
	f.read++
	a.flightRecord(seq, f, e, false)
	if a.st.quiet != nil {
		a.quietAfter(quietEvents, seq, f, e.ReceivedAt.UnixNano())
		return
	}
	a.landIfRead(seq, f)
}

// flightRecord keeps a record of message seq's delivery (a callback, or the
// status a poll answered: polled) with its others until it lands.
func (a *analyzer) flightRecord(seq int64, f *flight, e *rundir.Event, polled bool) {
	f.evs++
	if !sane(e.ReceivedAt) {
		f.insane++
		return
	}
	if f.m.d == nil {
		f.m.d = &f.d
	}
	a.keepRecord(f.m.d, e, polled)
	a.st.maxRecords = max(a.st.maxRecords, int(a.recs.n))
}

// flight is message seq's state while its records are read.
func (a *analyzer) flight(seq int64) *flight {
	if f := a.fly[seq]; f != nil {
		return f
	}
	if st := a.st; st.carried {
		if st.settled.get(seq) > 0 && st.err == nil {
			st.err = fmt.Errorf("%w: a record of message %d came after the record it was settled at", errNotCarried, seq)
		}
		return a.flyNew(seq, carriedWant)
	}
	want := a.st.census.get(seq)
	if want == 1 {
		a.one = flight{want: 1}
		return &a.one
	}
	if want == 0 {
		want = a.st.census.more() // not counted (a file that changed): settled at the end
	}
	return a.flyNew(seq, want)
}

// flyNew is a new flight of message seq, held until its want records are
// read.
func (a *analyzer) flyNew(seq int64, want int) *flight {
	if a.fly == nil {
		a.fly = map[int64]*flight{}
	}
	f := a.st.newFlight(want)
	a.fly[seq] = f
	a.st.maxFlying = max(a.st.maxFlying, len(a.fly))
	return f
}

// land settles message seq: counted in the figures (when it was sent), and
// forgotten.
func (a *analyzer) land(seq int64, f *flight) {
	if f.m.d != nil {
		buf := a.recs.release(f.m.d)
		if f.m.held {
			a.judgeRecords(&f.m, buf)
		}
	}
	if f.m.held {
		a.s.Delivery.Unmatched += int64(f.insane)
		a.finishMessage(seq, &f.m)
		if s := a.st.sent; s != nil {
			if err := s.add(sentRec{seq: seq, first: f.m.first, accepted: f.m.accepted}); err != nil && a.st.err == nil {
				a.st.err = err
			}
		}
	} else {
		a.s.Delivery.Unmatched += int64(f.evs) // no such message sent
	}
	if f != &a.one {
		delete(a.fly, seq)
		a.st.keepFlight(f)
	}
}

// landAll settles the messages still flying once every record is read (those
// with more records than the census counts exactly), in sequence order: the
// hists a message makes must come in the same order in every pass.
func (a *analyzer) landAll() {
	seqs := make([]int64, 0, len(a.fly))
	for seq := range a.fly {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	for _, seq := range seqs {
		a.land(seq, a.fly[seq])
	}
	if a.st != nil {
		a.st.free = nil // no message is read after: not held with the summary
	}
}

// message is the state of message seq for its attempt: its flight in a run
// analysed in passes, else held in msgs.
func (a *analyzer) message(seq int64) *msg {
	if a.st != nil {
		a.cur.m.held = true // flightAttempt's, of this seq
		return &a.cur.m
	}
	return a.msgs.add(seq)
}

// ownID checks the id h the service answered message seq with against the
// ids given to other messages (idOwner). A run analysed in passes holds no
// map of every id: its first analysis spills them, the second checks only
// those given to more than one message (any other has one owner: nothing to
// count).
func (a *analyzer) ownID(h uint64, seq int64, m *msg) {
	if st := a.st; st != nil {
		if st.ids != nil {
			if err := st.ids.add(h, seq); err != nil && st.err == nil {
				st.err = err
			}
			return
		}
		if _, ok := st.twice[h]; !ok {
			return
		}
	}
	if owner, ok := a.idOwner[h]; !ok {
		a.idOwner[h] = seq
	} else if owner != seq && m.idHash != h {
		// One id for two messages: every later figure joined by it is wrong.
		a.s.Idempotency.IDCollisions++
	}
}

// countSeqs is the census of attempts.jsonl: every line that decodes, with a
// sequence (as readAttempts reads them); and of events.jsonl: every callback
// or webhook tagged with this run (delivered), errOnePass for one that is
// to be joined by id (scanEventKeys).
func countSeqs(fsys fs.FS) (*seqCensus, error) {
	m, _ := runMeta(fsys)
	c := newCensus(2)
	if m.Delivery.Via != "none" {
		c = newCensus(4)
	}
	var strs interner
	err := readJSONLFunc(fsys, rundir.AttemptsFile, func(b []byte, at *rundir.Attempt) error {
		return decodeSeq(&strs, b, at)
	}, func(at rundir.Attempt) error {
		if at.Seq > 0 {
			c.add(at.Seq)
		}
		return nil
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rundir.AttemptsFile, err)
	}
	if m.Delivery.Via == "none" {
		c.compact()
		return c, nil
	}
	// poll: no callback is a record of a message (counted beside the polls),
	// but the replies are joined all the same.
	poll := m.Delivery.Via == "poll"
	own := &analyzer{meta: m}
	chain := len(m.Chain) > 0 && len(m.Chain) <= 30 && rundir.ParseChain(m.Chain) != nil
	err = readEventsFile(fsys, func(e rundir.Event) error {
		if e.Corr == nil {
			return nil
		}
		if e.Kind == rundir.KindIncoming {
			c.replies = c.replies || e.Corr.OutgoingTxID != ""
			return nil // no record of a message: a reply, joined at the end
		}
		if poll {
			return nil
		}
		if own.joinedOnce(&e, chain) != "" {
			return errOnePass
		}
		if (e.Kind == rundir.KindCallback || e.Kind == rundir.KindWebhook) && own.owns(e.Corr) {
			c.add(e.Corr.Seq)
		}
		return nil
	}, nil)
	if errors.Is(err, errOnePass) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rundir.EventsFile, err)
	}
	c.compact()
	return c, nil
}

// joinedOnce says why a callback or webhook e (with a correlation) is read
// in one pass, not in passes (countSeqs) nor carried (carriedEvent): it is
// joined by the id the service answered (no tag of this run), or it tells
// a chain run.json does not name (chain: run.json names one); "" when
// neither.
func (a *analyzer) joinedOnce(e *rundir.Event, chain bool) string {
	switch {
	case e.Corr.OutgoingTxID != "" || !a.owns(e.Corr) && e.ServiceID() != "":
		return "a callback without this run's tag (joined by the id the service answered)"
	case !chain && e.Kind == rundir.KindCallback && payloadChain(e.Payload) != nil:
		return "a callback telling a chain run.json does not name"
	}
	return ""
}

// hashSpill collects (id hash, sequence) pairs and finds the ids given to
// more than one message, through a sortedSpill (truthbounded.go: an
// external sort past spillChunk pairs), so that its memory stays flat. An id
// answered twice to one message (a probe, a retry the service recognised) is
// not kept: only one given to two messages can be a collision.
type hashSpill struct {
	s *sortedSpill[[2]uint64]
}

// spillChunk is how many pairs a hashSpill holds in memory (128 KiB), and
// sets the chunks of the other spills (a quarter or a sixteenth of it, by
// the size of their records); a test lowers it. A spill is full within the
// first 8,192 messages, so the report's memory does not grow from one to
// three minutes of a run at 1,000 a second as its chunks fill (at 131,072
// pairs, 2 MiB, it did: TestSpillHoldsItsChunk). At 32,768 (before) the
// spills held 1.5 MB of a checkpoint's 3.5 MB at minute 8 of a 1,000/s run
// with callbacks, and a checkpoint during the attack adds what it holds to
// the run's peak (issue 23); smaller chunks make more sorted runs, merged
// sixteen at a time (spillmerge.go): an 18 M-message soak's answered ids are
// 2,200 runs, three levels.
var spillChunk = 1 << 13

func (s *hashSpill) add(h uint64, seq int64) error {
	if s.s == nil {
		s.s = &sortedSpill[[2]uint64]{chunk: spillChunk, size: 16, cmp: comparePairs,
			put: func(b []byte, p [2]uint64) { putInts(b, int64(p[0]), int64(p[1])) },
			get: func(b []byte) [2]uint64 { x := getInts(b, 2); return [2]uint64{uint64(x[0]), uint64(x[1])} }}
	}
	return s.s.add([2]uint64{h, uint64(seq)})
}

func comparePairs(x, y [2]uint64) int {
	return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]))
}

// twice is the set of id hashes given to more than one message.
func (s *hashSpill) twice() (map[uint64]struct{}, error) {
	out := map[uint64]struct{}{}
	if s.s == nil {
		return out, nil
	}
	var prev [2]uint64
	seen := false
	for p := range s.s.sorted() {
		if seen && p[0] == prev[0] && p[1] != prev[1] {
			out[p[0]] = struct{}{}
		}
		prev, seen = p, true
	}
	return out, s.s.err
}

// close removes the spill's file.
func (s *hashSpill) close() {
	if s != nil && s.s != nil {
		s.s.close()
	}
}
