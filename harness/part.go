package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// reportMemHeadroom is the least room the collector has above what the
// process retains while the run's report or a live analysis is built under
// the lowered memory limit (lowerGC; followGC keeps it as the process
// grows): the runtime's minimum heap (4 MB). Without it the limit would be
// the heap of the moment plus the runtime's own memory, and a small report
// would be collected without end (a 1-message run's: 40 collections at a
// 1 MB goal). It was twice that, 8 MB: above the 3–6 MB of free heap the
// attack holds between its collections at 1,000/s with callbacks, so each
// checkpoint during the attack ran 2–5 MB above what the process held and
// then had its ~3 MB of state given that room again (followGC): +5–6 MB of
// RSS while it ran, the peak of a 10-minute run (issue 23). At 4 MB the
// checkpoint works in the attack's own room (+1–2 MB), its collections
// more often (3,828 instead of 3,019 in the 10-minute run, still under 1 %
// of the CPU).
const reportMemHeadroom = 4 << 20

// gracePoll is how often the grace wait looks whether everything arrived.
const gracePoll = 250 * time.Millisecond

// embeddedReg is the registerer of the embedded simulator and sink: their
// series carry the run's id as a constant label (one value per process, so the
// cardinality stays bounded), which lets the dashboards tell two runs' servers
// apart without a join, and from the first scrape on — the attacker's
// msgload_run_info, which the attacker series are joined on, appears only when
// the attack starts, after the simulator and sink already serve their series.
// A standalone sim or sink has no run and no such label; the dashboards
// attribute it to the runs alive at the time (grafana/README.md).
func (r *partRun) embeddedReg() prometheus.Registerer {
	return prometheus.WrapRegistererWith(prometheus.Labels{"run_id": r.id}, r.reg)
}

// remotePull is how often the grace wait reads a standalone sink's new events.
const remotePull = time.Second

// remoteRead bounds one read of a standalone sink during the grace wait, so a
// read that hangs costs the wait a poll, not the grace period.
const remoteRead = 5 * time.Second

// partRun is one part of a run: its own simulator and sink when embedded, its
// own attack and run directory. Parts of one run go side by side.
type partRun struct {
	o       *Options
	s       *scenarios.Scenario
	id      string
	part    string // the part's name in the tags (rundir.Tag.Part): "" for a run without parts
	dir     string
	reg     prometheus.Registerer
	multi   bool
	abortCh <-chan struct{}
	// metricsAddr is where the run serves /metrics ("" for nowhere), for run.json.
	metricsAddr string
	// shard, of a sharded run: which messages this process sends; whole is
	// the scenario of the whole run (s is the shard's share of it).
	shard *rundir.Shard
	whole *scenarios.Scenario
	// digest is rundir.ScenarioDigest of the run's scenario.yaml, for run.json.
	digest string
	// rec is the attempt log, flushed to disk on the first interrupt and at
	// the attack's end, so a process killed afterwards keeps what it sent.
	rec interface{ Flush() error }

	prog     attack.Progress
	phase    atomic.Value // "attack", "grace", "report"
	plan     time.Duration
	graceEnd atomic.Int64 // UnixNano by o.Now when the grace wait ends at the latest; 0 before it starts
	sink     *sink.Sink   // embedded sink, or nil
	sim      *sim.Server

	// A standalone sink: the run's events copied from it (grace goroutine only,
	// but for the atomic count the progress line reads).
	remote      *remoteLog
	remoteErr   error // a final refusal of the read API: no more reads until the last copy
	remoteOK    bool  // the last read of the read API succeeded
	remoteFails int   // reads that failed and were tried again
	remotePull  time.Time

	// Against a real target: the run's accepted messages and those with a
	// final status (fed by the attempts, and by the sink's events: the
	// embedded sink's log read from localAfter on, or the standalone sink's
	// copy).
	tally      *tally
	localAfter int64
	localErr   error

	// userStop is the run's stop by an interrupt (or a cancelled context):
	// the attack's own context is also cancelled by stops, when an
	// abortOnFail threshold fails live, which is no interrupt.
	userStop context.Context
	stops    *sendStop
	live     *liveLoop // the live judgement of thresholds and checkpoints (live.go); nil when none

	summary *reports.Summary
	err     error
}

