package sim

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/msgload/msgload/rundir"
)

// truthRec keeps the ground truth. A message's record is held only while it
// is in flight (until it is final and its last callback is settled); then it
// goes out with the callbacks and the limiter windows: to truth.jsonl when
// the simulator streams its truth (streamTo), else to memory for Truth.
// Memory is bounded by cap: the messages in flight, plus, kept in memory,
// at most cap settled messages and 4×cap callback records.
type truthRec struct {
	mu        sync.Mutex
	rl        rundir.TruthRateLimit
	epoch     time.Time
	windows   map[windowKey]*rundir.TruthWindow
	order     []windowKey
	flying    map[*truthMsg]struct{}
	msgs      chunked[rundir.TruthMessage] // settled, when kept in memory
	cbs       chunked[rundir.TruthCallback]
	file      *truthFile // nil: kept in memory
	cap       int
	truncated bool
	ended     bool
}

// truthMsg is the record of one message in flight: pending counts the
// callback copies not settled yet, plus holds taken while a status is being
// recorded, so that the record goes out only after its last call's.
type truthMsg struct {
	m       rundir.TruthMessage
	pending int32
	final   bool
	// behind is how far the message's next scheduled step already lags the
	// delays drawn for it (the scheduler held up on earlier steps); used on
	// the scheduler goroutine only.
	behind time.Duration
	// nextDue: at the close, when its next step or call was due by the
	// drawn delays (unix ns; 0: nothing left) — TruthMessage.Pending.
	nextDue int64
}

// lagBase is how far tm's scheduled step lags its drawn delays (0 without a truth).
func (tm *truthMsg) lagBase() time.Duration {
	if tm == nil {
		return 0
	}
	return tm.behind
}

// setLagBase sets how far tm's next scheduled step lags its drawn delays.
func (tm *truthMsg) setLagBase(d time.Duration) {
	if tm != nil {
		tm.behind = d
	}
}

type windowKey struct {
	client string
	idx    int64
}

func newTruth(rl RateLimit, cap int, epoch time.Time) *truthRec {
	return &truthRec{
		rl: rundir.TruthRateLimit{Requests: rl.Requests, Window: rundir.Duration(rl.Window), Algorithm: rl.Algorithm,
			CountFailures: &rl.CountFailures, Count429: &rl.Count429},
		epoch:   epoch,
		windows: map[windowKey]*rundir.TruthWindow{},
		flying:  map[*truthMsg]struct{}{},
		cap:     cap,
	}
}

// decision counts one limiter decision for client at now. Streaming, a
// window goes out once the next but one window of any client has opened
// (decisions are counted a little out of order across goroutines).
func (t *truthRec) decision(client string, now time.Time, accepted bool) {
	if t.rl.Window <= 0 {
		return
	}
	w := t.rl.Window.D()
	idx := int64(now.Sub(t.epoch) / w)
	k := windowKey{client, idx}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed() {
		return
	}
	tw := t.windows[k]
	if tw == nil {
		tw = &rundir.TruthWindow{Client: client, Start: t.epoch.Add(time.Duration(idx) * w).UTC()}
		t.windows[k] = tw
		t.order = append(t.order, k)
		if t.file != nil {
			t.windowsOut(idx - 1)
		}
	}
	if accepted {
		tw.Accepted++
	} else {
		tw.Refused++
	}
}

// windowsOut writes and forgets the windows before index before.
func (t *truthRec) windowsOut(before int64) {
	keep := t.order[:0]
	for _, k := range t.order {
		if k.idx < before {
			t.file.write(&rundir.TruthRecord{Type: rundir.TruthRecWindow, Window: t.windows[k]})
			delete(t.windows, k)
			continue
		}
		keep = append(keep, k)
	}
	t.order = keep
}

// full reports whether no more messages can be held.
func (t *truthRec) full() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fullLocked()
}

func (t *truthRec) fullLocked() bool { return len(t.flying)+t.msgs.len() >= t.cap }

