package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sink"
)

// Options is one run. cmd/ fills it from flags and environment; the harness
// reads neither.
type Options struct {
	Scenario *scenarios.Scenario
	Out      string // parent of run directories (default "runs")

	// MetricsAddr serves /metrics of the attacker and of what is embedded;
	// "" serves none, port 0 any free port. A busy address is an error
	// (ErrMetricsAddr) before anything starts: falling back to another port
	// would leave the Prometheus of deploy/ scraping the wrong process. The
	// address in use is in Result.MetricsAddr and in run.json.
	MetricsAddr string
	// MetricsFallback: MetricsAddr is a default nobody chose, so when it is
	// busy (another run lingering on it) /metrics goes to a free port of the
	// same host, with a warning on Stderr naming both, instead of failing.
	MetricsFallback bool
	// MetricsLinger keeps /metrics up after the run until one more scrape, at
	// most this long, so Prometheus sees the final counts.
	MetricsLinger time.Duration

	// SinkReadToken is sent as "Authorization: Bearer <token>" to the read API
	// of a standalone sink (scenario sink: URL), which needs it beyond loopback.
	SinkReadToken string
	// SinkFault, when set, is the embedded sink's fault (sink.Fault): it
	// answers a share of calls or messages with another status, to make the
	// service retry on purpose (msgload characterise's callback probes). The
	// grace wait then runs whole: the sender's silence after its last try is
	// what says it gave up.
	SinkFault *sink.Fault
	// SinkWrapLog (tests only; nil in production) is the embedded sink's
	// sink.Options.WrapLog: a file that fails on purpose under its event
	// log, to run a whole scenario on a full or failing disk. Each part's
	// sink calls it once.
	SinkWrapLog func(*os.File) sink.LogFile
	// RecordWrap (tests only; nil in production) wraps each part's attempt
	// recorder: one that fails on purpose (a failing disk under
	// attempts.jsonl), to run a whole scenario whose attack fails.
	RecordWrap func(attack.Recorder) attack.Recorder
	// PollToo (messaging, delivery via the sink): every accepted message is
	// also polled by check-status every delivery.pollInterval, as with
	// delivery via poll, while its callbacks come to the sink (msgload
	// characterise compares the two); the report measures delivery by the
	// callbacks alone.
	PollToo bool
	// HoldToken keeps each notify client's token until the service refuses
	// it (attack.Options.HoldToken): msgload characterise's token probe.
	HoldToken bool

	MaxMessages int64 // hard cap on messages really sent, over the scenario's; 0 = scenario's
	// ConfirmTargets are the hosts (or host:port) allowed as non-loopback
	// targets (--confirm-target); when empty, the scenario's confirm: applies.
	ConfirmTargets []string
	Version        string // msgload's module version
	Commit         string // the VCS revision msgload was built from ("+dirty" when modified)
	CommitTime     string // its vcs.time
	Host           string // the machine the run goes on (cmd/ asks os.Hostname)

	Stdout, Stderr io.Writer
	TTY            bool // Stderr is a terminal: a live progress bar instead of lines
	// Quiet shows no progress line and no metrics address at the start (the
	// caller prints Result.MetricsAddr at the end); warnings and errors still go
	// to Stderr.
	Quiet bool

	// Signals: the first stops new sends (the grace period is still waited and
	// the reports written); the second stops waiting, flushes what was
	// collected and ends the run without reports.
	Signals <-chan os.Signal

	// RunID names the run instead of a new id: a sharded run has one id for
	// all its shards, so one sink correlates all of them. 1 to 64 of
	// [A-Za-z0-9_-].
	RunID string
	// ShardCount > 0 runs shard ShardIndex (0 … ShardCount-1) of a run split
	// among ShardCount processes (rundir.Shard): the run directory is
	// <Out>/<id>/shard-<I>, and msgload report --merge makes the whole run
	// from the shards' directories. Without RunID the id is shardRunID of the
	// scenario and StartAt, which must then be set.
	ShardIndex, ShardCount int
	// StartAt, when set, is the instant the attack begins (every shard of a
	// sharded run on the same one); what is embedded starts before it.
	StartAt time.Time
	// Barrier, when set, is a directory on storage every shard shares: each
	// writes its ready marker there and the attack begins once all
	// ShardCount markers are there, at StartAt when set (barrier.go), or
	// BarrierTimeout after reaching it at the latest.
	Barrier        string
	BarrierTimeout time.Duration

	// Checkpoint is how often summary.json is rewritten, marked partial,
	// while the run goes (live.go): 0 is a minute, a negative value none.
	Checkpoint time.Duration
	// LiveEvery is how often the abortOnFail thresholds are judged live
	// during the attack (0: every 2 s); an analysis that takes longer (it
	// runs in a child process at the least priority) delays the next
	// (live.go, livechild.go).
	LiveEvery time.Duration
	// MemoryEvery is how often the target's memory is sampled when the
	// scenario names its metrics endpoint (target.metrics); 0: every 10 s.
	MemoryEvery time.Duration

	// DiskReserve is the free space, in bytes, the run keeps on its
	// directory's disk (disk.go): less at the start refuses the run
	// (ErrDiskReserve), less during it stops the sends (rundir.DiskLow).
	// 0 is rundir.DefaultDiskReserve, a negative value none.
	DiskReserve int64
	// DiskFree tells the free space of the disk holding a path (default
	// rundir.FreeBytes): tests give a disk that fills.
	DiskFree func(path string) (uint64, error)

	Now func() time.Time // default time.Now
}

