package reports

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	clone "github.com/huandu/go-clone"

	"github.com/msgload/msgload/rundir"
)

// One analyzer, two drivers (issue 23). `msgload report` drives the
// analysis over the files, whole; a run's live judgement of its
// abortOnFail thresholds drives the same analysis (the analyzer, its
// reading of a record, its settling of a message, its finishing of every
// figure) over attempts.jsonl as the attacker writes it, and over the
// sink's events.jsonl as the sink writes it when a threshold reads a count
// of the sink's (carriedevents.go): Carried reads only the lines written
// since its last reading, so a judgement's work no longer grows with the
// run — a day's soak is judged every few seconds as its first minute is.
//
// What it carries is what the counting pass of a bounded analysis holds
// (stream.go, AnalyzeSendsCounting): the counts and the hists' bucket
// counts, the messages whose records are not all in, and a bit for every
// message settled. A judgement finishes a deep copy of it (go-clone), as
// the file's analysis finishes after its last line, so that the copy's
// figures are the analysis of the file as far as it was read — those of
// AnalyzeSendsCounting (with events: AnalyzeCounting) at that length,
// which TestCarriedIsTheFileAnalysis checks at many lengths of many runs.
//
// The file's analysis knows from its census how many records a message
// has; a carried one cannot look ahead. It settles a message at the record
// after which its attacker sends none (lastRecord: a 2xx, an answer it does
// not retry, its last retry, or one it gave up after), and holds any other
// until then: the messages waiting for a retry. With events, and in a run
// whose messages have records after their last send (delivery via poll:
// the polls; idempotency probes: the resends after the answer), a message
// is settled once quiet instead (carriedevents.go). A record that comes for a
// message already settled (a duplicated line, a retry the rule did not
// foresee, a probe or a poll later than the quiet) would have changed a
// figure already counted: the carried analysis stops there
// (errNotCarried), and the run judges as before, each judgement an
// analysis of the files in a child process (harness/livechild.go).
//
// It keeps no rate-limit decision: the figures of rate_limit read every
// decision of the run at its end (limitfit: the limiter's fit, the windows
// of each client), 24 bytes a request that a soak's process cannot keep.
// A threshold on them is judged from the files (LiveThreshold.Carried).

// errNotCarried: the run's live analysis cannot be carried from one
// judgement to the next; it is analysed from its files each time.
var errNotCarried = errors.New("not carried")

// ErrNotCarried reports whether err says the analysis cannot be carried
// (a run the carried analysis does not take, or a record it did not
// foresee).
func ErrNotCarried(err error) bool { return errors.Is(err, errNotCarried) }

// carriedWant is how many records a carried message is waiting for: any
// number (it lands at its last record by lastRecord, or at a judgement).
const carriedWant = 1 << 30

// carriedChunk is the most a reading takes of attempts.jsonl at once; a line
// longer than it cannot be carried.
const carriedChunk = 1 << 20

// Carried is the live analysis of a run's sends, and of its events when
// asked (carriedevents.go), carried from one judgement to the next (see
// above). It is not safe for concurrent use.
type Carried struct {
	name     string
	a        *analyzer
	attempts tail  // attempts.jsonl
	events   *tail // events.jsonl, when it reads them
	evDec    eventDecoder
	buf      []byte
	err      error // the carrying stopped (errNotCarried, or the file failed)
	// clock is the reader's, read as each chunk of lines is (quietQueue.read):
	// time.Now, or a test's.
	clock func() time.Time
	// pre: how many reasons, problems and missing files the analysis had
	// when it began, before which the files' own reasons go (fileReasons).
	pre [3]int
}

// tail is a file a carried analysis reads as it is written: its whole
// lines up to off were read.
type tail struct {
	name string
	f    *os.File // once it exists
	off  int64
}

// eventsHidden are the files a carried analysis with events does not read:
// the simulator's truth, whose figures are not judged live.
var eventsHidden = map[string]bool{rundir.TruthStreamFile: true, rundir.TruthFile: true}