// message starts the record of an accepted message; it returns nil when
// full (and marks the truth truncated).
func (t *truthRec) message(m rundir.TruthMessage) *truthMsg {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fullLocked() || t.closed() {
		t.truncated = true
		return nil
	}
	tm := &truthMsg{m: m}
	t.flying[tm] = struct{}{}
	return tm
}

// step adds a drawn state change to tm; final marks its last one.
func (t *truthRec) step(tm *truthMsg, s rundir.TruthStep, final bool) {
	if tm == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tm.m.Steps = append(tm.m.Steps, s)
	if final {
		tm.m.Final = s.State
		tm.final = true
		t.settleLocked(tm)
	}
}

// hold keeps tm in flight until the matching release: a callback copy, or a
// status being recorded (its callback not made yet).
func (t *truthRec) hold(tm *truthMsg) {
	if tm == nil {
		return
	}
	t.mu.Lock()
	tm.pending++
	t.mu.Unlock()
}

// release ends one hold of tm; the record goes out when it is final and
// nothing holds it.
func (t *truthRec) release(tm *truthMsg) {
	if tm == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	tm.pending--
	t.settleLocked(tm)
}

// settleLocked writes tm out when it is final and settled.
func (t *truthRec) settleLocked(tm *truthMsg) {
	if !tm.final || tm.pending > 0 {
		return
	}
	if _, ok := t.flying[tm]; !ok {
		return
	}
	delete(t.flying, tm)
	t.out(&tm.m)
}

// out writes one settled message record.
func (t *truthRec) out(m *rundir.TruthMessage) {
	if t.file != nil {
		t.file.write(&rundir.TruthRecord{Type: rundir.TruthRecMessage, Message: m})
		return
	}
	t.msgs.add(*m)
}

func (t *truthRec) callback(c rundir.TruthCallback) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed() {
		t.truncated = true // after the end record: lost, and said so to Truth
		return
	}
	if t.file != nil {
		t.file.write(&rundir.TruthRecord{Type: rundir.TruthRecCallback, Callback: &c})
		return
	}
	if t.cbs.len() >= 4*t.cap {
		t.truncated = true
		return
	}
	t.cbs.add(c)
}

// closed reports whether truth.jsonl has its end record: nothing more can
// be written to it.
func (t *truthRec) closed() bool { return t.ended && t.file != nil }

// snapshot copies the truth so far: the records out (read back from
// truth.jsonl when streaming), then the messages in flight.
func (t *truthRec) snapshot() rundir.Truth {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := rundir.Truth{RateLimit: t.rl, Windows: []rundir.TruthWindow{}, Messages: t.msgs.slice(), Callbacks: t.cbs.slice()}
	if t.file != nil {
		t.file.readBack(&out)
	}
	out.Truncated = out.Truncated || t.truncated
	for _, k := range t.order {
		out.Windows = append(out.Windows, *t.windows[k])
	}
	for tm := range t.flying {
		out.Messages = append(out.Messages, tm.m)
	}
	for i := range out.Messages {
		out.Messages[i].Steps = slices.Clone(out.Messages[i].Steps)
	}
	return out
}

