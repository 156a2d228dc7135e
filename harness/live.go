package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// While a part runs, its live loop analyses the part's directory as it is —
// reports.Analyze over what the attacker and the sink flushed so far, the one
// analysis `msgload report` runs, in a child process at the lowest CPU
// priority (livechild.go) — and does two things with it:
//
//   - it judges the scenario's abortOnFail thresholds (reports.LiveThreshold)
//     every few seconds during the attack, after each one's delayAbortEval;
//     the first that fails stops every part's sends, as a first Ctrl-C does
//     (what was sent is waited for through the grace period and reported),
//     and run.json records which threshold and when (rundir.Abort): the run
//     ends fail;
//   - every checkpoint period (a minute by default) it rewrites summary.json
//     marked partial (reports.Summary.PartialJSON), so that a run killed
//     later still leaves its figures.
//
// A judgement of thresholds the carried analysis judges
// (reports.LiveThreshold.Carried: figures of the sends the counting pass
// gives, none of rate_limit, and the sink's counts delivery.duplicates,
// .malformed and .unauthorized) runs in this process on reports.Carried,
// the same analysis fed only the lines attempts.jsonl (and events.jsonl,
// when a rule reads the sink's counts: LiveThreshold.Events) gained since
// the last judgement (readCarried, judgeCarried): its work does not grow
// with the run. It is read every period from the attack's start, delayAbortEval or
// not, so that no judgement reads more than a period's lines. When the run
// cannot be carried (a record the carried analysis did not foresee: a poll
// or a probe after its message was quiet, a line written twice) the
// judgements are a child's, below;
// so are those of the thresholds it does not judge, in the same judgement
// as the carried ones (analyze).
//
// Each analysis in a child reads every raw file again, so its work grows with the run:
// on an otherwise idle core ~5–8 µs a line, 15 s of CPU at minute 9 of a
// 5,000/s run. One starts at most every period (LiveEvery, Checkpoint) from
// the start of the last, and right after it when it took longer. An
// abortOnFail threshold is judged on what the last analysis read, so it
// stops the sends within about two analyses' length of failing: as long as
// the attack leaves a core idle, that is the analysis's CPU time; on a
// machine the attack fills, the analysis gets what the kernel gives the
// least priority, and comes later. Three things keep that length short in a
// soak: a judgement of thresholds on figures of the sends (requests.*,
// rate_limit.*, idempotency.*) reads the sends alone (reports.AnalyzeSends:
// attempts.jsonl, a third of a run with callbacks's bytes), and when none
// of them reads a percentile or the id collisions, only as far as the pass
// that counts (reports.AnalyzeSendsCounting: a third of the CPU); a checkpoint,
// which reads everything, runs in a child of its own beside the judgements
// instead of holding them back (one analysis serves both only when the
// judgement reads everything too: apart); and a judgement runs at a higher
// niceness than a checkpoint's (livechild.go: judgeNice, liveNice), so that
// beside one it gets most of the idle core.

// Defaults of the live loop (Options.LiveEvery, Options.Checkpoint).
const (
	defaultLiveEvery  = 2 * time.Second
	defaultCheckpoint = time.Minute
)

// liveTick is how often the loop looks whether an analysis is due.
const liveTick = 250 * time.Millisecond

// liveRule is one abortOnFail threshold of a part and its delayAbortEval.
type liveRule struct {
	th    *reports.LiveThreshold
	delay time.Duration
}

// liveLoop is a part's live evaluation and checkpoints.
type liveLoop struct {
	r          *partRun
	rules      []liveRule
	every      time.Duration   // between live judgements of the thresholds (0: none)
	checkpoint time.Duration   // between checkpoints (0: none)
	start      time.Time       // the attack's start by the wall clock (time.Now): delayAbortEval counts from it
	line       atomic.Value    // string: the live verdict for the progress line
	ctx        context.Context // ended by stop: the loop ends, an analysis under way is killed
	cancel     context.CancelFunc
	done       chan struct{}
	told       atomic.Bool // a failed analysis was told on stderr (by the loop or a checkpoint)
	// A checkpoint runs beside the judgements (loop): checkpointing while
	// its analysis runs, checkpoints until it has written.
	checkpointing atomic.Bool
	checkpoints   sync.WaitGroup
	exe           string // the executable a live analysis runs in (livechild.go)
	// carried: the analysis of the sends carried from one judgement to the
	// next (reports.Carried), read by the loop alone; nil before the first
	// reading, and once the run is known not to be carried (uncarried).
	carried   *reports.Carried
	uncarried bool
}