// NewCarried starts the carried analysis of the run in dir: of its sends
// (AnalyzeSendsCounting's figures, the events and the truth hidden), and
// with events of the sink's events too (the figures of the counting pass
// of the analysis of its sends and events, the truth hidden) — or says why
// the run is not carried (ErrNotCarried).
func NewCarried(dir string, events bool) (*Carried, error) {
	hidden := sendsHidden
	if events {
		hidden = eventsHidden
	}
	fsys := maskFS{os.DirFS(dir), hidden}
	m, ok := runMeta(fsys)
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %s cannot be read", errNotCarried, rundir.MetaFile)
	}
	st := &streamRun{carried: true, settled: newCensus(1)}
	// A message's polls and probes are records of it after its last send:
	// it is settled once quiet, as with events (carriedevents.go).
	if events || m.Delivery.Via == "poll" || m.Probes > 0 {
		st.quiet = &quietQueue{events: events}
	}
	a, err := newAnalyzer(fsys, dir, false, st, nil)
	if err != nil {
		return nil, err
	}
	a.noDecisions = true
	if m.AttackEnd.IsZero() && m.End.IsZero() {
		// A run still going has no drift (finishDrift fits it over the
		// attack, whose end it does not know yet): its windows, a few
		// kilobytes a minute, are not gathered.
		a.drift.start = time.Time{}
	}
	a.startAttempts()
	c := &Carried{name: dir, a: a, clock: time.Now, attempts: tail{name: rundir.AttemptsFile}, pre: [3]int{len(a.s.early), len(a.s.problems), len(a.s.missing)}}
	if events {
		c.events = &tail{name: rundir.EventsFile}
	}
	return c, nil
}

// Read reads the whole lines written to attempts.jsonl (and events.jsonl)
// since the last reading into the carried analysis.
func (c *Carried) Read() error {
	if c.err != nil {
		return c.err
	}
	c.err = c.read()
	return c.err
}

func (c *Carried) read() error {
	a := c.a
	if err := c.readTail(&c.attempts, func(b []byte) error {
		return rundir.DecodeJSONLFunc(bytes.NewReader(b), a.decodeAttempt, a.attemptRecord, a.badAttempt)
	}); err != nil {
		return err
	}
	if c.events != nil {
		err := c.readTail(c.events, func(b []byte) error {
			return rundir.DecodeJSONLFunc(bytes.NewReader(b), c.evDec.decode, a.carriedEvent, func(int, error) { a.badEvents++ })
		})
		if err != nil {
			return err
		}
	}
	if a.st.quiet != nil {
		a.settleQuiet()
	}
	return a.st.err
}

// readTail reads with decode the whole lines t gained since the last
// reading, in chunks of at most carriedChunk.
func (c *Carried) readTail(t *tail, decode func([]byte) error) error {
	if t.f == nil {
		f, err := rundir.OpenRegular(filepath.Join(c.name, t.name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing written yet
		}
		if err != nil {
			return err
		}
		t.f = f
	}
	for {
		if cap(c.buf) < carriedChunk {
			c.buf = make([]byte, carriedChunk)
		}
		n, err := t.f.ReadAt(c.buf[:carriedChunk], t.off)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read %s: %w", t.name, err)
		}
		if q := c.a.st.quiet; q != nil {
			q.read = c.clock().UnixNano() // every line read was written by now
		}
		whole := bytes.LastIndexByte(c.buf[:n], '\n') + 1
		if whole == 0 {
			if n == carriedChunk {
				return fmt.Errorf("%w: a line of %s longer than %d bytes", errNotCarried, t.name, carriedChunk)
			}
			return nil // no whole line since: the next reading
		}
		if err := decode(c.buf[:whole]); err != nil {
			if ErrNotCarried(err) {
				return err
			}
			return fmt.Errorf("read %s: %w", t.name, err)
		}
		t.off += int64(whole)
		if c.a.st.err != nil {
			return c.a.st.err
		}
		if n < carriedChunk {
			return nil
		}
	}
}

