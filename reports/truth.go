package reports

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/msgload/msgload/rundir"
)

// TruthTolerance is how far a measured latency percentile may be from the
// true one: max(1 ms, 1 %) of the true value. Counts must agree exactly.
const (
	truthAbsTolerance = 0.001
	truthRelTolerance = 0.01
)

// truth compares the measured figures with the run's truth, when it has
// one: the delays, outcomes and callbacks the embedded simulator drew are
// judged by the same end-of-message rule (rundir.Chain) and set beside what
// the sink and the attacker measured. Any difference beyond the tolerance is a
// disagreement, and a run whose measurements disagree with the truth fails:
// a measurement bug shows in the first run that meets it. The truth is read
// as a stream (truthStream): truth.jsonl, or truth.json of older runs.
func (a *analyzer) truth() error {
	if !truthCompared(a.fsys, a.meta) {
		return nil // none, or one still being written (livetruth.go)
	}
	seqOf, err := a.truthSeqs()
	if err != nil || seqOf == nil {
		return err
	}
	ts := &truthStream{a: a, seqOf: seqOf, r: a.newTruthReport(), pending: map[string]idArrivals{}}
	ts.sure.init()
	ts.maybe.init()
	ts.maybe.isMaybe = true
	if a.meta.Delivery.Via == "poll" {
		// Poll means poll: what the run could see is what its polls asked,
		// not what the simulator called back.
		if ts.polls, err = a.truthPolls(); err != nil {
			return err
		}
	}
	if a.st != nil && a.st.sent != nil {
		ts.fates, ts.sent, ts.stateIdx = newFateSpill(), a.st.sent, map[string]int{}
		defer ts.fates.close()
	}
	if ok, err := a.readTruth(ts.add); !ok || err != nil {
		return err
	}
	if ts.err != nil {
		return ts.err
	}
	r, err := ts.finish()
	if err != nil {
		return err
	}
	r.TrueLatency, r.TrueLatencyUpper = ts.trueLo.percentiles(), ts.trueHi.percentiles()
	r.FailoverSteps = a.failoverSteps(ts.sure, ts.maybe)
	if err := a.truthWindows(ts.windows, ts.window, r); err != nil {
		return err
	}
	a.judgeTruth(r, ts)
	a.s.Truth = r
	return nil
}

// readTruth calls fn for every record of the run's truth. It returns false
// without an error when there is nothing to compare: no truth, or an
// unfinished truth.jsonl (no end record: the simulator never closed) of a run
// that was interrupted or has no end — a killed run, whose messages in flight
// are missing. An unfinished truth of a run that ended is a torn raw file.
// fn keeps nothing of a record past its call: the next line reuses it
// (truthjson.go).
func (a *analyzer) readTruth(fn func(*rundir.TruthRecord) error) (bool, error) {
	found, err := rundir.OpenTruthFunc(a.fsys, new(truthDecoder).decode, fn)
	switch {
	case !found:
		return false, nil
	case errors.Is(err, rundir.ErrTruthUnfinished) && (a.meta.Interrupted || a.meta.End.IsZero()):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%w: %v", errBadRun, err)
	}
	return true, nil
}

// newTruthReport starts the report with what needs no judging: the
// simulator's own flags and the measured figures repeated for the
// side-by-side. Windows starts empty, not nil, so that summary.json has []
// rather than null when the simulator decided no window.
func (a *analyzer) newTruthReport() *truthReport {
	return &truthReport{
		MeasuredLatency: a.s.Delivery.Latency, MeasuredLost: a.s.Delivery.Lost,
		MeasuredDuplicates: a.s.Delivery.Duplicates, MeasuredDuplicateDeliveries: a.s.Idempotency.DuplicateDeliveries,
		Windows: []truthWindow{}}
}

// idArrivals are the arrivals at the sink of one id's calls, per (channel,
// state): a second arrival under one key is a duplicate.
type idArrivals map[[2]string][]arrival

