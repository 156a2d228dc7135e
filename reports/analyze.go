package reports

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"io/fs"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/reports/summary"
	"github.com/msgload/msgload/rundir"
)

// Errors of reading a run directory.
var (
	ErrNoMeta = errors.New("no run.json in the run directory") // ErrNoMeta: the directory is no run's (nor a run with parts')
	errBadRun = errors.New("bad run directory")
)

// lateAfter is how far behind its intended time an attempt must leave to count
// as a late start.
const lateAfter = 10 * time.Millisecond

// Messaging states, ranked so that the final status of a message comes from its
// terminal states, not from the order in which they arrived.
var stateRank = map[string]int{
	rundir.StateFailed:       1,
	rundir.StateExpired:      2,
	rundir.StateNotDelivered: 3,
	rundir.StateDelivered:    4,
	rundir.StateSeen:         5,
}

// msg is the compact per-message state kept while reading a run: what the
// attempts tell of every message. What callbacks tell is in d, made for a
// message when its first record comes (a run with delivery: none, or a message
// with no callback yet, holds 32 bytes a message instead of 120).
type msg struct {
	first    int64  // unix ns of the first attempt's send
	idHash   uint64 // hash of the id the service gave (txId / notificationId)
	lastTry  uint16 // the highest attempt number of the message's sends (probes excepted)
	lastCode int16  // that attempt's HTTP status (0: no answer)
	accepted bool
	mismatch bool
	gaveUp   bool // that attempt failed in a way the retry policy retries, and no retry was left
	held     bool // in a msgTable
	d        *msgDelivery
}

// msgDelivery is what the records of the sink (or the polls) told of a
// message. While the run is read it holds only the message's records (a list
// in analyzer.recs); once every record is read, judgeRecords judges them as a
// set and fills in the rest (ending.go): no figure depends on the order the
// records arrived or were logged in.
type msgDelivery struct {
	first      int64  // the first send as the records' tag tells it (unix ns), 0: none told
	terminalAt int64  // first arrival of a record that ends the message, unix ns
	head       uint32 // the message's first record in analyzer.recs, 0: none (index+1)
	reached    uint32 // interned channels reached
	finalState uint8  // interned
	finalChan  uint8  // interned
	item       uint8  // the chain item the records show the message on at the end (countSteps): 0, or one past each step
	lastChan   uint8  // interned channel of its last record in their own time's order, 0 none
	lastStepAt int64  // arrival of the record that showed its last failover step, unix ns; 0 none
	dupTerm    bool   // ended under two txIds, or two terminal statuses (notify): delivered twice
}

// noDelivery is the state of a message no record came for.
var noDelivery msgDelivery

// delivery returns m's delivery state (read only when no record came).
func (m *msg) delivery() *msgDelivery {
	if m.d == nil {
		return &noDelivery
	}
	return m.d
}

// slab hands out values of T from blocks of 1024: one allocation per block
// rather than per value (a run of 100,000 messages made 100,000 objects for
// the collector to trace). Pointers stay valid: a block never grows.
type slab[T any] struct{ block []T }

func (s *slab[T]) new() *T {
	if len(s.block) == cap(s.block) {
		s.block = make([]T, 0, 1024)
	}
	s.block = s.block[:len(s.block)+1]
	return &s.block[len(s.block)-1]
}

// intern maps the few distinct states and channels to small numbers.
type intern struct {
	names []string
	idx   map[string]uint8
}

func newIntern() *intern { return &intern{names: []string{""}, idx: map[string]uint8{"": 0}} }

// id returns the number of s; past 30 names everything is "other".
func (in *intern) id(s string) uint8 {
	if i, ok := in.idx[s]; ok {
		return i
	}
	if len(in.names) >= 31 {
		return in.id("other")
	}
	in.names = append(in.names, s)
	in.idx[s] = uint8(len(in.names) - 1)
	return in.idx[s]
}

type analyzer struct {
	drift driftRec // per-window figures of a soak (drift.go)
	dir   string
	fsys  fs.FS

	firstSend, lastSend int64 // unix ns of the first and last first attempt
	seenAttempts        attemptSet
	meta                rundir.Meta
	s                   *Summary
	start               time.Time
	deadline            time.Time

	reqLat, reqLatIntended, lag *hist
	msgs                        msgTable
	delSlab                     slab[msgDelivery]
	needKeys                    map[string]int64 // one pass: ids of the events without this run's tag (Event.ServiceID) → sequence, once found; in passes, joined on disk (replyjoin.go)
	besidePolls                 int64            // callbacks and webhooks of a run with delivery via poll: not counted
	clients                     map[string][]rec
	states, chans               *intern
	chain                       rundir.Chain
	idOwner                     map[uint64]int64 // id the service answered with (hash) → the first message it was given to
	byState, byChannel          map[string]*hist
	delivery, replies, retries  *hist
	survivors                   *hist // delivery latency of the messages with a final status alone (latency_delivered)
	steps                       map[[2]string]*hist
	ch                          *charts
	retryOn                     map[string]bool // run.json retry.on: codes and "timeout"
	strs                        interner        // the attempts' strings of few values
	// Rate-limit decisions: kept as recs in clients when keepRecs, else only
	// counted (per client: sent, accepted); recsAgain: a 429 came after
	// requests only counted, the attempts are read again for the recs.
	keepRecs, recsAgain bool
	counts              map[string]*[2]int64
	// A run with a truth: the decisions its limiter windows are compared
	// with, spilled in time order (truthwindows.go), and their clients.
	wins       *sortedSpill[decRec]
	winClients map[string]uint32
	winErr     error

	recs recList // every message's records until they are judged (ending.go)

	tally tally             // finishMessage's counts
	lost  *lostList         // the final analysis of a build: every lost message as it is settled (lostlist.go), else nil
	st    *streamRun        // a run analysed in two passes (stream.go), else nil
	fly   map[int64]*flight // a run analysed in passes: the messages with records still to read (stream.go)
	one   flight            // the message of the record being read when it is its only one
	cur   *flight           // the message of the record being read
	// stepWait: a run analysed in passes, the censored times of a failover
	// step no message has taken yet (censorOnStep).
	stepWait map[[2]string][]float64
	feed     *eventFeed // a run with callbacks analysed in passes: events.jsonl, read with the attempts in time
	opened   *eventFeed // feed as it was opened (close)
	// badAttempts, badEvents: the lines of attempts.jsonl and (a carried
	// analysis with events) of events.jsonl that did not decode.
	badAttempts, badEvents int64
	endBuf                 []delRec // a carried analysis with events: ended's records (carriedevents.go)
	// noDecisions: a carried analysis (carried.go) keeps no rate-limit
	// decision: its rate_limit figures are not the run's (Carried).
	noDecisions bool
}