// startLive starts the part's live loop, or returns nil when there is nothing
// to do (no abortOnFail threshold and checkpoints off). Its thresholds were
// checked by the scenario's validation; one that does not compile here is
// told on stderr and not judged live.
func (r *partRun) startLive(start time.Time) *liveLoop {
	exe, err := liveExecutable()
	if err != nil {
		fmt.Fprintf(r.o.Stderr, "msgload: %s: no live analysis (no checkpoint, no abortOnFail judged during the run): this program's executable: %v\n", r.s.Name, err)
		return nil
	}
	l := &liveLoop{r: r, start: start, done: make(chan struct{}), exe: exe}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	for _, t := range r.s.Thresholds {
		if !t.AbortOnFail {
			continue
		}
		th, err := reports.CompileLive(t.Expr, r.s.Delivery.Via)
		if err != nil {
			fmt.Fprintf(r.o.Stderr, "msgload: %s: threshold %s is not judged live: %v\n", r.s.Name, t.Expr, err)
			continue
		}
		if r.shard != nil && !th.Final() {
			// A shard's share of a rate or a percentile is not the run's;
			// a count over its bound in one shard is over it in the whole.
			fmt.Fprintf(r.o.Stderr, "msgload: %s: threshold %s is not judged live in a shard: only a bound on a count that only grows is\n", r.s.Name, t.Expr)
			continue
		}
		l.rules = append(l.rules, liveRule{th: th, delay: t.DelayAbortEval.D})
	}
	if len(l.rules) > 0 {
		l.every = r.o.LiveEvery
		if l.every <= 0 {
			l.every = defaultLiveEvery
		}
		l.line.Store("thresholds …")
	}
	l.checkpoint = r.o.Checkpoint
	if l.checkpoint == 0 {
		l.checkpoint = defaultCheckpoint
	}
	l.checkpoint = max(l.checkpoint, 0) // negative: none
	if l.every == 0 && l.checkpoint == 0 {
		return nil
	}
	go l.loop()
	return l
}

// stop ends the loop, kills an analysis under way and waits for the loop, so
// that nothing writes summary.json after it (the run's own reports come next).
func (l *liveLoop) stop() {
	if l == nil {
		return
	}
	l.cancel()
	<-l.done
}

// liveLine is the part's live verdict for the progress line ("" when it has
// no abortOnFail threshold).
func (l *liveLoop) liveLine() string {
	if l == nil {
		return ""
	}
	s, _ := l.line.Load().(string)
	return s
}

func (l *liveLoop) loop() {
	defer close(l.done)
	defer l.dropCarried(nil)
	defer l.checkpoints.Wait() // nothing writes summary.json after stop
	t := time.NewTicker(liveTick)
	defer t.Stop()
	nextJudge := l.start
	nextCheckpoint := l.start.Add(l.checkpoint)
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now() // the loop's own clock: Options.Now may be a test's
		var due []int     // the rules to judge now
		if l.every > 0 && !now.Before(nextJudge) && l.attacking() {
			due = l.dueRules(now)
			if len(due) == 0 {
				// Before any delayAbortEval ends, the carried analysis
				// keeps up with what was sent: the first judgement reads
				// only its last seconds.
				l.readCarried()
				nextJudge = now.Add(l.every)
			}
		}
		judge := len(due) > 0
		// A checkpoint is due at its period, unless the last one still runs
		// (the period counts from its start).
		checkpoint := l.checkpoint > 0 && !now.Before(nextCheckpoint) && !l.checkpointing.Load()
		if judge {
			nextJudge = now.Add(l.every) // or right after this one, when it takes longer
		}
		if checkpoint {
			nextCheckpoint = now.Add(l.checkpoint)
		}
		switch {
		case judge && checkpoint && !l.apart(due):
			// Both read everything: one analysis for the two.
			if reply, ok := l.try(due, true); ok {
				l.judge(due, reply.States)
				l.writeCheckpoint(reply.Partial)
			}
			continue
		case checkpoint:
			// In a child of its own beside the judgements, which read the
			// sends alone: a long checkpoint (every line so far) does not
			// hold back an abortOnFail stop.
			l.checkpointing.Store(true)
			l.checkpoints.Add(1)
			go func() {
				defer l.checkpoints.Done()
				defer l.checkpointing.Store(false)
				if reply, ok := l.try(nil, true); ok {
					l.writeCheckpoint(reply.Partial)
				}
			}()
		}
		if judge {
			if reply, ok := l.try(due, false); ok {
				l.judge(due, reply.States)
			}
		}
	}
}