// truthStream judges the truth record by record. A call's arrival is held
// under its id until the id's message record comes (the simulator writes it
// after the last of its calls), then judged with it and forgotten: memory
// holds the calls in flight, not the run's. A call that can surely or maybe
// have reached the sink (answered any status: surely, between its start and
// its answer; unanswered — reset, timeout — maybe: the sink may have logged it
// and the answer been lost on the way back) is an arrival; every figure is
// computed twice, without and with the unanswered ones (sure, maybe), and the
// measurement must lie between the two.
type truthStream struct {
	a           *analyzer
	r           *truthReport
	seqOf       func(m *rundir.TruthMessage) int64
	polls       map[int64][]pollObs // poll mode: the answered polls per sequence
	pending     map[string]idArrivals
	free        []idArrivals // judged ids' arrivals, emptied for the next ids (truthrecycle.go)
	windows     []rundir.TruthWindow
	window      int64 // the limiter window's length, ns
	sure, maybe truthFigures
	// A run analysed in passes: the fates of the true messages and the
	// attacker's messages, spilled by sequence to be joined (truthbounded.go).
	fates    *sortedSpill[fatePart]
	sent     *sortedSpill[sentRec]
	stateIdx map[string]int
	err      error
	// inTransit counts the answered calls started by the deadline and
	// answered after it (noteTransit): a reason a true figure is a range.
	inTransit int64

	trueLo, trueHi *hist                 // the true latency's two sides, with their censored values (judgeLatency)
	trueLimit      rundir.TruthRateLimit // the simulator's limit and what used its quota (sameLimiter, judgeQuota)
}

// add takes one record of the truth.
func (ts *truthStream) add(rec *rundir.TruthRecord) error {
	switch {
	case rec.RateLimit != nil:
		ts.r.Algorithm, ts.window = rec.RateLimit.Algorithm, rec.RateLimit.Window.D().Nanoseconds()
		ts.trueLimit = *rec.RateLimit
	case rec.Window != nil:
		ts.windows = addWindow(ts.windows, *rec.Window)
	case rec.Callback != nil:
		ts.callback(rec.Callback)
	case rec.Message != nil:
		ts.message(rec.Message)
	case rec.Type == rundir.TruthRecEnd:
		ts.r.Truncated = ts.r.Truncated || rec.Truncated
	}
	return nil
}

// addWindow adds w to ws, summed into a record of the same client and start
// (a decision counted after its window went out).
func addWindow(ws []rundir.TruthWindow, w rundir.TruthWindow) []rundir.TruthWindow {
	for i := range ws {
		if ws[i].Client == w.Client && ws[i].Start.Equal(w.Start) {
			ws[i].Accepted += w.Accepted
			ws[i].Refused += w.Refused
			return ws
		}
	}
	return append(ws, w)
}

// callback counts a call's fate and holds its arrival for its message (not
// in a polled run: there the polls are the arrivals).
func (ts *truthStream) callback(c *rundir.TruthCallback) {
	switch c.Action {
	case rundir.CallbackDropped:
		ts.r.CallbacksDropped++
	case rundir.CallbackFailed:
		ts.r.CallbacksFailed++
	case rundir.CallbackDuplicated:
		ts.r.CallbacksDup++
	}
	if c.Kind == rundir.KindIncoming || c.Action != rundir.CallbackSent && c.Action != rundir.CallbackRetried {
		return
	}
	done := c.Done
	if done.IsZero() || done.Before(c.At) {
		done = c.At
	}
	if c.Status == 0 {
		ts.r.Unanswered++
	} else {
		ts.noteTransit(c.At.UnixNano(), done.UnixNano())
	}
	noteLag(ts.r, c)
	if ts.polls != nil {
		return
	}
	as := ts.pending[c.ID]
	if as == nil {
		as = ts.newArrivals()
		ts.pending[c.ID] = as
	}
	k := [2]string{c.Channel, c.State}
	as[k] = append(as[k], arrival{at: c.At.UnixNano(), done: done.UnixNano(), due: dueOf(c), ok: c.Status == 0 || is2xx(c.Status), sure: c.Status != 0})
}

// message judges one message with the arrivals of its id, and forgets them.
func (ts *truthStream) message(m *rundir.TruthMessage) {
	ts.r.Messages++
	if m.Sends > 1 {
		ts.r.DuplicateSends++
	}
	var as idArrivals
	if ts.polls != nil {
		as = pollArrivals(m, ts.polls[ts.seqOf(m)])
	} else {
		as = ts.pending[m.ID]
		delete(ts.pending, m.ID)
		sortArrivals(as)
		defer ts.recycle(as) // judged below; nothing keeps them
	}
	seq := ts.seqOf(m)
	for _, fg := range []*truthFigures{&ts.sure, &ts.maybe} {
		fg.dups += duplicateArrivals(as, fg.isMaybe)
	}
	notePending(ts.r, m)
	if ts.fates != nil && seq != 0 {
		ts.spillFate(seq, m, as)
		return
	}
	for _, fg := range []*truthFigures{&ts.sure, &ts.maybe} {
		f := fg.fates[seq]
		if f == nil {
			f = &messageFate{}
			if seq != 0 {
				fg.fates[seq] = f
			}
		}
		f.ids++
		f.pending = earliest(f.pending, pendingOf(m))
		ts.a.followSteps(m, f, as, fg.isMaybe, fg.steps)
	}
}