// decodeAttempt decodes a line of attempts.jsonl, its strings of few values
// interned.
func (a *analyzer) decodeAttempt(b []byte, at *rundir.Attempt) error {
	return decodeAttempt(&a.strs, b, at)
}

// Analyze reads the run directory and computes every figure of its summary;
// thresholds are not evaluated (Build does that).
func Analyze(dir string) (*Summary, error) {
	return AnalyzeFS(os.DirFS(dir), dir)
}

// AnalyzeFS is Analyze over the run directory's files in fsys; name is how
// errors call the directory.
func AnalyzeFS(fsys fs.FS, name string) (*Summary, error) {
	a, err := analyze(fsys, name)
	if err != nil {
		return nil, err
	}
	return a.s, nil
}

// analyze is AnalyzeFS, returning the analyzer with every recorded value.
func analyze(fsys fs.FS, name string) (*analyzer, error) { return analyzeKeep(fsys, name, false, nil) }

// analyzeKeep is analyze; rawRequests keeps the request latencies as they
// were recorded (ReadSamples), not rounded to the microsecond (compact hists);
// lost, when not nil, gets every lost message (a build's lost.jsonl).
func analyzeKeep(fsys fs.FS, name string, rawRequests bool, lost *lostList) (*analyzer, error) {
	if !rawRequests && twoPasses(fsys) && !readOnce(fsys, lost) {
		return analyzeBounded(fsys, name, lost, false)
	}
	return analyzeListing(fsys, name, rawRequests, nil, lost)
}

// analyzeOnce is one reading of the run: the whole analysis, or a pass of
// one in bounded memory (st, stream.go), listing no lost message.
func analyzeOnce(fsys fs.FS, name string, rawRequests bool, st *streamRun) (*analyzer, error) {
	return analyzeListing(fsys, name, rawRequests, st, nil)
}

// analyzeListing is analyzeOnce writing every lost message to lost (nil:
// none); only the last reading of a run lists them, so each once.
func analyzeListing(fsys fs.FS, name string, rawRequests bool, st *streamRun, lost *lostList) (*analyzer, error) {
	a, err := newAnalyzer(fsys, name, rawRequests, st, lost)
	if err != nil {
		return nil, err
	}
	defer a.close()
	if err := a.readAttempts(); err != nil {
		return nil, err
	}
	if err := a.conclude(); err != nil {
		return nil, err
	}
	return a, nil
}

// newAnalyzer is an analysis of the run in fsys before any attempt is read:
// run.json read, the reasons it tells, the events' keys scanned.
func newAnalyzer(fsys fs.FS, name string, rawRequests bool, st *streamRun, lost *lostList) (*analyzer, error) {
	a := &analyzer{
		dir: name, fsys: fsys, s: &Summary{Summary: summary.Summary{Schema: schemaVersion, Kind: kindPart, LatencyResolution: latencyResolution}, dir: name}, st: st,
		idOwner: map[uint64]int64{}, needKeys: map[string]int64{}, clients: map[string][]rec{},
		states: newIntern(), chans: newIntern(),
		byState: map[string]*hist{}, byChannel: map[string]*hist{}, steps: map[[2]string]*hist{}, lost: lost,
	}
	a.reqLat = a.newHist(!rawRequests)
	a.reqLatIntended, a.lag = a.newHist(true), a.newHist(true)
	a.delivery, a.survivors, a.replies, a.retries = a.newHist(false), a.newHist(false), a.newHist(false), a.newHist(false)
	if err := a.readMeta(); err != nil {
		return nil, err
	}
	a.drift.start = a.start
	if st == nil || !st.carried {
		a.fileReasons()
	}
	a.counts = map[string]*[2]int64{}
	a.keepRecs = keepAllRecs || a.meta.Limit.Window.D() > 0
	if truthCompared(a.fsys, a.meta) {
		a.wins, a.winClients = newDecisionSpill(), map[string]uint32{}
	}
	a.ch = newCharts(a.start, a.meta)
	if len(a.meta.Chain) <= 30 {
		a.chain = rundir.ParseChain(a.meta.Chain)
	}
	a.startTally()
	if err := a.scanEventKeys(); err != nil {
		a.close()
		return nil, err
	}
	if st != nil && a.meta.Delivery.Via != "none" && !st.carried {
		a.feed = a.openEvents()
		a.opened = a.feed
	}
	return a, nil
}

// fileReasons are the reasons of the verdict that the run directory's files
// and run.json tell before a record is read: a raw file missing, a run with
// no end, aborted, or on a disk that ran low. A carried analysis (carried.go)
// tells them at each summary, of the files as they are then.
func (a *analyzer) fileReasons() {
	a.checkRawFiles()
	a.unfinishedReasons()
	a.abortReason()
	a.diskReason()
	a.failedReason()
}

// close lets go of the analysis's spill of decisions and its feed of events.
func (a *analyzer) close() {
	if a.wins != nil {
		a.wins.close()
	}
	if a.opened != nil {
		a.opened.close()
	}
}