// addTo adds this part's live counts to c.
func (r *partRun) addTo(c *counters) {
	s := r.prog.Snapshot()
	c.Sent += s.Sent
	c.Accepted += s.Accepted
	c.RateLimited += s.RateLimited
	c.Errors += s.Errors
	if ph, _ := r.phase.Load().(string); ph != "" && (c.Phase == "" || ph == "attack") {
		c.Phase = ph
	}
	switch ph, _ := r.phase.Load().(string); ph {
	case "attack":
		if r.plan > c.Elapsed {
			c.Left = max(c.Left, r.plan-c.Elapsed)
		}
	case "grace":
		if end := r.graceEnd.Load(); end != 0 {
			c.GraceLeft = max(c.GraceLeft, time.Duration(end-r.o.Now().UnixNano()))
		}
	}
	if k := r.sink; k != nil {
		st := k.Stats()
		c.Callbacks += st.Callbacks + st.Webhooks + st.Incoming
	}
	if l := r.remote; l != nil {
		c.Callbacks += l.events.Load()
	}
	if line := r.live.liveLine(); line != "" {
		c.Live = append(c.Live, line)
	}
}

// run runs the part; errors land in r.err, and whatever was collected stays
// on disk.
func (r *partRun) run(stopCtx, abortCtx context.Context) {
	if err := r.runErr(stopCtx, abortCtx); err != nil {
		r.err = err
		fmt.Fprintf(r.o.Stderr, "msgload: %s: %v\n", r.s.Name, err)
	}
}

// runErr runs the part's stages in order: its directory, the sink, the
// target, the attack, the grace wait, the closing of what it started, and its
// reports. What a stage started is closed, last first, on every return; an
// error of closing counts when nothing failed before.
func (r *partRun) runErr(stopCtx, abortCtx context.Context) (err error) {
	if err := r.writePartScenario(); err != nil {
		return err
	}
	r.registerDisk()
	var cs closeStack
	defer func() {
		if cerr := cs.closeAll(); err == nil {
			err = cerr
		}
	}()

	if !r.s.Target.Embedded && r.s.Delivery.Via != "poll" && r.s.Delivery.Via != "none" {
		r.tally = newTally(r.id, r.part)
	}
	sinkURL, err := r.startSink(&cs)
	if err != nil {
		return err
	}
	if r.remote != nil {
		defer r.remote.close() // on an early return; the normal path closes it after the last copy
	}
	baseURL, tokenURL, err := r.startTarget(sinkURL, &cs)
	if err != nil {
		return err
	}
	ld, ao, meta, err := r.prepareAttack(baseURL, tokenURL, sinkURL, &cs)
	if err != nil {
		return err
	}
	metaPath := filepath.Join(r.dir, rundir.MetaFile)
	if err := r.startAtInstant(stopCtx, &meta, metaPath); err != nil {
		return err
	}
	r.live = r.startLive(time.Now())
	defer r.live.stop() // on an early return; the normal path stops it after the grace wait
	stopMemory := r.sampleTargetMemory(meta.TargetMemory)
	defer stopMemory()
	attackErr := r.attack(stopCtx, abortCtx, ao, &meta, metaPath, stopMemory)
	r.waitForCallbacks()
	if !meta.Interrupted && cmp.Or(r.userStop, stopCtx).Err() != nil {
		// interrupted in the grace wait: the process is being stopped (its
		// exit says so), and a run cut off at any point is incomplete, not a
		// pass
		meta.Interrupted = true
	}
	r.live.stop() // before the closing: no checkpoint after the run's own reports

	// The embedded sink's calls it could not write, counted before it
	// closes: a call that comes after its close (answered 503) is after the
	// run's end, not one the run's figures miss.
	if r.sink != nil {
		meta.SinkWriteErrors = r.sink.Stats().WriteErrors
	}
	// Close what is embedded (simulator, then sink), then the attempt log.
	r.phase.Store("report")
	err = cs.closeAll()
	// The run ends here, what is embedded closed. A standalone sink's events
	// are copied up to this instant after it (finishRemoteCopy), so that the
	// copy holds every call the sink acknowledged before run.json's end —
	// the window `msgload report --merge` reads sink logs by (mergeSinkLogs).
	// The end was set after the copy before: a call the sink acknowledged
	// after the copy's last read and before the end was in neither.
	meta.End = r.o.Now().UTC()
	_, meta.DiskLow = r.stops.stopped() // also when the disk ran low in the grace wait
	if n, unread := r.finishRemoteCopy(sinkURL); r.remote != nil {
		meta.SinkWriteErrors, meta.SinkUnread = n, unread
	}
	if werr := writeJSON(metaPath, meta); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if attackErr != nil {
		return attackErr
	}
	r.writeReplayReport(ld, meta.Interrupted)
	if isClosed(r.abortCh) {
		return nil // a second interrupt: no reports; `msgload report DIR` builds them later
	}
	return r.buildReports()
}

