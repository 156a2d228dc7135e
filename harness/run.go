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

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
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
	// during the attack (0: every 2 s); an analysis that takes long spaces
	// them further (live.go).
	LiveEvery time.Duration

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
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Scenario == nil {
		return nil, errors.New("harness: no scenario")
	}
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

	var shard *rundir.Shard
	if o.ShardCount > 0 {
		sc, sh, err := shardScenario(o.Scenario, o.ShardIndex, o.ShardCount)
		if err != nil {
			return nil, err
		}
		shard = &sh
		parts = []*scenarios.Scenario{sc}
	}
	id := o.RunID
	switch {
	case id != "" && !rundir.ValidRunID(id):
		return nil, fmt.Errorf("%w: run id %q: want 1 to 64 of [A-Za-z0-9_-]", ErrShard, id)
	case id == "" && shard != nil && o.StartAt.IsZero():
		return nil, fmt.Errorf("%w: a sharded run needs one run id for all its shards: give the run id, or the start instant it is derived from", ErrShard)
	case id == "" && shard != nil:
		id = shardRunID(o.Scenario.Name, o.StartAt, shard.Count)
	case id == "":
		id = NewRunID(o.Scenario.Name, o.Now())
	}

	// Metrics first: a busy address stops the run before a directory exists.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var metrics *server
	var watch *scrapeWatch
	if o.MetricsAddr != "" {
		watch = newScrapeWatch(metricsHandler(reg))
		var err error
		if metrics, err = listenMetrics(o, watch); err != nil {
			return nil, fmt.Errorf("%w: %v (another process holds it? pass another address, a port of 0 for any free one, or \"\" for none)", ErrMetricsAddr, err)
		}
		if !o.Quiet {
			fmt.Fprintf(o.Stderr, "metrics: %s/metrics\n", metrics.URL())
		}
	}
	closeMetrics := func() {
		if metrics != nil {
			_ = metrics.shutdown(2 * time.Second)
		}
	}

	var dir string
	var err error
	if shard != nil {
		dir, err = createShardDir(o.Out, id, *shard)
	} else {
		dir, err = createRunDir(o.Out, id)
	}
	if err != nil {
		closeMetrics()
		return nil, err
	}
	res := &Result{ID: id, Dir: dir}
	if metrics != nil {
		res.MetricsAddr = metrics.Addr()
	}
	red, err := o.Scenario.Redacted()
	if err != nil {
		closeMetrics()
		return nil, fmt.Errorf("redact scenario: %w", err)
	}
	if err := rundir.WriteFile(filepath.Join(dir, rundir.ScenarioFile), red); err != nil {
		closeMetrics()
		return nil, err
	}

	quit := make(chan struct{})
	defer close(quit)
	stopSig, abortSig := interrupts(o.Signals, quit)
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	abortCtx, abort := context.WithCancel(context.Background())
	defer abort()
	go func() {
		select {
		case <-stopSig:
			fmt.Fprintln(o.Stderr, "\nmsgload: interrupted: no new sends; waiting the grace period (Ctrl-C again to stop waiting)")
			stop()
		case <-quit:
			return
		}
		select {
		case <-abortSig:
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

	// The sends stop on an interrupt, or when an abortOnFail threshold
	// fails live (stops), which is not an interrupt.
	sendCtx, stopSends := context.WithCancel(stopCtx)
	defer stopSends()
	stops := &thresholdStop{cancel: stopSends}

	runners := make([]*partRun, len(parts))
	tags := partTags(parts)
	for i, p := range parts {
		pdir := dir
		if len(parts) > 1 {
			pdir = filepath.Join(dir, p.Name)
		}
		preg := prometheus.Registerer(reg)
		if len(parts) > 1 {
			preg = prometheus.WrapRegistererWith(prometheus.Labels{"part": p.Name}, reg)
		}
		runners[i] = &partRun{o: &o, s: p, id: id, part: tags[i], dir: pdir, reg: preg, multi: len(parts) > 1, abortCh: abortSig, plan: p.Plan().Duration, metricsAddr: res.MetricsAddr, shard: shard}
		runners[i].userStop, runners[i].stops = stopCtx, stops
		runners[i].digest = rundir.ScenarioDigest(red) // the plan the run's scenario.yaml says: one for every shard of the run
		if shard != nil {
			runners[i].whole = o.Scenario
		}
	}

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

	res.Interrupted = isClosed(stopSig) || ctx.Err() != nil
	res.Aborted = abortCtx.Err() != nil
	var inputs []reports.PartInput
	for _, r := range runners {
		res.Parts = append(res.Parts, Part{Name: r.s.Name, API: r.s.API, Dir: r.dir, Summary: r.summary, Err: r.err})
		inputs = append(inputs, reports.PartInput{Name: r.s.Name, Dir: r.dir, Summary: r.summary, Err: r.err})
	}
	if len(runners) > 1 && !res.Aborted {
		// The whole run's summary.json, report.html, report.md and junit.xml
		// at the top: the worst part's verdict, then each part.
		res.Whole, res.WholeErr = reports.BuildRun(dir, inputs, res.Interrupted)
		if res.WholeErr != nil {
			fmt.Fprintf(o.Stderr, "msgload: the whole run's reports: %v\n", res.WholeErr)
		}
	}
	if metrics != nil {
		if !res.Aborted {
			// the next interrupt ends the wait: the first one if none came
			// yet, else the second
			next := stopSig
			if isClosed(stopSig) {
				next = abortSig
			}
			watch.linger(o.MetricsLinger, next)
		}
		closeMetrics()
	}
	return res, nil
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