// ErrMetricsAddr: the metrics address could not be listened on (busy, or not
// an address); the run did not start.
var ErrMetricsAddr = errors.New("metrics address")

// Part is the outcome of one part of a run (a scenario without parts is one part).
type Part struct {
	Name    string
	API     string
	Dir     string
	Summary *reports.Summary // nil when the reports could not be built
	Err     error            // what went wrong in this part, if anything
}

// Result is the outcome of a run.
type Result struct {
	ID          string
	Dir         string
	MetricsAddr string // host:port /metrics was served on; "" for none
	Parts       []Part
	Interrupted bool // a first interrupt stopped the sends
	Aborted     bool // a second interrupt cut the grace wait; no reports

	// Whole is the whole run's summary of a run with parts, written at the
	// top of its directory (nil for a run without parts, or without reports).
	Whole    *reports.RunSummary
	WholeErr error // why the whole run's files could not be written
}

// OK reports whether the run's verdict is pass: every part built its reports
// and each part's verdict is pass.
func (r *Result) OK() bool { return r.Verdict() == reports.VerdictPass }

// Verdict is the worst of the parts' verdicts (reports.WorstVerdict): a part
// that stopped with an error, or has no report, is incomplete when the run was
// interrupted and error otherwise.
func (r *Result) Verdict() string {
	if len(r.Parts) == 0 {
		return reports.VerdictError
	}
	vs := make([]string, 0, len(r.Parts))
	for _, p := range r.Parts {
		switch {
		case p.Err != nil || p.Summary == nil:
			vs = append(vs, reports.NoReportVerdict(r.Interrupted || r.Aborted))
		default:
			vs = append(vs, p.Summary.Verdict)
		}
	}
	return reports.WorstVerdict(vs...)
}

// Run runs o.Scenario from start to end and returns what happened. An error
// means the run could not start (bad target, no directory); a failure after
// the start is reported in the Part, with everything collected kept on disk.
// Its stages: the parts and their targets, the run id, the metrics, the run
// directory, the interrupts, the parts side by side, the whole run's reports.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Scenario == nil {
		return nil, errors.New("harness: no scenario")
	}
	o.processDefaults()
	parts, err := checkedParts(o)
	if err != nil {
		return nil, err
	}
	var shard *rundir.Shard
	if o.ShardCount > 0 {
		sc, sh, err := shardScenario(o.Scenario, o.ShardIndex, o.ShardCount)
		if err != nil {
			return nil, err
		}
		shard = &sh
		parts = []*scenarios.Scenario{sc}
	}
	id, err := runID(o, shard)
	if err != nil {
		return nil, err
	}
	// Metrics first: a busy address stops the run before a directory exists.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics, watch, err := startMetrics(o, reg)
	if err != nil {
		return nil, err
	}
	closeMetrics := func() {
		if metrics != nil {
			_ = metrics.shutdown(2 * time.Second)
		}
	}
	planned := int64(0)
	for _, p := range parts {
		planned += p.Plan().DiskBytes
	}
	if err := checkDisk(&o, planned); err != nil {
		closeMetrics()
		return nil, err
	}
	res, red, err := startRunDir(o, id, shard)
	if err != nil {
		closeMetrics()
		return nil, err
	}
	if metrics != nil {
		res.MetricsAddr = metrics.Addr()
	}

	quit := make(chan struct{})
	defer close(quit)
	sig := watchInterrupts(ctx, o, quit)
	defer sig.cancel()
	// The sends stop on an interrupt, or when an abortOnFail threshold
	// fails live (stops), which is not an interrupt.
	sendCtx, stopSends := context.WithCancel(sig.stopCtx)
	defer stopSends()
	stops := &sendStop{cancel: stopSends}
	runners := newRunners(&o, parts, runnerShared{id: id, res: res, red: red, shard: shard, reg: reg, sig: sig, stops: stops})
	diskCtx, unwatchDisk := context.WithCancel(context.Background())
	var disk sync.WaitGroup
	disk.Go(func() { watchDisk(diskCtx, &o, res.Dir, stops) })
	runSideBySide(&o, runners, sendCtx, sig.abortCtx)
	unwatchDisk()
	disk.Wait()

	res.Interrupted = isClosed(sig.stopSig) || ctx.Err() != nil
	res.Aborted = sig.abortCtx.Err() != nil
	wholeRun(&o, res, runners)
	if metrics != nil {
		if !res.Aborted {
			// the next interrupt ends the wait: the first one if none came
			// yet, else the second
			next := sig.stopSig
			if isClosed(sig.stopSig) {
				next = sig.abortSig
			}
			watch.linger(o.MetricsLinger, next)
		}
		closeMetrics()
	}
	return res, nil
}