// closeStack holds what a part started and must close: the embedded servers
// and the attempt log, closed last first so that what depends on another
// (the simulator's callbacks on the sink) ends before it.
type closeStack []func() error

// push adds a closer, to run before those pushed earlier.
func (cs *closeStack) push(f func() error) {
	*cs = append(*cs, f)
}

// closeAll runs the closers last first and empties the stack, so that the
// normal path's closing and the deferred one on an early return never close
// twice; it returns the first error, after running every closer.
func (cs *closeStack) closeAll() error {
	var err error
	for i := len(*cs) - 1; i >= 0; i-- {
		if cerr := (*cs)[i](); cerr != nil && err == nil {
			err = cerr
		}
	}
	*cs = nil
	return err
}

// writePartScenario gives a part of a multi-part run its own directory with
// its (redacted) scenario, so that each part's directory can be reported on
// alone; a one-part run's directory and scenario are the run's.
func (r *partRun) writePartScenario() error {
	if !r.multi {
		return nil
	}
	if err := os.Mkdir(r.dir, rundir.DirMode); err != nil {
		return fmt.Errorf("create part directory: %w", err)
	}
	red, err := r.s.Redacted()
	if err != nil {
		return fmt.Errorf("redact scenario: %w", err)
	}
	return rundir.WriteFile(filepath.Join(r.dir, rundir.ScenarioFile), red)
}

// startSink starts the embedded sink, or opens the copy of a standalone
// sink's events, and returns the sink's address. The sink comes first: the
// simulator and the attack need its address. A standalone sink's copy is left
// in r.remote for the caller to close.
func (r *partRun) startSink(cs *closeStack) (sinkURL string, err error) {
	s := r.s
	switch s.Sink {
	case "", "embedded":
		ko := sink.Options{LogPath: filepath.Join(r.dir, rundir.EventsFile), RunID: r.id, Part: r.part, WrapLog: r.o.SinkWrapLog}
		if r.o.SinkFault != nil {
			ko.Fault = *r.o.SinkFault
		}
		k, err := sink.New(ko, r.embeddedReg())
		if err != nil {
			return "", fmt.Errorf("start the sink: %w", err)
		}
		srv, err := listen("127.0.0.1:0", k.Handler())
		if err != nil {
			_ = k.Close()
			return "", fmt.Errorf("start the sink: %w", err)
		}
		r.sink = k
		sinkURL = srv.URL()
		cs.push(func() error {
			serr := srv.shutdown(5 * time.Second)
			if cerr := k.Close(); cerr != nil {
				return fmt.Errorf("close the sink: %w", cerr)
			}
			return serr
		})
	default:
		sinkURL = s.Sink
		if s.Delivery.Via != "poll" && s.Delivery.Via != "none" {
			l, err := newRemoteLog(sinkURL, r.id, filepath.Join(r.dir, rundir.EventsFile))
			if err != nil {
				return "", err
			}
			l.part = r.part
			l.anyRun = s.API == rundir.APINotify && s.Load.Profile == "replay" && s.Load.ExternalIDs == replay.ExternalIDsKeep
			l.token = r.o.SinkReadToken
			l.shard = r.shard
			l.tally = r.tally
			r.remote = l
		}
	}
	return sinkURL, nil
}