// apart says whether the rules due are judged apart from a checkpoint:
// each reads figures of the sends (a child reads the sends alone:
// livechild.go) or is carried (judged in this process on the carried
// analysis, or by a child on the counting passes). Only a judgement that
// reads everything too is the checkpoint's own analysis.
func (l *liveLoop) apart(due []int) bool {
	for _, i := range due {
		if th := l.rules[i].th; !th.Sends() && !th.Carried() {
			return false
		}
	}
	return true
}

// writeCheckpoint rewrites summary.json with a checkpoint's partial summary.
func (l *liveLoop) writeCheckpoint(partial []byte) {
	if err := reports.WriteCheckpoint(l.r.dir, partial); err != nil {
		fmt.Fprintf(l.r.o.Stderr, "msgload: %s: checkpoint: %v\n", l.r.s.Name, err)
	}
}

// failed tells a live analysis's failure on stderr, once: the loop tries
// again at its next tick, and an error that repeats every two seconds would
// bury the progress line.
func (l *liveLoop) failed(err error) {
	if !l.told.CompareAndSwap(false, true) {
		return
	}
	fmt.Fprintf(l.r.o.Stderr, "msgload: %s: live analysis: %v (tried again at the next checkpoint or judgement)\n", l.r.s.Name, err)
}

// analyze runs one live analysis of the part's directory as it is in a
// child process (livechild.go): the thresholds of the rules due judged, and
// the partial summary.json when checkpoint. It is killed when the loop stops.
func (l *liveLoop) analyze(due []int, checkpoint bool) (liveReply, error) {
	var carried liveReply
	rest := due
	if !checkpoint {
		carried, rest = l.judgeCarried(due)
		if len(rest) == 0 {
			return carried, nil
		}
	}
	req := liveRequest{Dir: l.r.dir, Via: l.r.s.Delivery.Via, Checkpoint: checkpoint}
	for _, i := range rest {
		req.Thresholds = append(req.Thresholds, l.rules[i].th.Expr())
	}
	reply, err := runLiveChild(l.ctx, l.exe, req)
	if err == nil && len(reply.States) != len(rest) {
		err = fmt.Errorf("live analysis: %d thresholds judged of %d asked", len(reply.States), len(rest))
	}
	if err != nil || len(carried.States) == 0 {
		return reply, err
	}
	// Both: the child's states in the places judgeCarried left them.
	for j, i := range rest {
		carried.States[slices.Index(due, i)] = reply.States[j]
	}
	reply.States, reply.Read = carried.States, "carried, and "+reply.Read
	return reply, nil
}

// readCarried reads what the attacker wrote since the last reading into
// the carried analysis, started at the first reading; the run's live
// analyses are a child's from the files again when it cannot be carried.
func (l *liveLoop) readCarried() *reports.Carried {
	if l.uncarried {
		return nil
	}
	if l.carried == nil {
		if !slices.ContainsFunc(l.rules, func(r liveRule) bool { return r.th.Carried() }) {
			l.uncarried = true // no rule is judged on it
			return nil
		}
		// The sink's events too when a rule carried reads them.
		events := slices.ContainsFunc(l.rules, func(r liveRule) bool { return r.th.Carried() && r.th.Events() })
		c, err := reports.NewCarried(l.r.dir, events)
		if err != nil {
			l.dropCarried(err)
			return nil
		}
		l.carried = c
	}
	if err := l.carried.Read(); err != nil {
		l.dropCarried(err)
		return nil
	}
	return l.carried
}