// finish counts the calls of ids no message claimed (their duplicates),
// tallies the messages' fates into the figures (joined with the attacker's
// messages by sequence in a run analysed in passes: joinFates) and sets the
// bounds of the true latency.
func (ts *truthStream) finish() (*truthReport, error) {
	ts.free = nil // no call is read after
	for _, as := range ts.pending {
		sortArrivals(as)
		ts.sure.dups += duplicateArrivals(as, false)
		ts.maybe.dups += duplicateArrivals(as, true)
	}
	r := ts.r
	if ts.fates != nil {
		ts.trueLo, ts.trueHi = ts.a.newHist(false), ts.a.newHist(false)
		if err := ts.joinFates(ts.trueLo, ts.trueHi); err != nil {
			return nil, err
		}
	} else {
		for _, fg := range []*truthFigures{&ts.sure, &ts.maybe} {
			ts.a.tallyFates(fg.fates, fg)
			fg.dupDeliveries = ts.a.duplicateDeliveries(fg.fates)
		}
		ts.trueLo, ts.trueHi = ts.a.trueLatency(ts.sure, ts.maybe)
	}
	setExpected(r, ts.sure, ts.maybe)
	return r, nil
}

// sortArrivals puts each key's arrivals in order of their start.
func sortArrivals(as idArrivals) {
	for _, x := range as {
		slices.SortFunc(x, func(x, y arrival) int { return cmp.Compare(x.at, y.at) })
	}
}

// truthFigures are the true figures computed with the unanswered calls taken
// as arrived (maybe) or not (sure): the measurement must lie between the two.
type truthFigures struct {
	lost, dups, received, reaccepted int64
	simLagged                        int64 // of lost: late only because the simulator fell behind (lateBySimLag)
	dupDeliveries                    int64 // messages ended under two ids, or with two terminal statuses (notify)
	steps                            map[[2]string]int64
	end                              map[int64][3]int64 // seq → earliest ending arrival's start and answer, the last ending arrival's answer
	fates                            map[int64]*messageFate
	isMaybe                          bool
}

// init makes the maps.
func (fg *truthFigures) init() {
	fg.steps, fg.end, fg.fates = map[[2]string]int64{}, map[int64][3]int64{}, map[int64]*messageFate{}
}

// usable returns the arrivals a judgement counts: all of them if the
// unanswered calls are taken as arrived (maybe), else only the sure ones.
func usable(as []arrival, maybe bool) []arrival {
	if maybe {
		return as
	}
	out := as[:0:0]
	for _, x := range as {
		if x.sure {
			out = append(out, x)
		}
	}
	return out
}

// duplicateArrivals counts the duplicates: a second arrival of the same state
// for the same id and channel, unless it is the service retrying a call the
// sink refused.
func duplicateArrivals(arrivals idArrivals, maybe bool) int64 {
	var dups int64
	for _, as := range arrivals {
		as = usable(as, maybe)
		for i := 1; i < len(as); i++ {
			if as[i-1].ok {
				dups++
			}
		}
	}
	return dups
}

// messageFate is what the arrivals show of one message (by the attacker's
// sequence), over every id the simulator accepted it under.
type messageFate struct {
	end [3]int64 // as truthFigures.end
	due int64    // when the call of end[0] was due (arrival.due)
	// pending: the earliest time a step or call of its ids was due when the
	// simulator closed with it in flight (TruthMessage.Pending; 0: none).
	pending int64
	steps   uint32 // the failover steps already counted: bit i is the step into chain item i
	ids     int
	// endedIDs counts the message's ids with an ending arrival (a
	// notification's too: two under one externalId are a duplicate
	// delivery); endStates the terminal statuses that arrived (notify).
	endedIDs  int
	endStates []string
}

