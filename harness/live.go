package harness

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// While a part runs, its live loop analyses the part's directory as it is —
// reports.Analyze over what the attacker and the sink flushed so far, the one
// analysis `msgload report` runs — and does two things with it:
//
//   - it judges the scenario's abortOnFail thresholds (reports.LiveThreshold)
//     every few seconds during the attack, after each one's delayAbortEval;
//     the first that fails stops every part's sends, as a first Ctrl-C does
//     (what was sent is waited for through the grace period and reported),
//     and run.json records which threshold and when (rundir.Abort): the run
//     ends fail;
//   - every checkpoint period (a minute by default) it rewrites summary.json
//     marked partial (reports.Summary.WritePartial), so that a run killed
//     later still leaves its figures.
//
// Each analysis reads every raw file again, so its work grows with the run.
// It is paced (gentle.go): it works at most liveShare (a quarter) of one core
// at every moment, sleeping between the chunks it reads, so that the sends
// never wait for a burst of a whole core. The trade is its length: an
// analysis takes four times its work on the wall clock, more when the
// machine is busy. One starts at most every period (LiveEvery, Checkpoint)
// from the start of the last, and right after it when it took longer: the
// loop then works a quarter of a core for as long as the run goes, never
// more. So in a long run checkpoints and judgements come less often than
// asked: a checkpoint of a 5,000/s run reads the 300,000 lines of each
// minute so far, and once one analysis takes more than a minute at a
// quarter of a core they come back to back; an abortOnFail threshold is
// judged on what the last analysis read, so it stops the sends within about
// two analyses' length of failing.

// Defaults of the live loop (Options.LiveEvery, Options.Checkpoint).
const (
	defaultLiveEvery  = 2 * time.Second
	defaultCheckpoint = time.Minute
)

// liveTick is how often the loop looks whether an analysis is due.
const liveTick = 250 * time.Millisecond

// thresholdStop stops the sends of every part of a run, once, when an
// abortOnFail threshold of one of them fails live, and keeps what stopped them.
type thresholdStop struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	abort  *rundir.Abort
}

// trip records a and stops the sends, unless another threshold already did;
// it reports whether a was the first.
func (t *thresholdStop) trip(a rundir.Abort) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.abort != nil {
		return false
	}
	t.abort = &a
	t.cancel()
	return true
}

// get is what stopped the sends, or nil.
func (t *thresholdStop) get() *rundir.Abort {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.abort == nil {
		return nil
	}
	a := *t.abort
	return &a
}

// liveRule is one abortOnFail threshold of a part and its delayAbortEval.
type liveRule struct {
	th    *reports.LiveThreshold
	delay time.Duration
}

// liveLoop is a part's live evaluation and checkpoints.
type liveLoop struct {
	r          *partRun
	rules      []liveRule
	every      time.Duration // between live judgements of the thresholds (0: none)
	checkpoint time.Duration // between checkpoints (0: none)
	start      time.Time     // the attack's start by the wall clock (time.Now): delayAbortEval counts from it
	line       atomic.Value  // string: the live verdict for the progress line
	stopc      chan struct{}
	done       chan struct{}
	stopOnce   sync.Once
	// pace paces one analysis (gentle.go); nil: liveShare of the wall
	// clock, sleeping until the loop stops.
	pace func() *gentle
}