// startTarget starts the embedded simulator when the scenario asks for one and
// returns the addresses the attack sends to and takes its tokens from: the
// simulator's, or the scenario's real target's.
func (r *partRun) startTarget(sinkURL string, cs *closeStack) (baseURL, tokenURL string, err error) {
	s := r.s
	baseURL, tokenURL = s.Target.BaseURL, s.Target.TokenURL
	if !s.Target.Embedded {
		return baseURL, tokenURL, nil
	}
	cfg, err := simConfig(s, sinkURL)
	if err != nil {
		return "", "", err
	}
	sv, err := sim.New(cfg, r.embeddedReg())
	if err != nil {
		return "", "", fmt.Errorf("start the simulator: %w", err)
	}
	if err := r.streamTruth(sv); err != nil {
		_ = sv.Close()
		return "", "", err
	}
	srv, err := listen("127.0.0.1:0", sv.Handler())
	if err != nil {
		_ = sv.Close()
		return "", "", fmt.Errorf("start the simulator: %w", err)
	}
	r.sim = sv
	baseURL, tokenURL = srv.URL(), srv.URL()+rundir.RouteToken
	// Closed before the sink (closers run last first): callbacks in flight
	// land before the sink's log is closed.
	cs.push(func() error {
		_ = srv.shutdown(5 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if isClosed(r.abortCh) {
			cancel() // a second interrupt: do not wait for callbacks in flight
		}
		if err := sv.Shutdown(ctx); err != nil {
			return fmt.Errorf("simulator truth: %w", err)
		}
		if err := writeTruthJSON(r.dir); err != nil {
			// A copy for older readers: the report reads truth.jsonl, so a
			// disk too full for the copy costs the run nothing.
			fmt.Fprintf(r.o.Stderr, "msgload: %s: truth.json, the whole copy of truth.jsonl, not written: %v (the report reads truth.jsonl)\n", r.s.Name, err)
		}
		return nil
	})
	return baseURL, tokenURL, nil
}

// prepareAttack builds everything the attack needs before it starts: the load,
// the attempt log (closed with the rest), the metrics and the attack's options
// with the run's metadata; against a real target the attempts also feed the
// tally that tells the grace wait when everything arrived.
func (r *partRun) prepareAttack(baseURL, tokenURL, sinkURL string, cs *closeStack) (load, attack.Options, rundir.Meta, error) {
	ld, err := scenarioLoad(r.s, sinkURL)
	if err != nil {
		return load{}, attack.Options{}, rundir.Meta{}, err
	}
	if r.tally != nil {
		r.tally.chain = rundir.ParseChain(ld.chain) // before the attack: no event can come earlier
	}
	rec, err := attack.NewRecorder(r.dir)
	if err != nil {
		return load{}, attack.Options{}, rundir.Meta{}, fmt.Errorf("attempt log: %w", err)
	}
	r.rec = rec
	cs.push(func() error {
		if err := rec.Close(); err != nil {
			return fmt.Errorf("close the attempt log: %w", err)
		}
		return nil
	})
	m, err := r.attackMetrics()
	if err != nil {
		return load{}, attack.Options{}, rundir.Meta{}, err
	}

	ao, meta, err := r.attackOptions(ld, baseURL, tokenURL, sinkURL)
	if err != nil {
		return load{}, attack.Options{}, rundir.Meta{}, err
	}
	ao.Out, ao.Metrics, ao.Progress = rec, m, &r.prog
	if r.tally != nil {
		ao.Out = tallyRecorder{Recorder: rec, t: r.tally}
	}
	if r.o.RecordWrap != nil {
		ao.Out = r.o.RecordWrap(ao.Out)
	}
	return ld, ao, meta, nil
}

// attackMetrics registers the attack's metrics when the run serves /metrics;
// a run that serves them nowhere (--metrics-addr "") gets none (nil): nobody
// could read them, and observing them cost about 1.5 µs of CPU a request
// (issue 25).
func (r *partRun) attackMetrics() (*attack.Metrics, error) {
	if r.metricsAddr == "" {
		return nil, nil
	}
	m, err := attack.NewMetrics(r.reg, 20)
	if err != nil {
		return nil, fmt.Errorf("attack metrics: %w", err)
	}
	return m, nil
}

// startAtInstant waits for the run's start instant, when a sharded run sets
// one, so that every shard begins on the same instant; then it stamps the
// start in meta (and the start of the window of a standalone sink's copy) and
// writes run.json before the attack begins.
func (r *partRun) startAtInstant(stopCtx context.Context, meta *rundir.Meta, metaPath string) error {
	if r.o.Barrier != "" {
		if err := r.barrier(stopCtx, meta); err != nil {
			return err
		}
	}
	if !r.o.StartAt.IsZero() {
		// Every shard begins on the same instant.
		if late := waitStart(stopCtx, r.o.StartAt, r.o.Now); late > time.Second {
			meta.LateStart = late.Seconds()
			fmt.Fprintf(r.o.Stderr, "msgload: %s: starting %s after the start instant %s\n", r.s.Name, late.Round(time.Millisecond), r.o.StartAt.UTC().Format(time.RFC3339))
		}
	}
	meta.Start = r.o.Now().UTC()
	if r.remote != nil {
		r.remote.from = time.Now() // the window of the untagged events the run copies
		r.remote.baseErrors, r.remote.baseErr = r.remote.writeErrors(stopCtx)
	}
	return writeJSON(metaPath, *meta)
}

// attack runs the attack and records its span and whether it was interrupted
// in meta. An attack that failed after sending is reported on stderr and the
// run goes on, since what was sent is still waited for and reported; one that
// failed before sending anything is returned, for the caller to fail the part
// with once what was started is closed.
func (r *partRun) attack(stopCtx, abortCtx context.Context, ao attack.Options, meta *rundir.Meta, metaPath string, attackOver func()) error {
	r.phase.Store("attack")
	// On the first interrupt what was sent goes to disk at once (a pod gets
	// SIGKILL some seconds after SIGTERM), and again when the attack is over.
	stopFlush := context.AfterFunc(stopCtx, func() { _ = r.rec.Flush() })
	res, aerr := attack.RunWithAbort(stopCtx, abortCtx, ao)
	attackOver() // the target's memory: its last sample at the attack's end
	stopFlush()
	_ = r.rec.Flush()
	r.phase.Store("grace")
	meta.AttackEnd = r.o.Now().UTC()
	if !res.End.IsZero() {
		meta.AttackEnd = res.End.UTC()
	}
	if !res.Start.IsZero() {
		meta.Start = res.Start.UTC()
	}
	meta.Interrupted = cmp.Or(r.userStop, stopCtx).Err() != nil
	meta.Aborted, meta.DiskLow = r.stops.stopped()
	if aerr != nil && !errors.Is(aerr, attack.ErrMaxMessages) && res.Sent > 0 {
		// Keep going: what was sent is still waited for and reported, and
		// run.json says why the sends stopped (the report's reason).
		fmt.Fprintf(r.o.Stderr, "msgload: %s: attack: %v\n", r.s.Name, aerr)
		meta.Failed = aerr.Error()
	}
	_ = writeJSON(metaPath, *meta)
	if aerr != nil && !errors.Is(aerr, attack.ErrMaxMessages) && res.Sent == 0 {
		return fmt.Errorf("attack: %w", aerr)
	}
	return nil
}

// waitForCallbacks is the grace wait: it gives the callbacks of what was
// accepted the scenario's grace period to arrive, ending early once
// everything arrived or on a second interrupt. Delivery by polling or none
// has nothing to wait for.
func (r *partRun) waitForCallbacks() {
	s := r.s
	grace := s.Delivery.Grace.D
	if s.Delivery.Via == "poll" || s.Delivery.Via == "none" {
		grace = 0
	}
	r.graceEnd.Store(r.o.Now().Add(grace).UnixNano())
	if !isClosed(r.abortCh) {
		why := waitGrace(grace, gracePoll, r.arrivedAll(), r.abortCh)
		if why == graceElapsed && grace > 0 {
			fmt.Fprintf(r.o.Stderr, "msgload: %s: grace period of %s over; messages still without a final status count as lost\n", s.Name, grace)
		}
	}
}

// finishRemoteCopy copies a standalone sink's last events once the wait is
// over and closes the copy, and reads the calls the sink could not write
// during the run. What could not be read is returned (run.json sink_unread):
// the report still gets built, and its verdict says the figures it touches
// are not known (never a pass on them); stderr says how to build it again
// from a copy of the sink's log.
func (r *partRun) finishRemoteCopy(sinkURL string) (writeErrors int64, unread *rundir.SinkUnread) {
	if r.remote == nil {
		return 0, nil
	}
	var un rundir.SinkUnread
	r.remote.to = time.Now() // the run's end (run.json's, set just before): the window's end
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	// a second interrupt stops the copy too: it waited out the 2 minutes
	stopOnAbort := make(chan struct{})
	go func() {
		select {
		case <-r.abortCh:
			cancel()
		case <-stopOnAbort:
		}
	}()
	ferr := r.remote.finish(ctx)
	close(stopOnAbort)
	cancel()
	if ferr != nil {
		un.Events = fmt.Sprintf("%d events copied, then: %v", r.remote.events.Load(), ferr)
		fmt.Fprintf(r.o.Stderr, "msgload: %s: %v; the report cannot tell what did not arrive from what was not copied (copy events.jsonl from the sink and run msgload report %s)\n", r.s.Name, ferr, r.dir)
	} else {
		fmt.Fprintf(r.o.Stderr, "msgload: %s: %d events copied from the sink %s\n", r.s.Name, r.remote.events.Load(), sinkURL)
	}
	n, werr := r.remote.sinkWriteErrors(context.Background())
	if werr != nil {
		un.WriteErrors = werr.Error()
		fmt.Fprintf(r.o.Stderr, "msgload: %s: the sink's count of calls it could not write (GET %s/v1/stats) is unknown, %v: a full disk of the sink's cannot be told apart from calls the service never made\n", r.s.Name, sinkURL, werr)
	}
	if un == (rundir.SinkUnread{}) {
		return n, nil
	}
	return n, &un
}

// writeReplayReport writes replay.json of a replay run: what was recorded
// set against what was replayed (codes, lateness, client mapping). A failure
// is told on stderr and does not fail the part, which still gets its other
// reports.
func (r *partRun) writeReplayReport(ld load, interrupted bool) {
	if ld.replayed == nil {
		return
	}
	rep, rerr := ld.replayed(r.id, filepath.Join(r.dir, rundir.AttemptsFile))
	if rerr == nil {
		rep.Interrupted = interrupted
		rerr = replay.WriteReport(filepath.Join(r.dir, replay.ReplayFile), rep)
	}
	if rerr != nil {
		fmt.Fprintf(r.o.Stderr, "msgload: %s: %s: %v\n", r.s.Name, replay.ReplayFile, rerr)
	}
}

// buildReports builds the part's reports from its directory and keeps the
// summary for the run's own.
func (r *partRun) buildReports() error {
	if !r.multi {
		// Reading the raw files leaves garbage: at the default GOGC the heap
		// may reach twice what is live, and that was the whole run's peak of
		// memory after a long run (issue 16). The report is collected within
		// the memory the attack left held instead (lowerGC: the attack's
		// heap, mostly garbage once it ended, is the report's room; its
		// growth followed, followGC). Not when other parts may still be
		// attacking: the setting is the process's.
		defer lowerGC()()
	}
	sum, err := buildDir(r.dir)
	if err != nil {
		return fmt.Errorf("build reports: %w", err)
	}
	r.summary = sum
	return nil
}

// buildDir builds a part's reports (render.Build); a test looks at the
// memory limit it runs under.
var buildDir = render.Build

// followInterval is how often followGC looks at the process's memory while
// the lowered limit is set (followEvery).
const followInterval = 50 * time.Millisecond

// followEvery calls followGC every d until the returned function is called.
func followEvery(d time.Duration) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				followGC()
			}
		}
	}()
	return func() { close(done); <-exited }
}