// followSteps walks the records of one message in order, tracking the chain
// item each is on through the failovers, and adds to f the failover steps
// and the ending arrivals they show.
func (a *analyzer) followSteps(m *rundir.TruthMessage, f *messageFate, arrivals idArrivals, maybe bool, steps map[[2]string]int64) {
	item := 0
	ended := false
	for _, st := range m.Steps {
		ch := st.Channel
		if m.API == rundir.APINotify {
			ch = ""
		}
		as := usable(arrivals[[2]string{ch, st.State}], maybe)
		if ch != "" {
			as = append(slices.Clip(as), usable(arrivals[[2]string{"", st.State}], maybe)...) // a truth.json of before callbacks named their channel
		}
		idx := -1
		ends := true
		if m.API != rundir.APINotify {
			idx = a.chain.Item(ch, item)
			ends = a.chain.Ends(st.State, idx)
		}
		if len(as) > 0 && idx >= 0 {
			a.cascadeShown(f, st.State, idx, steps)
		}
		if idx >= 0 && a.chain.FailsOver(st.State, idx) {
			item = idx + 1
		}
		if !ends {
			continue
		}
		f.ending(as)
		if len(as) > 0 && m.API == rundir.APINotify && !slices.Contains(f.endStates, st.State) {
			f.endStates = append(f.endStates, st.State)
		}
		ended = ended || len(as) > 0
	}
	if ended {
		f.endedIDs++
	}
}

// duplicateDeliveries counts the messages of the attacker's (accepted or
// not, as idempotency.duplicate_deliveries) whose arrivals end them under two
// ids, or with two terminal statuses (notify).
func (a *analyzer) duplicateDeliveries(fates map[int64]*messageFate) int64 {
	var n int64
	for seq, f := range fates {
		if a.msgs.get(seq) != nil && (f.endedIDs > 1 || len(f.endStates) > 1) {
			n++
		}
	}
	return n
}

// cascadeShown counts in steps, once per message, what an arrival of state at
// chain item idx shows of the cascade: every step up to its item, and the
// step out of it when it fails over.
func (a *analyzer) cascadeShown(f *messageFate, state string, idx int, steps map[[2]string]int64) {
	upto := idx
	if a.chain.FailsOver(state, idx) {
		upto = idx + 1
	}
	for i := 1; i <= upto && i < 31; i++ {
		if f.steps&(1<<i) == 0 {
			f.steps |= 1 << i
			steps[[2]string{a.chain[i-1].Channel, a.chain[i].Channel}]++
		}
	}
}

// ending takes the arrivals of a record that ends the message into its end:
// the earliest one's start and answer, and the last answer of any.
func (f *messageFate) ending(as []arrival) {
	for _, x := range as {
		if f.end[0] == 0 || x.at < f.end[0] {
			f.end[0], f.end[1], f.due = x.at, x.done, x.due
		}
		f.end[2] = max(f.end[2], x.done)
	}
}

// tallyFates counts into fg the messages the attacker saw accepted that were
// reaccepted, lost (no ending arrival by the deadline) or received, and keeps
// the received ones' ends for the latency.
func (a *analyzer) tallyFates(fates map[int64]*messageFate, fg *truthFigures) {
	dl := a.deadline.UnixNano()
	if a.deadline.IsZero() {
		dl = math.MaxInt64
	}
	for seq, f := range fates {
		m := a.msgs.get(seq)
		if m == nil || !m.accepted {
			continue // the attacker saw no acceptance: not expected, not lost
		}
		if f.ids > 1 {
			fg.reaccepted++
		}
		if fg.lostByTruth(f.end, dl) {
			fg.lost++
			fg.noteSimLag(f.end[0], f.due, f.pending, dl)
		}
		if f.end[0] != 0 && m.first > 0 {
			fg.received++
			fg.end[seq] = f.end
		}
	}
}

// setExpected sets the true counts in r, each as the range between the sure
// and the maybe judgement that the measurement must lie in.
func setExpected(r *truthReport, sure, maybe truthFigures) {
	r.ExpectedLost, r.ExpectedLostMin = sure.lost, maybe.lost
	r.ExpectedDuplicates, r.ExpectedDuplicatesMax = sure.dups, maybe.dups
	r.ExpectedReaccepted = sure.reaccepted
	r.ExpectedDuplicateDeliveries, r.ExpectedDuplicateDeliveriesMax = sure.dupDeliveries, maybe.dupDeliveries
	r.ExpectedReceived, r.ExpectedReceivedMax = sure.received, maybe.received
	if r.SimLag != nil {
		r.SimLag.Messages = sure.simLagged
	}
}