// conclude is the analysis once every attempt is read: the events, the
// messages still flying landed, and every figure finished.
func (a *analyzer) conclude() error {
	if err := a.readEvents(); err != nil {
		return err
	}
	if a.meta.Delivery.Via == "poll" && a.st == nil {
		if err := a.readPolls(); err != nil {
			return err
		}
	}
	a.landAll() // before judgeAllRecords lets every record go: a message still flying has some
	a.judgeAllRecords()
	a.joinReplies()
	a.finishRequests()
	a.finishDelivery()
	a.sinkWriteReason()
	a.sinkUnreadReason()
	a.finishDrift()
	o := &a.s.Outcomes
	o.Messages, o.Accepted, o.RetryMax = a.s.Requests.Messages, a.s.Requests.Accepted, a.meta.Retry.Max
	o.Measured = a.s.Delivery.Measured
	a.s.Idempotency.Measured = a.s.Delivery.Measured
	if !a.s.Delivery.Measured {
		a.s.Delivery.ClearCounts() // delivery: none: nothing was waited for, nothing is lost
		o.ClearCounts()
		a.s.Idempotency.DuplicateDeliveries = 0 // null in summary.json
	}
	a.rateLimit()
	if err := a.truth(); err != nil {
		return err
	}
	a.s.charts = a.ch
	a.ch.finish(a)
	a.s.decide()
	return nil
}