// processDefaults fills the process state a caller may leave out (the clock,
// the output directory, the streams): not scenario defaults, which the
// scenario table applies.
func (o *Options) processDefaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Out == "" {
		o.Out = "runs"
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
}

// checkedParts are the scenario's parts (the scenario itself without parts),
// each target checked against the confirmations (the run's, else the part's).
func checkedParts(o Options) ([]*scenarios.Scenario, error) {
	parts := []*scenarios.Scenario{o.Scenario}
	if len(o.Scenario.Parts) > 0 {
		parts = parts[:0]
		for i := range o.Scenario.Parts {
			parts = append(parts, &o.Scenario.Parts[i])
		}
	}
	for _, p := range parts {
		if p.Target.Embedded {
			continue
		}
		confirm := o.ConfirmTargets
		if len(confirm) == 0 {
			confirm = p.Confirm
		}
		for _, u := range []string{p.Target.BaseURL, p.Target.TokenURL} {
			if u == "" {
				continue
			}
			if err := CheckTarget(u, confirm); err != nil {
				return nil, fmt.Errorf("%s: %w", p.Name, err)
			}
		}
	}
	return parts, nil
}

// runID is the run's id: the given one, else one derived from the start
// instant for a sharded run (the same for all its shards), else a new one.
func runID(o Options, shard *rundir.Shard) (string, error) {
	id := o.RunID
	switch {
	case id != "" && !rundir.ValidRunID(id):
		return "", fmt.Errorf("%w: run id %q: want 1 to 64 of [A-Za-z0-9_-]", ErrShard, id)
	case id == "" && shard != nil && o.StartAt.IsZero():
		return "", fmt.Errorf("%w: a sharded run needs one run id for all its shards: give the run id, or the start instant it is derived from", ErrShard)
	case id == "" && shard != nil:
		id = shardRunID(o.Scenario.Name, o.StartAt, shard.Count)
	case id == "":
		id = NewRunID(o.Scenario.Name, o.Now())
	}
	return id, nil
}

// startMetrics serves reg at o.MetricsAddr (nil, nil when none).
func startMetrics(o Options, reg *prometheus.Registry) (*server, *scrapeWatch, error) {
	if o.MetricsAddr == "" {
		return nil, nil, nil
	}
	watch := newScrapeWatch(metricsHandler(reg))
	metrics, err := listenMetrics(o, watch)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v (another process holds it? pass another address, a port of 0 for any free one, or \"\" for none)", ErrMetricsAddr, err)
	}
	if !o.Quiet {
		fmt.Fprintf(o.Stderr, "metrics: %s/metrics\n", metrics.URL())
	}
	return metrics, watch, nil
}

// startRunDir creates the run's directory (a shard's own) and writes the
// redacted scenario.yaml in it; red is that file's text.
func startRunDir(o Options, id string, shard *rundir.Shard) (res *Result, red []byte, err error) {
	var dir string
	if shard != nil {
		dir, err = createShardDir(o.Out, id, *shard)
	} else {
		dir, err = createRunDir(o.Out, id)
	}
	if err != nil {
		return nil, nil, err
	}
	red, err = o.Scenario.Redacted()
	if err != nil {
		return nil, nil, fmt.Errorf("redact scenario: %w", err)
	}
	if err := rundir.WriteFile(filepath.Join(dir, rundir.ScenarioFile), red); err != nil {
		return nil, nil, err
	}
	return &Result{ID: id, Dir: dir}, red, nil
}

// runSignals are a run's two stops: the first interrupt (or a cancelled
// parent context) stops new sends, the second aborts the waits.
type runSignals struct {
	stopSig, abortSig <-chan struct{}
	stopCtx, abortCtx context.Context
	cancel            func()
}