// lowGC counts the reports being built under the lowered memory limit in
// this process: runs of one process may overlap (a program or a test running
// several), and the limit is the process's, so the first sets it and the
// last restores what it was before. room and limit are what followGC follows
// the process's growth with (room 0: the limit is the user's, not followed).
var lowGC struct {
	sync.Mutex
	n       int
	saved   int64
	unwatch func() // stops the follower lowerGC started (followEvery)
	room    int64  // the limit less the retained memory when the limit was set
	limit   int64  // the limit set now
}

// lowerGC sets the process's soft memory limit to the memory the runtime
// holds now (the attack's heap, not yet given back), but never under what no
// collection can give back and reportMemHeadroom, until the returned
// function is called: an analysis is collected within what the run already
// held, so it does not make the run's peak. A live analysis
// (liveLoop.analyze) runs beside the attack, whose heap already holds the
// collector's room for its own garbage (what GOGC lets it reach between two
// collections), and the run's own report (buildReports) comes after it, when
// that heap is mostly garbage; each works in that room, its collections
// coming more often, instead of adding room to the peak: with 8 MB
// above what was held, a checkpoint at minute 9 of a 10-minute soak raised
// the run's peak by ~8 MB over a run without one (issue 23: 58,224 KiB
// against the attack's 48–50 MB; the attack alone stayed flat), so a run
// long enough to checkpoint during its attack looked like one that grew.
// What an analysis still adds is its bounded state as followGC lets it
// through (a checkpoint at minute 8 of a 1,000/s run with callbacks: RSS
// 1–2 MB more while it ran, with the floor at 4 MB; 5–6 MB at 8 MB). The floor of
// reportMemHeadroom above what is retained keeps the collector's room when
// the process holds little free heap (a small run). While it is set,
// followGC raises it as the rest of the process grows (lowerGC's own
// follower calls it every followInterval while the limit is set, whoever
// set it: the live analysis, paced, and the run's report alike), and with it
// the analysis's own bounded state. GOGC stays the
// process's: lowering it (25, before) also lowered the runtime's minimum
// heap from 4 MB to 1 MB, and a small report was collected again and again
// (two collections for a 1-message run's report, nine for a 25,000-message
// one's, against one and three). A limit already set (GOMEMLIMIT) is the
// user's and left alone.
func lowerGC() (restore func()) {
	lowGC.Lock()
	defer lowGC.Unlock()
	if lowGC.n == 0 {
		lowGC.saved = debug.SetMemoryLimit(-1)
		if lowGC.saved == math.MaxInt64 {
			held, retained := memoryNow()
			lowGC.limit = max(held, retained+reportMemHeadroom)
			lowGC.room = lowGC.limit - retained
			debug.SetMemoryLimit(lowGC.limit)
			lowGC.unwatch = followEvery(followInterval)
		}
	}
	lowGC.n++
	return func() {
		lowGC.Lock()
		var unwatch func()
		if lowGC.n--; lowGC.n == 0 {
			lowGC.room = 0
			debug.SetMemoryLimit(lowGC.saved)
			unwatch, lowGC.unwatch = lowGC.unwatch, nil
		}
		lowGC.Unlock()
		if unwatch != nil {
			unwatch() // outside the lock: followGC takes it
		}
	}
}