// trueLatency returns the bounds of the true latency, by the measured one's
// rule (DESIGN.md: every accepted message counts): from the earliest possible
// arrival of an ending record (lower) to the latest its first arrival can have
// been (upper: the answer of the first sure one; with only unanswered calls,
// none may have arrived: censored).
// A message the attacker saw accepted whose ending record did not reach the
// sink by the deadline — none did, or only after it — is censored at the time
// it was waited for (first send to the deadline), as finishDelivery does: the
// measured message lies between its two bounds, so each measured percentile
// (value or lower bound) lies between the two sides' (judgeLatency).
func (a *analyzer) trueLatency(sure, maybe truthFigures) (lower, upper *hist) {
	lo, hi := newHist(), newHist()
	a.msgs.each(func(seq int64, m *msg) {
		if !m.accepted || m.first <= 0 {
			return
		}
		var se, e *[3]int64
		if x, ok := sure.end[seq]; ok {
			se = &x
		}
		if x, ok := maybe.end[seq]; ok {
			e = &x
		}
		a.trueLatencyOf(lo, hi, m.first, se, e)
	})
	return lo, hi
}

// trueLatencyOf puts into lo and hi the bounds of the true latency of an
// accepted message first sent at first, by its ends as the sure and the maybe
// judgement found them (nil: no ending arrival).
func (a *analyzer) trueLatencyOf(lo, hi *hist, first int64, se, e *[3]int64) {
	dl := a.deadline.UnixNano()
	waited := 0.0
	if a.deadline.IsZero() {
		dl = math.MaxInt64
	} else {
		waited = float64(dl-first) / 1e9
	}
	put := func(h *hist, at int64) {
		if at != 0 && at <= dl {
			h.observe(float64(at-first) / 1e9)
		} else {
			h.censor(waited)
		}
	}
	if e == nil {
		put(lo, 0)
		put(hi, 0)
		return
	}
	put(lo, e[0])
	if se == nil {
		// Only unanswered calls: the first arrival was one of them, or none
		// came — the sink may have read none of them (a connection reset
		// on the way), and the message is then lost, censored at the
		// deadline, as the sure judgement counts it.
		put(hi, 0)
		return
	}
	put(hi, max(se[1], e[1]))
}

// failoverSteps sets the true failover steps (the range between the sure and
// the maybe judgement) beside the measured ones, every step either has, in
// the order of the chain.
func (a *analyzer) failoverSteps(sure, maybe truthFigures) []truthStep {
	trueSteps := map[[2]string][2]int64{}
	for k, n := range sure.steps {
		trueSteps[k] = [2]int64{n, maybe.steps[k]}
	}
	for k, n := range maybe.steps {
		if _, ok := trueSteps[k]; !ok {
			trueSteps[k] = [2]int64{0, n}
		}
	}
	var steps []truthStep // null in summary.json when there are none
	for k, n := range trueSteps {
		steps = append(steps, truthStep{From: k[0], To: k[1], True: n[0], TrueMax: n[1]})
	}
	for _, st := range a.s.Delivery.Failover.Steps {
		i := slices.IndexFunc(steps, func(x truthStep) bool { return x.From == st.From && x.To == st.To })
		if i < 0 {
			steps = append(steps, truthStep{From: st.From, To: st.To})
			i = len(steps) - 1
		}
		steps[i].Measured = st.Count
	}
	sort.Slice(steps, func(i, j int) bool {
		x, y := steps[i], steps[j]
		if xi, yi := a.chain.Index(x.From), a.chain.Index(y.From); xi != yi {
			return xi < yi
		}
		return x.From+"\x00"+x.To < y.From+"\x00"+y.To
	})
	return steps
}

// truthSeqs returns how a true message joins the attacker's messages: by the
// tag the simulator read from trackData or the externalId, else by the id it
// answered with (txId, notificationId) or the scenario's own externalId, as
// attempts.jsonl has them. Only the ids of untagged messages are looked up
// (a first pass over the truth finds them; a run analysed in passes has
// none: truthTagged). Nil when the truth is not to be compared (readTruth).
func (a *analyzer) truthSeqs() (func(m *rundir.TruthMessage) int64, error) {
	if a.st != nil {
		return func(m *rundir.TruthMessage) int64 { n, _ := a.tagSeq(m); return n }, nil
	}
	want := map[string]int64{}
	ok, err := a.readTruth(func(rec *rundir.TruthRecord) error {
		if m := rec.Message; m != nil {
			if _, tagged := a.tagSeq(m); !tagged {
				want[m.ID] = 0
				if m.ExternalID != "" {
					want[m.ExternalID] = 0
				}
			}
		}
		return nil
	})
	if !ok || err != nil {
		return nil, err
	}
	if len(want) > 0 {
		err = readJSONLFunc(a.fsys, rundir.AttemptsFile, a.decodeAttempt, func(at rundir.Attempt) error {
			if at.Op != "send" || at.Seq <= 0 {
				return nil
			}
			for _, k := range []string{at.TxID, at.NotificationID, at.ExternalID} {
				if v, ok := want[k]; k != "" && ok && v == 0 {
					want[k] = at.Seq
				}
			}
			return nil
		}, nil)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rundir.AttemptsFile, err)
		}
	}
	return func(m *rundir.TruthMessage) int64 {
		if n, tagged := a.tagSeq(m); tagged {
			return n
		}
		if s := want[m.ExternalID]; m.ExternalID != "" && s != 0 {
			return s
		}
		return want[m.ID]
	}, nil
}