// readJSONLFunc is rundir.DecodeJSONLFunc over a file system, with its own
// decoder of a line: a missing file reads as empty.
func readJSONLFunc[T any](fsys fs.FS, name string, decode func([]byte, *T) error, fn func(T) error, bad func(line int, err error)) error {
	f, err := rundir.OpenRegularFS(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return rundir.DecodeJSONLFunc(f, decode, fn, bad)
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (a *analyzer) readMeta() error {
	b, err := rundir.ReadFileFS(a.fsys, rundir.MetaFile, rundir.MaxDocBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNoMeta, a.dir)
	}
	if err != nil {
		return fmt.Errorf("read run metadata: %w", err)
	}
	if err := json.Unmarshal(b, &a.meta); err != nil {
		return fmt.Errorf("%w: %s: %v", errBadRun, rundir.MetaFile, err)
	}
	m := a.meta
	a.start = m.Start
	end := m.AttackEnd
	if end.IsZero() {
		end = m.End
	}
	if !end.IsZero() {
		a.deadline = end.Add(m.Delivery.Grace.D())
	}
	via := m.Delivery.Via
	if via == "" {
		via = "sink"
	}
	a.s.Run = runInfo{
		ID: m.ID, Scenario: m.Scenario, Part: m.Part, API: m.API, Target: m.Target, Version: m.Version,
		Commit: m.Commit, CommitTime: m.CommitTime, Host: m.Host, Description: m.Description,
		Clients: len(m.Clients), Profile: m.Planned.Profile, PlannedDur: m.Planned.Duration.D().Seconds(),
		Start: ts(m.Start), AttackEnd: ts(m.AttackEnd), End: ts(m.End), Interrupted: m.Interrupted,
		DeliveryVia: via, Grace: m.Delivery.Grace.D().Seconds(),
		Shard: m.Shard, Merged: m.Merged, Aborted: m.Aborted, DiskLow: m.DiskLow, Failed: m.Failed, SinkWriteErrors: m.SinkWriteErrors, SinkUnread: m.SinkUnread,
	}
	if !m.Start.IsZero() && !end.IsZero() && end.After(m.Start) {
		a.s.Run.Duration = round6(end.Sub(m.Start).Seconds())
	}
	a.s.Delivery.Via = via
	a.s.Delivery.Measured = via != "none"
	a.s.thresholdExprs = m.Thresholds
	if m.Shard != nil {
		// A shard's figures are its share of the run: the thresholds are
		// judged once, on the merged run (msgload report --merge), so a shard
		// passes when it ran and sent, whatever the thresholds say of its share.
		a.s.thresholdExprs = nil
		a.s.Warnings = append(a.s.Warnings, fmt.Sprintf("shard %s of run %s: the figures are this shard's share; the thresholds are judged on the merged run (msgload report --merge)", m.Shard, m.ID))
	}
	a.s.Delivery.Deadline = ts(a.deadline)
	a.s.RateLimit.Limit = m.Limit.Requests
	a.s.RateLimit.Window = m.Limit.Window.D().Seconds()
	a.s.RateLimit.Mode = m.Limit.Mode
	a.s.Requests.PlannedRate = m.Planned.Rate
	a.s.Requests.PlannedCount = m.Planned.Requests
	a.s.Requests.PlanCounted = m.Planned.Counted
	a.s.Requests.MaxInFlight = m.MaxInFlight
	a.s.Requests.LateAfter = lateAfter.Seconds()
	a.retryOn = map[string]bool{}
	for _, on := range m.Retry.On {
		a.retryOn[on] = true
	}
	return nil
}

// retryable says whether the run's retry policy retries after at, as the
// attacker decides (attack.engine.retryable): its code is in retry.on, or no
// answer came with an unknown outcome (timeout, reset) and retry.on has
// "timeout".
func (a *analyzer) retryable(at *rundir.Attempt) bool {
	if at.Code == 0 { // as the attacker: no answer with an unknown outcome (a timeout, a reset)
		unknown := at.Outcome == rundir.OutcomeUnknown || at.Outcome == "" && (at.Class == rundir.ClassTimeout || at.Class == rundir.ClassReset)
		return unknown && a.retryOn["timeout"]
	}
	return a.retryOn[strconv.Itoa(at.Code)]
}

// errOwnTagged skips a line scanEventKeys has no use for, undecoded (no
// bad-line count is kept there).
var errOwnTagged = errors.New("tagged with this run")

// scanEventKeys finds the ids of the events that carry no tag of this run and
// part (untagged, or another run's tag), so that reading attempts can remember
// just those ids (the join by id: rundir.Event.ServiceID).
func (a *analyzer) scanEventKeys() error {
	if a.st != nil {
		return nil // a run analysed in passes: its replies are joined on disk (replyjoin.go), its callbacks tagged (countSeqs)
	}
	d := &eventDecoder{}
	err := readJSONLFunc(a.fsys, rundir.EventsFile, func(line []byte, e *rundir.Event) error {
		// Most lines carry this run's tag and quote no message: skip them undecoded.
		if a.ownTagged(line) && !bytes.Contains(line, []byte(`"outgoing_tx_id"`)) {
			return errOwnTagged
		}
		return d.decode(line, e)
	}, func(e rundir.Event) error {
		c := e.Corr
		if c == nil {
			return nil
		}
		if !a.owns(c) {
			if id := e.ServiceID(); id != "" {
				a.needKeys[id] = 0
			}
		}
		if c.OutgoingTxID != "" {
			a.needKeys[c.OutgoingTxID] = 0
		}
		return nil
	}, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", rundir.EventsFile, err)
	}
	return nil
}

// owns reports whether an event's tag names a message of this run and part
// (its sequence is the message's). A polled status carries the sequence and no
// run; a run directory without an id (older) takes any tag as its own.
func (a *analyzer) owns(c *rundir.Correlation) bool {
	if c.Seq <= 0 {
		return false
	}
	return c.Run == "" || a.meta.ID == "" || c.Run == a.meta.ID && c.Part == a.meta.Part
}

// ownTagged reports, without decoding it, whether a line of events.jsonl
// surely carries this run's and part's tag, so that scanEventKeys can skip it.
func (a *analyzer) ownTagged(line []byte) bool {
	if !bytes.Contains(line, []byte(`"seq":`)) {
		return false
	}
	if a.meta.ID == "" {
		return true
	}
	if !bytes.Contains(line, []byte(`"run":"`+a.meta.ID+`"`)) {
		return false
	}
	if a.meta.Part == "" {
		return !bytes.Contains(line, []byte(`"part":"`))
	}
	return bytes.Contains(line, []byte(`"part":"`+a.meta.Part+`"`))
}

func is2xx(code int) bool { return code >= 200 && code < 300 }

// Times outside these years do not fit in int64 nanoseconds; a record that
// carries one (a broken or hostile file) is counted but not placed in time.
var saneFrom, saneTo = time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

func sane(t time.Time) bool { return t.After(saneFrom) && t.Before(saneTo) }

func hashID(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64() | 1 // never 0: 0 means "no id yet"
}

// retryAfterSeconds reads a Retry-After value (rundir.ParseRetryAfter, against
// the time the answer came) as seconds; -1 when absent, -2 when unreadable.
func retryAfterSeconds(v string, at time.Time) float32 {
	if strings.TrimSpace(v) == "" {
		return -1
	}
	d, ok := rundir.ParseRetryAfter(v, at)
	if !ok {
		return -2
	}
	return float32(d.Seconds())
}

// readAttempts reads attempts.jsonl whole: every record (attemptRecord),
// then what follows the last (endAttempts).
func (a *analyzer) readAttempts() error {
	a.startAttempts()
	if err := readJSONLFunc(a.fsys, rundir.AttemptsFile, a.decodeAttempt, a.attemptRecord, a.badAttempt); err != nil {
		return fmt.Errorf("read %s: %w", rundir.AttemptsFile, err)
	}
	return a.endAttempts()
}

// startAttempts makes what reading the attempts fills.
func (a *analyzer) startAttempts() {
	r := &a.s.Requests
	r.ByOp, r.Codes, r.Errors = map[string]int64{}, map[string]int64{}, map[string]int64{}
	a.seenAttempts = attemptSet{}
}

// badAttempt counts a line of attempts.jsonl that did not decode.
func (a *analyzer) badAttempt(int, error) { a.badAttempts++ }

// attemptRecord reads one record of attempts.jsonl, in the file's order.
func (a *analyzer) attemptRecord(at rundir.Attempt) error {
	if a.feed != nil {
		a.feed.until(sentAt(&at), a.event) // the callbacks that came before it
	}
	if a.st != nil && at.Seq > 0 {
		a.flightAttempt(&at) // a run analysed in passes (stream.go)
		return nil
	}
	if a.seenAttempts.again(&at) {
		a.s.Requests.Duplicates++ // counted once: a second copy of a line is no second send
		return nil
	}
	a.attempt(&at)
	return nil
}

// endAttempts is what follows the last record of attempts.jsonl: the bad
// lines told, the decisions read again when a 429 came after requests only
// counted.
func (a *analyzer) endAttempts() error {
	r := &a.s.Requests
	bad := a.badAttempts
	r.BadLines = bad
	if bad > 0 {
		a.s.Warnings = append(a.s.Warnings, fmt.Sprintf("%s: %d lines did not decode and were skipped", rundir.AttemptsFile, bad))
	}
	if a.recsAgain {
		// A 429 came after requests only counted: every decision, read again.
		a.recsAgain, a.counts = false, nil
		err := readJSONLFunc(a.fsys, rundir.AttemptsFile, a.decodeAttempt, func(at rundir.Attempt) error {
			a.decision(&at)
			return nil
		}, nil)
		if err != nil {
			return fmt.Errorf("read %s: %w", rundir.AttemptsFile, err)
		}
	}
	return nil
}

// attemptSet remembers the attempts of messages read so far, by a 64-bit
// hash of what makes one attempt (seq, attempt, op, probe, client, sent): the
// attacker writes each once, so the same one twice is a duplicated line (a
// file copied into itself, a second writer), and a verdict built on it
// cannot be trusted.
type attemptSet map[uint64]struct{}

var attemptSeed = maphash.MakeSeed()

// again reports whether at was seen before, and remembers it.
func (s attemptSet) again(at *rundir.Attempt) bool {
	if at.Seq <= 0 {
		return false // auxiliary calls (tokens, polls) have no identity of their own
	}
	k := attemptKey(at)
	if _, ok := s[k]; ok {
		return true
	}
	s[k] = struct{}{}
	return false
}

// attemptKey is the 64-bit hash of what makes one attempt (attemptSet).
func attemptKey(at *rundir.Attempt) uint64 {
	var h maphash.Hash
	h.SetSeed(attemptSeed)
	var b [8 * 3]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(at.Seq))
	binary.LittleEndian.PutUint64(b[8:], uint64(at.Attempt))
	binary.LittleEndian.PutUint64(b[16:], uint64(at.Sent.UnixNano()))
	h.Write(b[:])
	h.WriteString(at.Op)
	h.WriteByte(0)
	h.WriteString(at.Probe)
	h.WriteByte(0)
	h.WriteString(at.Client)
	return h.Sum64()
}