// startLive starts the part's live loop, or returns nil when there is nothing
// to do (no abortOnFail threshold and checkpoints off). Its thresholds were
// checked by the scenario's validation; one that does not compile here is
// told on stderr and not judged live.
func (r *partRun) startLive(start time.Time) *liveLoop {
	l := &liveLoop{r: r, start: start, stopc: make(chan struct{}), done: make(chan struct{})}
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

// stop ends the loop and waits for an analysis under way, so that nothing
// writes summary.json after it (the run's own reports come next).
func (l *liveLoop) stop() {
	if l == nil {
		return
	}
	l.stopOnce.Do(func() { close(l.stopc) })
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
	t := time.NewTicker(liveTick)
	defer t.Stop()
	nextJudge := l.start
	nextCheckpoint := l.start.Add(l.checkpoint)
	for {
		select {
		case <-l.stopc:
			return
		case <-t.C:
		}
		now := time.Now() // the loop's own clock: Options.Now may be a test's
		judge := l.every > 0 && !now.Before(nextJudge) && l.attacking() && l.due(now)
		checkpoint := l.checkpoint > 0 && !now.Before(nextCheckpoint)
		if !judge && !checkpoint {
			continue
		}
		if judge {
			nextJudge = now.Add(l.every) // or right after this one, when it takes longer
		}
		if checkpoint {
			nextCheckpoint = now.Add(l.checkpoint)
		}
		s, err := l.analyze()
		if err != nil {
			continue // run.json being rewritten, say: the next tick tries again
		}
		if judge {
			l.judge(s)
		}
		if checkpoint {
			if err := s.WritePartial(l.r.dir); err != nil {
				fmt.Fprintf(l.r.o.Stderr, "msgload: %s: checkpoint: %v\n", l.r.s.Name, err)
			}
		}
	}
}

// gentle is the pace of one analysis.
func (l *liveLoop) gentle() *gentle {
	if l.pace != nil {
		return l.pace()
	}
	return newGentle(liveShare, time.Now, l.sleep)
}

// sleep sleeps d, or less when the loop stops; it says whether it slept d.
func (l *liveLoop) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.stopc:
		return false
	}
}

// analyze is one live analysis of the part's directory as it is:
// reports.Analyze (the analysis `msgload report` runs), its reading paced so
// that the sends never wait for it (gentle), failing at once when the loop
// stops, and under a soft memory limit within what the process holds
// (lowerGC with no extra: the attack's own room for its garbage). The
// analysis's state is bounded, but it decodes every line again and drops it:
// at the default GOGC the heap may reach twice what is live, attacker's,
// sink's and analysis's together, and each checkpoint was the run's peak of
// memory — so what the analysis held a message more at minute 10 than at
// minute 1 counted twice in the peak (issue 23). Its cost: more short
// collections while it reads; a run of under a minute (no checkpoint)
// without abortOnFail never has one. The limit follows the attack while it
// is set (followGC): the attack sends all the while, and what it comes to
// hold (connections in flight in a stall) must not leave the collector
// without room just when the sends are behind.
func (l *liveLoop) analyze() (*reports.Summary, error) {
	defer lowerGC()()
	return liveAnalysis(gentleFS{fsys: os.DirFS(l.r.dir), g: l.gentle()}, l.r.dir)
}

// liveAnalysis is the analysis the live loop runs (reports.AnalyzeFS); a test
// looks at what the process is set to while it runs.
var liveAnalysis = reports.AnalyzeFS

// attacking says whether the part's attack is under way: thresholds are
// judged live only then (in the grace wait there is nothing left to stop).
func (l *liveLoop) attacking() bool {
	ph, _ := l.r.phase.Load().(string)
	return ph == "attack"
}

// due says whether any threshold's delayAbortEval is over at now.
func (l *liveLoop) due(now time.Time) bool {
	for _, rule := range l.rules {
		if now.Sub(l.start) >= rule.delay {
			return true
		}
	}
	return false
}

// judge evaluates the thresholds whose delay is over on s, shows the live
// verdict, and stops the run's sends on the first that fails.
func (l *liveLoop) judge(s *reports.Summary) {
	now := time.Now()
	states := make([]reports.LiveState, 0, len(l.rules))
	for _, rule := range l.rules {
		if now.Sub(l.start) < rule.delay {
			states = append(states, reports.LiveState{Expr: rule.th.Expr()})
			continue
		}
		st := rule.th.Judge(s)
		states = append(states, st)
		if st.Known && !st.OK {
			l.abort(rule.th, st)
		}
	}
	l.line.Store(reports.LiveLine(states))
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