// followGC raises the soft memory limit lowerGC set when the collector's
// room — the limit less the memory no collection can give back (retained) —
// fell under half of what it was when the limit was set: it gives the room
// back whole (limit = retained + the room at the start). So at every look
// the room is at least half the start's, itself at least reportMemHeadroom.
// A live analysis runs for minutes while the attack sends: with the limit
// fixed at its start, a stall that leaves hundreds of connections in flight
// (+25 MB) would take the heap up to the limit, and the collector would run
// nearly continuously (up to half the CPU, its limiter's cap) just when the
// sends are behind.
//
// Why this rule bounds what the analysis adds and nothing else: the retained
// memory is the heap the last collection found live and the runtime's memory
// beside the heap, as the runtime's own limit-based goal counts it (total
// less released, free and heap objects). The analysis's garbage — every line
// decoded again and dropped, gigabytes in a long run — is not in it, so it
// does not raise the limit: it is still collected within the room. Except
// what it allocated while a collection was marking, which that collection
// counts live: the pacer starts a collection with at most about 30 % of the
// room left for that, under the half that raises the limit (the half also
// lets the runtime's kilobytes of bookkeeping pass). What grows in it and
// stays (the attack's connections and their stacks, the analysis's own
// bounded state) raises the limit by that growth once: each collection
// still frees at least half the room, so the collector works per byte
// allocated at most about twice what it did when the analysis began, never
// continuously. Raising it to (1+GOGC/100) times the live heap instead would
// put it above GOGC's own goal, where it never binds. Never lowered here;
// the restore of lowerGC puts back exactly what was before.
func followGC() {
	lowGC.Lock()
	defer lowGC.Unlock()
	if lowGC.n == 0 || lowGC.room <= 0 {
		return
	}
	_, retained := memoryNow()
	if lowGC.limit-retained < lowGC.room/2 {
		lowGC.limit = retained + lowGC.room
		debug.SetMemoryLimit(lowGC.limit)
	}
}