// attempt takes one record of attempts.jsonl into the figures: the request's
// counts and latencies, its rate-limit decision, and — a send — its message.
func (a *analyzer) attempt(at *rundir.Attempt) {
	op := at.Op
	if op == "" {
		op = "send"
	}
	a.countRequest(at, op)
	a.ch.attempt(at)
	a.decision(at)
	a.windowDecision(at)
	if op != "send" || at.Seq <= 0 {
		return
	}
	a.sendAttempt(at)
}

// countRequest counts a request of any operation: codes, classes, latencies,
// lateness against its intended send, probes, retries, rate-limit headers.
func (a *analyzer) countRequest(at *rundir.Attempt, op string) {
	r := &a.s.Requests
	s := a.s
	r.Total++
	r.ByOp[op]++
	s.addOp(at) // the per-operation and errors tables (ops.go)
	r.Codes[strconv.Itoa(at.Code)]++
	if at.Class != "" && at.Class != rundir.ClassOK {
		r.Errors[at.Class]++
	} else if at.Class == "" && !is2xx(at.Code) {
		_, class := rundir.Classify(at.Code, nil) // a record without a class (another tool's)
		r.Errors[class]++
	}
	if at.Capped {
		r.Capped++
	}
	if at.GaveUp != "" {
		if r.GaveUp == nil {
			r.GaveUp = map[string]int64{}
		}
		r.GaveUp[at.GaveUp]++
	}
	noAnswer := unanswered(at)
	a.reqLat.add(at.Latency, noAnswer)
	a.drift.request(at)
	if !at.Intended.IsZero() && !at.Sent.IsZero() {
		late := at.Late()
		a.reqLatIntended.add(at.Latency+late.Seconds(), noAnswer)
		a.lag.observe(max(late.Seconds(), 0))
		if late > lateAfter {
			r.Late++
		}
	} else {
		a.reqLatIntended.add(at.Latency, noAnswer)
	}
	if at.Probe != "" {
		s.Idempotency.Probes++
	}
	if at.Attempt > 1 && at.Probe == "" { // probes number their attempts on from the message's last
		s.Idempotency.Retries++
	}
	if at.RateLimit != "" {
		s.RateLimit.Headers.RateLimit++
	}
	if at.RateLimitPolicy != "" {
		h := &s.RateLimit.Headers
		if h.RateLimitPolicy == 0 {
			readPolicy(h, at.RateLimitPolicy)
		}
		h.RateLimitPolicy++
	}
}

// unanswered is the one rule of a request latency without a value: a
// request with no answer (code 0: a timeout, a reset, no connection) has no
// latency but "more than it was waited for". It is censored, ranked after
// every answer, as a message with no final status is in the delivery
// latency — never a fast value that pulls the figures down, nor a timeout
// read as a latency equal to it — wherever a request latency is figured:
// requests.latency and latency_intended (countRequest), the drift's windows
// (drift.go), the per-operation table (ops.go) and the latency chart's
// points (charts.go).
func unanswered(at *rundir.Attempt) bool { return at.Code == 0 }

// sendAttempt takes a send into its message: its first send, its last try and
// whether it gave up, the ids the service answered.
func (a *analyzer) sendAttempt(at *rundir.Attempt) {
	r := &a.s.Requests
	s := a.s
	m := a.message(at.Seq)
	first := at.FirstSent
	if first.IsZero() && at.Attempt <= 1 && at.Probe == "" {
		first = at.Sent
	}
	if sane(first) && (m.first == 0 || first.UnixNano() < m.first) {
		m.first = first.UnixNano()
	}
	if at.Attempt <= 1 && at.Probe == "" {
		r.Messages++
		if t := at.Sent.UnixNano(); sane(at.Sent) {
			if a.firstSend == 0 || t < a.firstSend {
				a.firstSend = t
			}
			a.lastSend = max(a.lastSend, t)
		}
	}
	if at.Probe == "" && at.Attempt >= int(m.lastTry) {
		// The message's last try so far: did it end in a retryable failure
		// with every retry used (attempts 1 + retry.max)?
		m.lastTry = uint16(min(max(at.Attempt, 1), math.MaxUint16))
		m.lastCode = int16(at.Code)
		m.gaveUp = !is2xx(at.Code) && a.retryable(at) && a.meta.Retry.Max > 0 && at.Attempt >= a.meta.Retry.Max+1
	}
	if at.Mismatch && !m.mismatch { // the attacker compared the ids itself
		m.mismatch = true
		s.Idempotency.Mismatches++
	}
	// Accepted: a 2xx whose body was the API's answer (class ok; "" in runs
	// older than the class); a bad_answer 2xx is an error, not an acceptance.
	if is2xx(at.Code) && (at.Class == rundir.ClassOK || at.Class == "") {
		a.acceptedSend(at, m)
	}
	// The ids the service answered, for the events without this run's tag:
	// never the externalId, which the seed makes unique only per client.
	for _, k := range []string{at.TxID, at.NotificationID} {
		if k != "" {
			a.answeredID(k, at.Seq)
		}
	}
}