// streamTo makes the truth go to a new truth.jsonl at path from here on,
// flushed at least every second.
func (t *truthRec) streamTo(path string) error {
	f, err := rundir.Create(path)
	if err != nil {
		return err
	}
	tf := &truthFile{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	tf.enc = json.NewEncoder(tf.w)
	t.mu.Lock()
	t.file = tf
	tf.write(&rundir.TruthRecord{Type: rundir.TruthRecRateLimit, RateLimit: &t.rl})
	t.mu.Unlock()
	go tf.flushEverySecond(&t.mu)
	return nil
}

// end writes what is still held (messages in flight at the close, open
// windows) and the end record, and closes truth.jsonl. Later records are
// refused (counted as truncated).
func (t *truthRec) end() error {
	t.mu.Lock()
	if t.ended || t.file == nil {
		t.ended = true
		t.mu.Unlock()
		return nil
	}
	t.ended = true
	for tm := range t.flying {
		t.out(&tm.m)
	}
	clear(t.flying)
	t.windowsOut(1 << 62)
	t.file.write(&rundir.TruthRecord{Type: rundir.TruthRecEnd, Truncated: t.truncated})
	tf := t.file
	t.mu.Unlock()
	return tf.close()
}

// truthFile is truth.jsonl being written; its methods run under truthRec.mu.
type truthFile struct {
	path       string
	f          *os.File
	w          *bufio.Writer
	enc        *json.Encoder
	err        error // the first write error: the truth is then incomplete
	stop, done chan struct{}
}

func (tf *truthFile) write(rec *rundir.TruthRecord) {
	if tf.err == nil {
		tf.err = tf.enc.Encode(rec)
	}
}

// flushEverySecond flushes the buffer every second until close.
func (tf *truthFile) flushEverySecond(mu *sync.Mutex) {
	defer close(tf.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tf.stop:
			return
		case <-tick.C:
			mu.Lock()
			if tf.err == nil {
				tf.err = tf.w.Flush()
			}
			mu.Unlock()
		}
	}
}

// readBack adds what truth.jsonl holds so far to out (for GET /sim/v1/truth).
func (tf *truthFile) readBack(out *rundir.Truth) {
	if tf.err == nil && tf.f != nil {
		tf.err = tf.w.Flush()
	}
	f, err := os.Open(tf.path)
	if err != nil {
		out.Truncated = true
		return
	}
	defer f.Close()
	err = rundir.DecodeTruthRecords(f, func(rec *rundir.TruthRecord) error {
		if rec.Type != rundir.TruthRecRateLimit {
			out.Add(rec)
		}
		return nil
	})
	if err != nil && err != rundir.ErrTruthUnfinished {
		out.Truncated = true
	}
}

// close stops the flusher, flushes and closes the file; called once.
func (tf *truthFile) close() error {
	close(tf.stop)
	<-tf.done
	err := tf.err
	if err == nil {
		err = tf.w.Flush()
	}
	if cerr := tf.f.Close(); err == nil {
		err = cerr
	}
	tf.f = nil
	return err
}

// chunked is an append-only list in fixed-size chunks: appending never
// copies what is already there (a million truth records grown as one slice
// cost a copy of the whole each time it grew, and a heap twice its size).
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkLen = 4096

func (c *chunked[T]) len() int { return c.n }

// add appends v and returns its index.
func (c *chunked[T]) add(v T) int {
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, make([]T, 0, chunkLen))
	}
	last := &c.chunks[len(c.chunks)-1]
	*last = append(*last, v)
	c.n++
	return c.n - 1
}

// slice copies the list into one slice (never nil).
func (c *chunked[T]) slice() []T {
	out := make([]T, 0, c.n)
	for _, ch := range c.chunks {
		out = append(out, ch...)
	}
	return out
}

// notePending records, once the scheduler and the senders have stopped,
// when the next step or call of each message still in flight was due by
// the drawn delays: the events left in the engine (a message step, a
// notification's status, a held or retried call) and the calls left in
// the senders' queue.
func (s *Server) notePending() {
	for {
		select {
		case j := <-s.cbs.jobs:
			s.truth.pendingAt(j.truth, j.due)
			continue
		default:
		}
		break
	}
	s.eng.mu.Lock()
	defer s.eng.mu.Unlock()
	for _, ev := range s.eng.events {
		switch j := ev.job.(type) {
		case *message:
			if j.phase != phForget {
				s.truth.pendingAt(j.truth, ev.at-int64(j.truth.lagBase()))
			}
		case *notification:
			s.truth.pendingAt(j.truth, ev.at)
		case *callbackJob:
			s.truth.pendingAt(j.truth, j.due)
		}
	}
}

// pendingAt notes that tm's next step or call was due at due (unix ns; 0:
// not known), keeping the earliest.
func (t *truthRec) pendingAt(tm *truthMsg, due int64) {
	if tm == nil || due == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if tm.nextDue == 0 || due < tm.nextDue {
		tm.nextDue = due
		tm.m.Pending = time.Unix(0, due).UTC()
	}
}