// tagSeq is the sequence a message's tag names, when it has one of this run
// and part: the run's tag in the externalId, or the simulator's key of a
// messaging tag.
func (a *analyzer) tagSeq(m *rundir.TruthMessage) (int64, bool) {
	if tag, err := rundir.ParseExternalID(m.ExternalID); err == nil && (a.meta.ID == "" || tag.Owns(a.meta.ID, a.meta.Part)) {
		return tag.Seq, true
	}
	if n := a.simTagSeq(m); n > 0 {
		return n, true
	}
	return 0, false
}

// pollObs is one answered poll of a message: when it left and when its answer came.
type pollObs struct{ sent, answer int64 }

// truthPolls reads the answered polls of each message from attempts.jsonl.
func (a *analyzer) truthPolls() (map[int64][]pollObs, error) {
	polls := map[int64][]pollObs{}
	err := readJSONLFunc(a.fsys, rundir.AttemptsFile, a.decodeAttempt, func(at rundir.Attempt) error {
		if at.Op != "check_status" || at.Seq <= 0 || !is2xx(at.Code) || at.State == "" || !sane(at.Sent) {
			return nil
		}
		sent := at.Sent.UnixNano()
		polls[at.Seq] = append(polls[at.Seq], pollObs{sent, sent + int64(at.Latency*1e9)})
		return nil
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rundir.AttemptsFile, err)
	}
	return polls, nil
}

// pollArrivals are the true arrivals of a message m of a run that polls, ps
// its polls: a state the simulator drew at time v is seen by the first poll
// sent at or after v (surely) or by an earlier poll answered after v (maybe:
// the simulator may have answered it after the change). Each state of a
// message is one arrival, from the answer of the first poll that may have
// seen it to that of the first that surely did; a state no poll could see
// has none. Polls report no duplicates.
func pollArrivals(m *rundir.TruthMessage, ps []pollObs) idArrivals {
	arrivals := idArrivals{}
	for _, st := range m.Steps {
		v := m.AcceptedAt.Add(st.Delay.D()).UnixNano()
		x, ok := pollSees(ps, v)
		if !ok {
			continue
		}
		ch := st.Channel
		if m.API == rundir.APINotify {
			ch = ""
		}
		k := [2]string{ch, st.State}
		arrivals[k] = append(arrivals[k], x)
	}
	return arrivals
}

// pollSees is the arrival of a state that changed at v as the polls ps saw
// it (see pollArrivals); false when no poll was answered after v.
func pollSees(ps []pollObs, v int64) (arrival, bool) {
	maybe, sure := int64(0), int64(0)
	for _, p := range ps {
		if p.answer >= v && (maybe == 0 || p.answer < maybe) {
			maybe = p.answer
		}
		if p.sent >= v && (sure == 0 || p.answer < sure) {
			sure = p.answer
		}
	}
	switch {
	case sure != 0:
		return arrival{at: maybe, done: sure, ok: true, sure: true}, true
	case maybe != 0:
		return arrival{at: maybe, done: maybe, ok: true}, true
	}
	return arrival{}, false
}