// Summary is the analysis of the sends as far as they were read: the
// carried state's deep copy, finished as the file's analysis finishes
// after its last line. The carried state is left as it was.
func (c *Carried) Summary() (*Summary, error) {
	if c.err != nil {
		return nil, c.err
	}
	// What only the reading needs is not copied: the bit of every message
	// settled (2 MB an hour at 5,000/s), the flights kept for reuse; nor
	// the drift's windows, which finishing only reads (finishDrift), shared.
	// Nor the queue of the messages touched, nor ended's buffer. The
	// messages held and their records are copied apart (copyHeld): a
	// generic copy of a message costs some 2 KB of garbage, and there are
	// thousands with events; the records' slab is as large as the most
	// ever held at once. What is deep-copied is a shallow copy without
	// them: a judgement never changes the carried state.
	a, st := *c.a, *c.a.st
	a.st, st.settled, st.free = &st, nil, nil
	a.drift.wins, a.endBuf, a.recs, a.fly, a.cur = nil, nil, recList{}, nil, nil
	if q := st.quiet; q != nil {
		st.quiet = &quietQueue{now: q.now, events: q.events}
	}
	b := clone.Slowly(&a).(*analyzer)
	b.drift.wins = c.a.drift.wins
	c.copyHeld(b)
	// The files' reasons, of the files as they are now, where the file's
	// analysis tells them: before any the reading told.
	s, n := b.s, c.pre
	early, problems, missing := s.early, s.problems, s.missing
	s.early, s.problems, s.missing = early[:n[0]:n[0]], problems[:n[1]:n[1]], missing[:n[2]:n[2]]
	b.fileReasons()
	s.early, s.problems, s.missing = append(s.early, early[n[0]:]...), append(s.problems, problems[n[1]:]...), append(s.missing, missing[n[2]:]...)
	if err := b.endAttempts(); err != nil {
		return nil, err
	}
	if err := b.conclude(); err != nil {
		return nil, err
	}
	return b.s, nil
}

// copyHeld gives b, the carried analysis's copy, a copy of each message
// held and of its records, in a slab of their own, each message's in its
// order. A flight's only references are its keys and m.d, nil or its own
// d (flightRecord): TestFlightCopiedWhole fails when one is added that
// this does not copy.
func (c *Carried) copyHeld(b *analyzer) {
	var buf []delRec
	b.fly = make(map[int64]*flight, len(c.a.fly))
	for seq, f := range c.a.fly {
		nf := new(flight)
		*nf = *f
		nf.keys = slices.Clone(f.keys)
		b.fly[seq] = nf
		if f.m.d == nil {
			continue
		}
		nf.m.d = &nf.d
		buf = c.a.recs.records(f.m.d, buf[:0])
		nf.d.head = 0
		for k := len(buf) - 1; k >= 0; k-- { // push puts each first
			b.recs.push(&nf.d, buf[k])
		}
	}
}

// Close lets go of the file the carried analysis reads.
func (c *Carried) Close() error {
	var err error
	for _, t := range []*tail{&c.attempts, c.events} {
		if t != nil && t.f != nil {
			err = errors.Join(err, t.f.Close())
		}
	}
	return err
}

// lastRecord says whether at, a record of a message of a carried analysis,
// is the last its attacker writes for it: a send (no probe) answered with a
// 2xx, or with what the retry policy does not retry, or its last retry, or
// one after which it gave up. Not a rule of the figures: a record that came
// after would stop the carrying (errNotCarried) before any figure used it.
func (a *analyzer) lastRecord(at *rundir.Attempt) bool {
	if at.Op != "" && at.Op != "send" || at.Probe != "" {
		return false
	}
	max := a.meta.Retry.Max
	return at.GaveUp != "" || is2xx(at.Code) || max <= 0 || at.Attempt >= max+1 || !a.retryable(at)
}