// acceptedSend counts an accepted send once per message and checks the id it
// was answered against the message's earlier ones (one id per externalId).
func (a *analyzer) acceptedSend(at *rundir.Attempt, m *msg) {
	s := a.s
	if !m.accepted {
		s.Requests.Accepted++
	}
	m.accepted = true
	id := at.TxID
	if at.API == rundir.APINotify || id == "" {
		id = at.NotificationID
	}
	if id != "" && at.Probe != rundir.ProbeChangedBody { // another body may be another notification: the service's choice
		h := hashID(id)
		a.ownID(h, at.Seq, m)
		switch {
		case m.idHash == 0:
			m.idHash = h
		case at.API == rundir.APINotify || at.Probe != "":
			// Only notifications promise one id per externalId; a messaging
			// retry is a new message (its second delivery shows as a duplicate).
			s.Idempotency.Compared++
			if m.idHash != h && !m.mismatch {
				m.mismatch = true
				s.Idempotency.Mismatches++
			}
		}
	}
}

// keepAllRecs makes every analysis keep the decisions from the start (a test
// compares the figures with and without).
var keepAllRecs = false

// decision keeps at as one of its client's rate-limit decisions (rec) — or,
// while nothing needs them (no window in run.json, no ground truth, no 429 so
// far), only counts it: then the rate-limit figures are counts, and a record
// for every request (24 bytes each) is not kept. The first 429 makes the
// records needed after all: readAttempts reads them in a second pass.
func (a *analyzer) decision(at *rundir.Attempt) {
	if a.noDecisions {
		return
	}
	op := at.Op
	if op == "" {
		op = "send"
	}
	if op == "token" || at.Client == "" || !sane(at.Sent) {
		return
	}
	if !a.keepRecs {
		if at.Code != http.StatusTooManyRequests {
			n := a.counts[at.Client]
			if n == nil {
				n = &[2]int64{}
				a.counts[at.Client] = n
			}
			n[0]++
			if is2xx(at.Code) {
				n[1]++
			}
			return
		}
		a.keepRecs, a.recsAgain = true, true
	}
	if a.recsAgain {
		return // the second pass reads them all
	}
	ra := float32(-1)
	if at.Code == http.StatusTooManyRequests {
		ra = retryAfterSeconds(at.RetryAfter, at.Sent.Add(time.Duration(at.Latency*float64(time.Second))))
	}
	a.clients[at.Client] = append(a.clients[at.Client], rec{Sent: at.Sent.UnixNano(), Code: int16(at.Code), RetryAfter: ra,
		Latency: int64(max(at.Latency, 0) * 1e9)})
}

func (a *analyzer) finishRequests() {
	r := &a.s.Requests
	r.Latency = a.reqLat.percentiles()
	r.LatencyIntended = a.reqLatIntended.percentiles()
	r.SendLag = a.lag.percentiles()
	a.s.finishOps()
	var errs int64
	for _, n := range r.Errors {
		errs += n
	}
	if r.Total > 0 {
		r.ErrorRate = round6(float64(errs) / float64(r.Total))
	}
	// Messages per second between the first and the last first attempt (the
	// attack's end may include polling or a slow last answer).
	if span := float64(a.lastSend-a.firstSend) / 1e9; r.Messages > 1 && span > 0 {
		r.AchievedRate = round6(float64(r.Messages-1) / span)
	} else if d := a.s.Run.Duration; d > 0 {
		r.AchievedRate = round6(float64(r.Messages) / d)
	}
	if r.Late > 0 {
		a.s.Warnings = append(a.s.Warnings, fmt.Sprintf("the attacker fell behind: %s left more than %s late (max %s)", Plural(r.Late, "attempt"), lateAfter, dur(r.SendLag.Max)))
	}
}

func (a *analyzer) readEvents() error {
	var bad int64
	var err error
	if a.st != nil && a.st.quiet != nil && a.st.quiet.events {
		bad = a.badEvents // a carried analysis: every event was read as written (carriedevents.go)
	} else if f := a.feed; f != nil { // the rest, after the attempts (stream.go)
		f.until(math.MaxInt64, a.event)
		a.feed = nil
		bad, err = f.bad, f.close()
	} else {
		err = readEventsFile(a.fsys, func(e rundir.Event) error {
			a.event(&e)
			return nil
		}, func(int, error) { bad++ })
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", rundir.EventsFile, err)
	}
	a.s.Delivery.BadLines = bad
	if a.besidePolls > 0 {
		a.s.Warnings = append(a.s.Warnings, fmt.Sprintf("%s arrived beside the polls (delivery via poll): not counted, the delivery figures are the polls'", Plural(a.besidePolls, "callback")))
	}
	if bad > 0 {
		a.s.Warnings = append(a.s.Warnings, fmt.Sprintf("%s: %d lines did not decode and were skipped", rundir.EventsFile, bad))
	}
	return nil
}

// readPolls turns successful check_status attempts into status events (a
// run analysed in passes reads them with the attempts: flightAttempt).
func (a *analyzer) readPolls() error {
	err := readJSONLFunc(a.fsys, rundir.AttemptsFile, a.decodeAttempt, func(at rundir.Attempt) error {
		if e, ok := a.pollEvent(&at); ok {
			a.delivered(&e, true)
		}
		return nil
	}, nil)
	if err != nil {
		return fmt.Errorf("read polled statuses: %w", err)
	}
	return nil
}