// simTagSeq is the sequence in the simulator's key of a messaging tag,
// "<run>.<seq>" or "<run>.<part>.<seq>", when it names this run and part; 0
// otherwise.
func (a *analyzer) simTagSeq(m *rundir.TruthMessage) int64 {
	if m.API != rundir.APIMessaging {
		return 0
	}
	f, nf := splitTag(m.ExternalID)
	var run, part, seq string
	switch nf {
	case 2:
		run, seq = f[0], f[1]
	case 3:
		run, part, seq = f[0], f[1], f[2]
	default:
		return 0
	}
	if a.meta.ID != "" && (run != a.meta.ID || part != a.meta.Part) {
		return 0
	}
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// splitTag is strings.Split(tag, ".") of a tag of up to 3 fields, without
// a slice made for every true message; n is 4 when there are more.
func splitTag(tag string) (f [3]string, n int) {
	for {
		i := strings.IndexByte(tag, '.')
		if i < 0 {
			f[n] = tag
			return f, n + 1
		}
		if n == 2 {
			return f, 4
		}
		f[n], tag = tag[:i], tag[i+1:]
		n++
	}
}

// judgeTruth sets Agrees and lists every figure that disagrees.
func (a *analyzer) judgeTruth(r *truthReport, ts *truthStream) {
	if r.Truncated {
		r.Disagreements = []string{"the simulator's truth buffer was full: the measurements were not compared"}
		return // Agrees stays null: no data
	}
	var dis []string
	count := func(what string, truth, measured int64) {
		if truth != measured {
			dis = append(dis, fmt.Sprintf("%s: measured %d, true %d", what, measured, truth))
		}
	}
	between := func(what string, lo, hi, measured int64) {
		if lo == hi {
			count(what, lo, measured)
		} else if measured < lo || measured > hi {
			dis = append(dis, fmt.Sprintf("%s: measured %d, true %d to %d (%s)", what, measured, lo, hi, ts.mayHaveLogged(r.Unanswered)))
		}
	}
	r.DeliveryNotCompared = a.sinkLogDoubt()
	if a.meta.Delivery.Via != "none" && r.DeliveryNotCompared == "" {
		between("delivery.lost", r.ExpectedLostMin, r.ExpectedLost, r.MeasuredLost)
		between("delivery.duplicates", r.ExpectedDuplicates, r.ExpectedDuplicatesMax, r.MeasuredDuplicates)
		between("idempotency.duplicate_deliveries", r.ExpectedDuplicateDeliveries, r.ExpectedDuplicateDeliveriesMax, r.MeasuredDuplicateDeliveries)
		for _, st := range r.FailoverSteps {
			between(fmt.Sprintf("failover steps %s → %s", st.From, st.To), st.True, st.TrueMax, st.Measured)
		}
		m, lo, hi := r.MeasuredLatency, r.TrueLatency, r.TrueLatencyUpper
		between("delivered messages with a latency", r.ExpectedReceived, r.ExpectedReceivedMax, a.s.Delivery.LatencyDelivered.Count)
		between("delivery.latency.censored", lo.Censored, hi.Censored, m.Censored)
		if m.Count == lo.Count && m.Count > 0 {
			dis = append(dis, judgeLatency(a.delivery, ts.trueLo, ts.trueHi)...)
		}
	}
	if v, want := a.s.RateLimit.Algorithm.Verdict, trueVerdict(r.Algorithm); want != "" && namesAlgorithm(v) && v != want && !sameLimiter(v, want, ts.trueLimit.Requests) {
		dis = append(dis, fmt.Sprintf("rate_limit.algorithm: measured %q, true %q", v, want))
	}
	dis = append(dis, judgeQuota(a.s.RateLimit.Algorithm, ts.trueLimit)...)
	agrees := len(dis) == 0
	r.Agrees = &agrees
	r.Disagreements = dis
}

// sinkLogDoubt is why the sink's log may miss calls the simulator made and
// the sink answered ("" when it cannot): the truth counts a call the sink
// answered as arrived, so a call it could not write (answered 500 or 503),
// or one its copy did not reach, would read as a msgload bug.
func (a *analyzer) sinkLogDoubt() string {
	m := a.meta
	switch {
	case m.SinkUnread != nil && m.SinkUnread.Events != "":
		return "the copy of the sink's events did not finish (run.sink_unread)"
	case m.SinkWriteErrors > 0:
		return fmt.Sprintf("the sink could not write %s (run.sink_write_errors)", Plural(m.SinkWriteErrors, "call"))
	case m.SinkUnread != nil && m.SinkUnread.WriteErrors != "":
		return "the sink's count of calls it could not write is unknown (run.sink_unread)"
	}
	return ""
}

// judgeLatency compares the measured delivery latency (measured) with the
// true one's bounds (lo, hi), figure by figure (max as the 100th
// percentile), each by the censored rule: where the measured figure is a
// value, the truth must have one on its lower side and the value must lie
// between the two sides' values (the upper side's only when it has one);
// where it is only a lower bound, the truth's upper side must have no value
// either, and the bound must lie between the two sides' bounds — so two
// bounds censored at the same rank agree. Each within the tolerance,
// max(1 ms, 1 %) of the lower side's figure.
func judgeLatency(measured, lo, hi *hist) []string {
	var dis []string
	for _, q := range []float64{50, 95, 99, 100} {
		name := "p" + Num(q)
		if q == 100 {
			name = "max"
		}
		mv, mExact, mBound := measured.bounded(q)
		lv, lExact, lBound := lo.bounded(q)
		hv, hExact, hBound := hi.bounded(q)
		what := "delivery.latency." + name
		switch {
		case mExact && !lExact:
			dis = append(dis, fmt.Sprintf("%s: measured %s, true more than %s (no final status by the deadline)", what, dur(mv), dur(lBound)))
		case !mExact && hExact:
			dis = append(dis, fmt.Sprintf("%s: measured more than %s (no final status by the deadline), true %s to %s", what, dur(mBound), dur(lv), dur(hv)))
		case mExact:
			tol := max(truthAbsTolerance, truthRelTolerance*lv)
			if mv < lv-tol || hExact && mv > hv+tol {
				dis = append(dis, fmt.Sprintf("%s: measured %s, true %s to %s (tolerance %s)", what, dur(mv), dur(lv), showUpper(hv, hExact, hBound), dur(tol)))
			}
		default:
			tol := max(truthAbsTolerance, truthRelTolerance*lBound)
			if mBound < lBound-tol || mBound > hBound+tol {
				dis = append(dis, fmt.Sprintf("%s: measured at least %s, true at least %s to %s (tolerance %s)", what, dur(mBound), dur(lBound), dur(hBound), dur(tol)))
			}
		}
	}
	return dis
}

// showUpper is the upper side's figure: its value, or "more than" its bound.
func showUpper(v float64, exact bool, bound float64) string {
	if exact {
		return dur(v)
	}
	return "more than " + dur(bound)
}

// trueVerdict names the simulator's limiter as the rate-limit analysis does.
func trueVerdict(alg string) string {
	switch alg {
	case "sliding":
		return "sliding window"
	case "fixed":
		return "fixed window"
	case "token-bucket":
		return "token bucket"
	}
	return ""
}

// judgeQuota compares what the fit said used quota with what the simulator
// counted: failed answers, and 429s (not for a fixed window, which decides
// alike whether they count: the window is full until it ends). "cannot tell"
// claims nothing.
func judgeQuota(alg algorithm, truth rundir.TruthRateLimit) []string {
	var dis []string
	judge := func(what, measured string, counted *bool) {
		if counted == nil || measured != quotaYes && measured != quotaNo {
			return
		}
		if want := map[bool]string{true: quotaYes, false: quotaNo}[*counted]; measured != want {
			dis = append(dis, fmt.Sprintf("rate_limit.algorithm.%s: measured %q, true %q", what, measured, want))
		}
	}
	judge("failures_use_quota", alg.FailuresUseQuota, truth.CountFailures)
	if truth.Algorithm != "fixed" {
		judge("refusals_use_quota", alg.RefusalsUseQuota, truth.Count429)
	}
	return dis
}

// sameLimiter reports whether two named limiters decide alike at limit 1: a
// sliding log of 1 per w and a token bucket of capacity 1 refilled once per w
// both pass a request once the last acceptance is w old (the fit names the
// bucket, see oneLimiter).
func sameLimiter(a, b string, limit int) bool {
	pair := map[string]bool{a: true, b: true}
	return limit == 1 && pair["sliding window"] && pair["token bucket"]
}

// namesAlgorithm reports whether a verdict claims an algorithm (not "cannot
// tell", "not exercised").
func namesAlgorithm(v string) bool {
	return v == "sliding window" || v == "fixed window" || v == "token bucket"
}

// arrival is one call of the simulator to the sink, as truth.json records it.
type arrival struct {
	at, done int64 // the call's start and its answer (or error)
	due      int64 // when the simulator meant to start it (TruthCallback.Due); 0: not known
	ok       bool  // answered 2xx, or unanswered (the sink would have answered 2xx)
	sure     bool  // answered at all: it surely reached the sink
}

// truthFileOf names the file of the run's truth: truth.json in a run
// directory of before truth.jsonl, else truth.jsonl (present or missing).
func truthFileOf(fsys fs.FS) string {
	_, errJSON := fs.Stat(fsys, rundir.TruthFile)
	_, errStream := fs.Stat(fsys, rundir.TruthStreamFile)
	if errJSON == nil && errStream != nil {
		return rundir.TruthFile
	}
	return rundir.TruthStreamFile
}