// dropCarried ends the carried analysis (err: why; nil at the loop's end).
// A run that is not carried from the start says nothing; one whose carrying
// stopped on the way (a record it did not foresee, a file that failed) is
// told on stderr: its judgements come later from then on.
func (l *liveLoop) dropCarried(err error) {
	if l.carried != nil {
		l.carried.Close()
		if err != nil {
			fmt.Fprintf(l.r.o.Stderr, "msgload: %s: live judgements read the files again from now on: %v\n", l.r.s.Name, err)
		}
	} else if err != nil && !reports.ErrNotCarried(err) {
		l.failed(err)
	}
	l.carried, l.uncarried = nil, true
}

// judgeCarried judges on the carried analysis (read first) the rules due
// that it judges (reports.LiveThreshold.Carried), and says which are left
// to a child (analyze): those it does not judge, and a percentile too near
// its bound (Undecided). The reply's states are due's, in its order; the
// states of the rules left are not set.
func (l *liveLoop) judgeCarried(due []int) (reply liveReply, rest []int) {
	if !slices.ContainsFunc(due, func(i int) bool { return l.rules[i].th.Carried() }) {
		return reply, due
	}
	c := l.readCarried()
	if c == nil {
		return reply, due
	}
	s, err := c.Summary()
	if err != nil {
		l.dropCarried(err)
		return reply, due
	}
	reply.States, reply.Read = make([]reports.LiveState, len(due)), "carried"
	for k, i := range due {
		if th := l.rules[i].th; th.Carried() {
			if st := th.Judge(s); !st.Undecided {
				reply.States[k] = liveState(st)
				continue
			}
		}
		rest = append(rest, i)
	}
	return reply, rest
}

// try is analyze, its failure told (failed): run.json being rewritten, say —
// the next tick tries again.
func (l *liveLoop) try(due []int, checkpoint bool) (liveReply, bool) {
	reply, err := l.analyze(due, checkpoint)
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			l.failed(err)
		}
		return reply, false
	}
	return reply, true
}

// attacking says whether the part's attack is under way: thresholds are
// judged live only then (in the grace wait there is nothing left to stop).
func (l *liveLoop) attacking() bool {
	ph, _ := l.r.phase.Load().(string)
	return ph == "attack"
}

// dueRules are the rules whose delayAbortEval is over at now, by index.
func (l *liveLoop) dueRules(now time.Time) []int {
	var due []int
	for i, rule := range l.rules {
		if now.Sub(l.start) >= rule.delay {
			due = append(due, i)
		}
	}
	return due
}

// judge shows the live verdict of the rules due (states: the analysis's
// judgement of each, in their order; the others are not judged yet), and
// stops the run's sends on the first that fails.
func (l *liveLoop) judge(due []int, states []reports.LiveState) {
	all := make([]reports.LiveState, len(l.rules))
	for i, rule := range l.rules {
		all[i] = reports.LiveState{Expr: rule.th.Expr()}
	}
	for k, i := range due {
		st := states[k]
		st.Expr = l.rules[i].th.Expr()
		all[i] = st
		if st.Known && !st.OK {
			l.abort(l.rules[i].th, st)
		}
	}
	l.line.Store(reports.LiveLine(all))
}

// abort stops the run's sends for the failing threshold th, unless another
// already did.
func (l *liveLoop) abort(th *reports.LiveThreshold, st reports.LiveState) {
	a := rundir.Abort{Threshold: th.Expr(), At: l.r.o.Now().UTC(), Value: st.Value, Final: st.Final}
	if l.r.multi {
		a.Part = l.r.s.Name
	}
	if !l.r.stops.trip(a) {
		return
	}
	why := "it failed after its delayAbortEval"
	if st.Final {
		why = "it can no longer pass"
	}
	fmt.Fprintf(l.r.o.Stderr, "\nmsgload: %s: abortOnFail threshold %s fails (value %g): %s; no new sends, waiting the grace period for what was sent\n",
		l.r.s.Name, th.Expr(), st.Value, why)
}