// watchInterrupts turns o.Signals and ctx into the run's stops until quit.
func watchInterrupts(ctx context.Context, o Options, quit chan struct{}) runSignals {
	var sig runSignals
	sig.stopSig, sig.abortSig = interrupts(o.Signals, quit)
	stopCtx, stop := context.WithCancel(ctx)
	abortCtx, abort := context.WithCancel(context.Background())
	sig.stopCtx, sig.abortCtx = stopCtx, abortCtx
	sig.cancel = func() { abort(); stop() }
	go func() {
		select {
		case <-sig.stopSig:
			fmt.Fprintln(o.Stderr, "\nmsgload: interrupted: no new sends; waiting the grace period (Ctrl-C again to stop waiting)")
			stop()
		case <-quit:
			return
		}
		select {
		case <-sig.abortSig:
			fmt.Fprintln(o.Stderr, "\nmsgload: interrupted again: flushing what was collected and stopping")
			abort()
		case <-quit:
		}
	}()
	go func() { // a cancelled parent context stops the run the same way
		select {
		case <-ctx.Done():
			stop()
		case <-quit:
		}
	}()
	return sig
}

// runnerShared is what every part of a run shares.
type runnerShared struct {
	id    string
	res   *Result
	red   []byte // the run's scenario.yaml
	shard *rundir.Shard
	reg   *prometheus.Registry
	sig   runSignals
	stops *sendStop
}

// newRunners are the parts' runs: each in its own directory (the run's when
// it has one part) with its metrics labelled by part.
func newRunners(o *Options, parts []*scenarios.Scenario, sh runnerShared) []*partRun {
	runners := make([]*partRun, len(parts))
	tags := partTags(parts)
	for i, p := range parts {
		pdir := sh.res.Dir
		preg := prometheus.Registerer(sh.reg)
		if len(parts) > 1 {
			pdir = filepath.Join(sh.res.Dir, p.Name)
			preg = prometheus.WrapRegistererWith(prometheus.Labels{"part": p.Name}, sh.reg)
		}
		runners[i] = &partRun{o: o, s: p, id: sh.id, part: tags[i], dir: pdir, reg: preg, multi: len(parts) > 1, abortCh: sh.sig.abortSig, plan: p.Plan().Duration, metricsAddr: sh.res.MetricsAddr, shard: sh.shard}
		runners[i].userStop, runners[i].stops = sh.sig.stopCtx, sh.stops
		runners[i].digest = rundir.ScenarioDigest(sh.red) // the plan the run's scenario.yaml says: one for every shard of the run
		if sh.shard != nil {
			runners[i].whole = o.Scenario
		}
	}
	return runners
}

// runSideBySide runs the parts side by side, with the progress line unless quiet.
func runSideBySide(o *Options, runners []*partRun, sendCtx, abortCtx context.Context) {
	planned := int64(0)
	for _, r := range runners {
		planned += r.s.Plan().Messages
	}
	started := o.Now()
	var prog *progress
	if !o.Quiet {
		prog = newProgress(o.Stderr, o.TTY, planned, func() counters {
			c := counters{Planned: planned, Elapsed: o.Now().Sub(started)}
			for _, r := range runners {
				r.addTo(&c)
			}
			return c
		})
	}
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.run(sendCtx, abortCtx)
		}()
	}
	wg.Wait()
	if prog != nil {
		prog.stop()
	}
}

// wholeRun adds the parts to res and, for a run of several parts not
// aborted, writes the whole run's summary.json, report.html, report.md and
// junit.xml at the top: the worst part's verdict, then each part.
func wholeRun(o *Options, res *Result, runners []*partRun) {
	var inputs []reports.PartInput
	for _, r := range runners {
		res.Parts = append(res.Parts, Part{Name: r.s.Name, API: r.s.API, Dir: r.dir, Summary: r.summary, Err: r.err})
		inputs = append(inputs, reports.PartInput{Name: r.s.Name, Dir: r.dir, Summary: r.summary, Err: r.err})
	}
	if len(runners) > 1 && !res.Aborted {
		res.Whole, res.WholeErr = render.BuildRun(res.Dir, inputs, res.Interrupted)
		if res.WholeErr != nil {
			fmt.Fprintf(o.Stderr, "msgload: the whole run's reports: %v\n", res.WholeErr)
		}
	}
}

// partTags names each part in its messages' tags (rundir.Tag.Part): nothing
// for a run without parts (its tags are as before parts were tagged); the
// parts' names when every one can ride in a tag (1 to 64 of [A-Za-z0-9_-]),
// else p1, p2, … for all of them, so that two parts never share a name.
func partTags(parts []*scenarios.Scenario) []string {
	tags := make([]string, len(parts))
	if len(parts) < 2 {
		return tags
	}
	for i, p := range parts {
		if !rundir.ValidRunID(p.Name) {
			for j := range tags {
				tags[j] = "p" + strconv.Itoa(j+1)
			}
			return tags
		}
		tags[i] = p.Name
	}
	return tags
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