// pollEvent is the status a successful check_status attempt of a run with
// delivery via poll answered, as an event; false for any other attempt.
func (a *analyzer) pollEvent(at *rundir.Attempt) (rundir.Event, bool) {
	if a.meta.Delivery.Via != "poll" || at.Op != "check_status" || at.Seq <= 0 || !is2xx(at.Code) || at.State == "" {
		return rundir.Event{}, false
	}
	return rundir.Event{
		Kind: rundir.KindCallback, API: at.API,
		ReceivedAt: at.Sent.Add(time.Duration(at.Latency * float64(time.Second))),
		Corr:       &rundir.Correlation{Key: at.TxID, Seq: at.Seq, State: at.State, Channel: at.Channel, Matched: true},
	}, true
}

func (a *analyzer) event(e *rundir.Event) {
	d := &a.s.Delivery
	d.Events++
	a.ch.event(e)
	switch e.Kind {
	case rundir.KindMalformed:
		d.Malformed++
	case rundir.KindUnauthorized:
		d.Unauthorized++
	case rundir.KindIncoming:
		a.incoming(e)
	case rundir.KindCallback, rundir.KindWebhook:
		if a.meta.Delivery.Via == "poll" {
			a.besidePolls++ // poll means poll: the figures come from the polls
			return
		}
		a.delivered(e, false)
	default:
		d.Unmatched++
	}
}

func (a *analyzer) incoming(e *rundir.Event) {
	a.s.Incoming.Received++
	c := e.Corr
	if c == nil || c.OutgoingTxID == "" {
		return
	}
	if a.st != nil {
		if sane(e.ReceivedAt) && !a.st.carried { // a carried analysis joins no reply (carriedevents.go)
			a.st.spillReply(c.OutgoingTxID, e.ReceivedAt.UnixNano()) // joined by id, then to its message, at the end (replyjoin.go)
		}
		return
	}
	seq := a.needKeys[c.OutgoingTxID]
	m := a.msgs.get(seq)
	if seq == 0 || m == nil || m.first == 0 || !sane(e.ReceivedAt) {
		return
	}
	a.s.Incoming.Replies++
	a.replies.observe(float64(e.ReceivedAt.UnixNano()-m.first) / 1e9)
}

// learnChain reads the channel chain from a callback's trackData once.
func (a *analyzer) learnChain(e *rundir.Event) {
	if a.chain == nil {
		a.chain = payloadChain(e.Payload)
	}
}