// memoryNow is the memory the Go runtime holds from the system now, counted
// as the soft memory limit counts it (all its classes but the heap it has
// released), and of it what no collection can give back: the heap the last
// collection found live and the runtime's memory beside the heap. One
// runtime/metrics read: cheap, no stop of the world (ReadMemStats stops it).
func memoryNow() (held, retained int64) {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(s)
	var v [5]int64
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0, 0
		}
		v[i] = int64(min(s[i].Value.Uint64(), math.MaxInt64))
	}
	held = v[0] - v[1]
	return held, max(held-v[2]-v[3]+v[4], 0)
}

// arrivedAll tells the grace wait when nothing more is to come. Against the
// embedded simulator that is known exactly: nothing is owed (every final
// status drawn, every final callback made for the last time, held, reordered
// and retried ones included). Against a real target it is when every accepted
// message (by sequence, whatever txIds its retries got) has a final status in
// the sink — embedded, read from its log, or standalone, through its read API
// pulled once a second — by this run's tag or joined by id to its sends.
func (r *partRun) arrivedAll() func() bool {
	return func() bool {
		if r.o.SinkFault != nil {
			return false // the whole wait: retries of what the sink refused come in it
		}
		if r.remote != nil && r.remoteErr == nil && time.Since(r.remotePull) >= remotePull {
			r.remotePull = time.Now()
			// A read that fails is tried again at the next poll (a fault on the
			// way to the sink passes; the cursor only moves past whole pages);
			// a refusal of the credentials is final.
			ctx, cancel := context.WithTimeout(context.Background(), remoteRead)
			err := r.remote.pull(ctx)
			cancel()
			switch {
			case err == nil:
				r.remoteOK = true
			case errors.Is(err, errSinkRefused):
				r.remoteErr = err
				fmt.Fprintf(r.o.Stderr, "msgload: %s: %v; waiting the whole grace period\n", r.s.Name, err)
			default:
				if r.remoteOK || r.remoteFails == 0 {
					fmt.Fprintf(r.o.Stderr, "msgload: %s: %v; trying again\n", r.s.Name, err)
				}
				r.remoteOK = false
				r.remoteFails++
			}
		}
		if r.sim != nil {
			return r.sim.Owed() == 0
		}
		if r.tally == nil {
			return false
		}
		if r.sink != nil {
			if r.localErr != nil {
				return false
			}
			if err := r.readLocal(); err != nil {
				r.localErr = err
				fmt.Fprintf(r.o.Stderr, "msgload: %s: read the sink's log: %v; waiting the whole grace period\n", r.s.Name, err)
				return false
			}
			return r.tally.complete()
		}
		if r.remote != nil && r.remoteErr == nil && r.remoteOK {
			return r.tally.complete()
		}
		return false
	}
}

// readLocal hands the events the embedded sink acknowledged since the last
// read to the tally: this run's tagged events and the untagged ones.
func (r *partRun) readLocal() error {
	for {
		page, err := r.sink.Events(sink.Filter{Run: r.id, Untagged: true}, r.localAfter, fetchPage)
		if err != nil {
			return err
		}
		for i := range page.Events {
			r.tally.event(&page.Events[i])
		}
		r.localAfter = page.Next
		if !page.More {
			return nil
		}
	}
}