// payloadChain is the channel chain a callback's trackData tells, or nil.
func payloadChain(payload []byte) rundir.Chain {
	if len(payload) == 0 {
		return nil
	}
	var p struct {
		TrackData map[string]any `json:"trackData"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return nil
	}
	if t, err := rundir.ParseTrackData(p.TrackData); err == nil && len(t.Chain) > 0 && len(t.Chain) <= 30 {
		return rundir.ParseChain(t.Chain)
	}
	return nil
}

func indexOf(chain []string, ch string) int {
	for i, c := range chain {
		if c == ch {
			return i
		}
	}
	return -1
}

func (a *analyzer) delivered(e *rundir.Event, polled bool) {
	d := &a.s.Delivery
	c := e.Corr
	if c == nil {
		d.Unmatched++
		return
	}
	seq := c.Seq
	if !a.owns(c) {
		// No tag of this run and part (the service dropped trackData, the
		// scenario sends its own externalIds, a replay kept a recording's
		// tagged ones): join by the id the service answered, or not at all.
		seq = a.needKeys[e.ServiceID()]
	}
	if a.st != nil && seq > 0 {
		a.flightEvent(seq, e) // a run analysed in passes (stream.go)
		return
	}
	m := a.msgs.get(seq)
	if seq == 0 || m == nil {
		d.Unmatched++
		return
	}
	if e.Kind == rundir.KindCallback {
		a.learnChain(e)
	}
	if !sane(e.ReceivedAt) {
		d.Unmatched++ // an arrival that cannot be placed in time
		return
	}
	if m.d == nil {
		m.d = a.delSlab.new()
	}
	a.keepRecord(m.d, e, polled)
}

// channelHist is the delivery latency of channel ch ("none" for "").
func (a *analyzer) channelHist(ch string) *hist {
	if ch == "" {
		ch = "none"
	}
	h := a.byChannel[ch]
	if h == nil {
		h = a.newHist(false)
		a.byChannel[ch] = h
	}
	return h
}

// censorLatency counts an accepted message with no final status by the
// deadline dl (none came, or it came late) in the delivery latencies as
// censored (DESIGN.md: delivery latency counts every accepted message): its
// latency is more than the time it was waited for, from its first send to
// the deadline (0 when the run has no deadline: nothing is known of it). It
// is counted in delivery.latency, in by_channel on the channel it was on
// (censoredChannel), and in the time of the failover step out of that
// channel when that step was seen at all (censorStep).
func (a *analyzer) censorLatency(m *msg, md *msgDelivery, dl int64) {
	if m.first <= 0 {
		return // no send time: no latency either way, as for a delivered one
	}
	waited := func(since int64) float64 {
		if a.deadline.IsZero() {
			return 0
		}
		return float64(dl-since) / 1e9
	}
	a.delivery.censor(waited(m.first))
	a.drift.delivered(m.first, 0, true)
	a.channelHist(a.censoredChannel(md)).censor(waited(m.first))
	if k, ok := a.censorStep(md); ok {
		since := md.lastStepAt
		if since == 0 {
			since = m.first
		}
		a.censorOnStep(k, waited(since))
	}
}

// censorOnStep counts a censored time in step k's hist. A run analysed in
// passes settles a message before every other is judged: the step may be
// taken by a message judged later, so the time waits for its hist (step);
// one that no message takes is not counted, as in one pass.
func (a *analyzer) censorOnStep(k [2]string, sec float64) {
	if h := a.steps[k]; h != nil {
		h.censor(sec)
		return
	}
	if a.st != nil {
		if a.stepWait == nil {
			a.stepWait = map[[2]string][]float64{}
		}
		a.stepWait[k] = append(a.stepWait[k], sec)
	}
}

// censoredChannel is the channel a message without a final status is
// counted on in by_channel: the chain item it was on at the end (its first
// channel until a record showed a failover step), else the channel of its
// last record, else "none".
func (a *analyzer) censoredChannel(md *msgDelivery) string {
	if int(md.item) < len(a.chain) {
		return a.chain[md.item].Channel
	}
	return a.chans.names[md.lastChan]
}

// censorStep is the failover step out of the chain item a message without
// a final status was on: its time is censored there when some message took
// that step (a step nobody took has no time, and no threshold passes on
// it): the message may have been about to take it. Without a chain there is
// no next step to censor.
func (a *analyzer) censorStep(md *msgDelivery) ([2]string, bool) {
	i := int(md.item)
	if i+1 >= len(a.chain) {
		return [2]string{}, false
	}
	return [2]string{a.chain[i].Channel, a.chain[i+1].Channel}, true
}

// tally is what finishMessage counts over the messages beside the summary's
// figures: the funnel's counts by interned channel.
type tally struct {
	terminalOn, reached map[uint8]int64
	dl                  int64 // the deadline, unix ns (MaxInt64: none)
}

// startTally makes the counts finishMessage adds to, before any message is
// settled (a run analysed in two passes settles most of them as it reads).
func (a *analyzer) startTally() {
	a.tally = tally{terminalOn: map[uint8]int64{}, reached: map[uint8]int64{}, dl: a.deadline.UnixNano()}
	if a.deadline.IsZero() {
		a.tally.dl = math.MaxInt64
	}
	o := &a.s.Outcomes
	o.ByState, o.Refused = map[string]int64{}, map[string]int64{}
}

// finishMessage counts a settled message in the outcomes, the delivery
// counts and the delivery latencies: once every record of it is read (and,
// with records, judged).
func (a *analyzer) finishMessage(seq int64, m *msg) {
	d := &a.s.Delivery
	o := &a.s.Outcomes
	terminalOn, reached, dl := a.tally.terminalOn, a.tally.reached, a.tally.dl
	md := m.delivery()
	if md.dupTerm {
		a.s.Idempotency.DuplicateDeliveries++
	}
	for i := range a.chans.names {
		if md.reached&(1<<i) != 0 {
			reached[uint8(i)]++
		}
	}
	if md.terminalAt != 0 {
		terminalOn[md.finalChan]++
	}
	if !m.accepted {
		if md.terminalAt != 0 {
			d.Unconfirmed++
		}
		if m.lastTry > 0 {
			o.NotAccepted++
			if m.gaveUp {
				o.GaveUp++
			} else {
				o.Refused[codeClass(int(m.lastCode))]++
			}
		}
		return
	}
	d.Expected++
	if md.terminalAt == 0 {
		d.Lost++
		noteLost(d, seq, false) // the first 20 listed (contracts.go)
		a.listLost(seq, m, md, false)
		o.NoFinalStatus++
		a.censorLatency(m, md, dl)
		return
	}
	d.Received++
	if md.terminalAt > dl {
		d.Lost++
		d.Late++
		noteLost(d, seq, true)
		a.listLost(seq, m, md, true)
		o.NoFinalStatus++
		a.censorLatency(m, md, dl)
	} else {
		countOutcome(o, a.states.names[md.finalState])
	}
	if m.first > 0 {
		if md.terminalAt < m.first {
			d.BeforeSend++ // counted, never clipped away in silence (decide)
		}
		lat := float64(md.terminalAt-m.first) / 1e9
		a.survivors.observe(lat)
		if md.terminalAt <= dl {
			a.delivery.observe(lat)
			a.drift.delivered(m.first, lat, false)
			a.channelHist(a.chans.names[md.finalChan]).observe(lat)
		}
	}
}

func (a *analyzer) finishDelivery() {
	d := &a.s.Delivery
	terminalOn, reached := a.tally.terminalOn, a.tally.reached
	a.msgs.each(a.finishMessage)
	d.Latency = a.delivery.percentiles()
	d.LatencyDelivered = a.survivors.percentiles()
	d.ByChannel = map[string]percentiles{}
	for k, h := range a.byChannel {
		d.ByChannel[k] = h.percentiles()
	}
	d.ByState = map[string]percentiles{}
	for k, h := range a.byState {
		if k == "" {
			k = "none"
		}
		d.ByState[k] = h.percentiles()
	}
	// Funnel in chain order, then any other channel by name.
	order := a.chain.Channels()
	var rest []string
	for _, n := range a.chans.names[1:] {
		if indexOf(order, n) < 0 {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	order = append(order, rest...)
	f := &d.Failover
	f.Funnel = []funnelStage{}
	for _, n := range order {
		id, ok := a.chans.idx[n]
		if !ok {
			f.Funnel = append(f.Funnel, funnelStage{Channel: n})
			continue
		}
		f.Funnel = append(f.Funnel, funnelStage{Channel: n, Reached: reached[id], Terminal: terminalOn[id]})
	}
	f.Steps = []failoverStep{}
	for k, h := range a.steps {
		f.Steps = append(f.Steps, failoverStep{From: k[0], To: k[1], Count: h.count(), Time: h.percentiles()})
	}
	sort.Slice(f.Steps, func(i, j int) bool {
		x, y := f.Steps[i], f.Steps[j]
		xi, yi := indexOf(order, x.From), indexOf(order, y.From)
		if xi != yi {
			return xi < yi
		}
		if x.From != y.From {
			return x.From < y.From
		}
		return x.To < y.To
	})
	if n := a.s.Idempotency.IDCollisions; n > 0 {
		a.s.Warnings = append(a.s.Warnings, fmt.Sprintf("the service answered %s with an id it had already given another message: callbacks joined by id cannot be told apart", Plural(n, "message")))
	}
	a.s.Incoming.ReplyLatency = a.replies.percentiles()
	d.RetryDelay = a.retries.percentiles()
}
