package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// reportGCPercent is the GOGC of a one-part run while its report is built.
const reportGCPercent = 25

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
}

// run runs the part; errors land in r.err, and whatever was collected stays
// on disk.
func (r *partRun) run(stopCtx, abortCtx context.Context) {
	if err := r.runErr(stopCtx, abortCtx); err != nil {
		r.err = err
		fmt.Fprintf(r.o.Stderr, "msgload: %s: %v\n", r.s.Name, err)
	}
}

func (r *partRun) runErr(stopCtx, abortCtx context.Context) (err error) {
	s := r.s
	if r.multi {
		if err := os.Mkdir(r.dir, 0o755); err != nil {
			return fmt.Errorf("create part directory: %w", err)
		}
		red, err := s.Redacted()
		if err != nil {
			return fmt.Errorf("redact scenario: %w", err)
		}
		if err := writeFileAtomic(filepath.Join(r.dir, rundir.ScenarioFile), red); err != nil {
			return err
		}
	}
	var closers []func() error
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if cerr := closers[i](); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()

	if !s.Target.Embedded && s.Delivery.Via != "poll" && s.Delivery.Via != "none" {
		r.tally = newTally(r.id)
	}

	// The sink first: the simulator and the attack need its address.
	sinkURL := ""
	switch s.Sink {
	case "", "embedded":
		k, err := sink.New(sink.Options{LogPath: filepath.Join(r.dir, rundir.EventsFile), RunID: r.id}, r.embeddedReg())
		if err != nil {
			return fmt.Errorf("start the sink: %w", err)
		}
		srv, err := listen("127.0.0.1:0", k.Handler())
		if err != nil {
			_ = k.Close()
			return fmt.Errorf("start the sink: %w", err)
		}
		r.sink = k
		sinkURL = srv.URL()
		closers = append(closers, func() error {
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
				return err
			}
			l.token = r.o.SinkReadToken
			l.shard = r.shard
			l.tally = r.tally
			r.remote = l
			defer l.close() // on an early return; the normal path closes it after the last copy
		}
	}

	baseURL, tokenURL := s.Target.BaseURL, s.Target.TokenURL
	if s.Target.Embedded {
		cfg, err := simConfig(s, sinkURL)
		if err != nil {
			return err
		}
		sv, err := sim.New(cfg, r.embeddedReg())
		if err != nil {
			return fmt.Errorf("start the simulator: %w", err)
		}
		srv, err := listen("127.0.0.1:0", sv.Handler())
		if err != nil {
			_ = sv.Close()
			return fmt.Errorf("start the simulator: %w", err)
		}
		r.sim = sv
		baseURL, tokenURL = srv.URL(), srv.URL()+"/oauth/token"
		// Closed before the sink (closers run last first): callbacks in flight
		// land before the sink's log is closed.
		closers = append(closers, func() error {
			_ = srv.shutdown(5 * time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if isClosed(r.abortCh) {
				cancel() // a second interrupt: do not wait for callbacks in flight
			}
			_ = sv.Shutdown(ctx)
			return writeJSON(filepath.Join(r.dir, rundir.TruthFile), sv.Truth())
		})
	}

	ld, err := scenarioLoad(s, sinkURL)
	if err != nil {
		return err
	}
	if r.tally != nil {
		r.tally.chain = rundir.ParseChain(ld.chain) // before the attack: no event can come earlier
	}
	rec, err := attack.NewRecorder(r.dir)
	if err != nil {
		return fmt.Errorf("attempt log: %w", err)
	}
	closers = append(closers, func() error {
		if err := rec.Close(); err != nil {
			return fmt.Errorf("close the attempt log: %w", err)
		}
		return nil
	})
	m, err := attack.NewMetrics(r.reg, 20)
	if err != nil {
		return fmt.Errorf("attack metrics: %w", err)
	}

	ao, meta, err := r.attackOptions(ld, baseURL, tokenURL, sinkURL)
	if err != nil {
		return err
	}
	ao.Out, ao.Metrics, ao.Progress = rec, m, &r.prog
	if r.tally != nil {
		ao.Out = tallyRecorder{Recorder: rec, t: r.tally}
	}
	if !r.o.StartAt.IsZero() {
		// Every shard begins on the same instant.
		if late := waitStart(stopCtx, r.o.StartAt, r.o.Now); late > time.Second {
			fmt.Fprintf(r.o.Stderr, "msgload: %s: starting %s after the start instant %s\n", s.Name, late.Round(time.Millisecond), r.o.StartAt.UTC().Format(time.RFC3339))
		}
	}
	meta.Start = r.o.Now().UTC()
	if r.remote != nil {
		r.remote.from = time.Now() // the window of the untagged events the run copies
	}
	metaPath := filepath.Join(r.dir, rundir.MetaFile)
	if err := writeJSON(metaPath, meta); err != nil {
		return err
	}

	r.phase.Store("attack")
	res, aerr := attack.RunWithAbort(stopCtx, abortCtx, ao)
	r.phase.Store("grace")
	meta.AttackEnd = r.o.Now().UTC()
	if !res.End.IsZero() {
		meta.AttackEnd = res.End.UTC()
	}
	if !res.Start.IsZero() {
		meta.Start = res.Start.UTC()
	}
	meta.Interrupted = stopCtx.Err() != nil
	if aerr != nil && !errors.Is(aerr, attack.ErrMaxMessages) && res.Sent > 0 {
		// Keep going: what was sent is still waited for and reported.
		fmt.Fprintf(r.o.Stderr, "msgload: %s: attack: %v\n", s.Name, aerr)
	}
	_ = writeJSON(metaPath, meta)

	// Grace: wait for the callbacks of what was accepted.
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

	// Close what is embedded (simulator, then sink), then the attempt log.
	r.phase.Store("report")
	for i := len(closers) - 1; i >= 0; i-- {
		if cerr := closers[i](); cerr != nil && err == nil {
			err = cerr
		}
	}
	closers = nil
	if r.remote != nil {
		r.remote.to = time.Now() // the end of the wait (what is embedded is closed): the window's end
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		ferr := r.remote.finish(ctx)
		cancel()
		if ferr != nil {
			fmt.Fprintf(r.o.Stderr, "msgload: %s: %v; the report counts what did not arrive as lost (copy events.jsonl from the sink and run msgload report %s)\n", s.Name, ferr, r.dir)
		} else {
			fmt.Fprintf(r.o.Stderr, "msgload: %s: %d events copied from the sink %s\n", s.Name, r.remote.events.Load(), sinkURL)
		}
	}
	meta.End = r.o.Now().UTC()
	if werr := writeJSON(metaPath, meta); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if aerr != nil && !errors.Is(aerr, attack.ErrMaxMessages) && res.Sent == 0 {
		return fmt.Errorf("attack: %w", aerr)
	}
	if ld.replayed != nil && r.o.Pacer == nil {
		// Recorded against replayed: codes, lateness, client mapping.
		rep, rerr := ld.replayed(r.id, filepath.Join(r.dir, rundir.AttemptsFile))
		if rerr == nil {
			rep.Interrupted = meta.Interrupted
			rerr = replay.WriteReport(filepath.Join(r.dir, replay.ReplayFile), rep)
		}
		if rerr != nil {
			fmt.Fprintf(r.o.Stderr, "msgload: %s: %s: %v\n", s.Name, replay.ReplayFile, rerr)
		}
	}
	if isClosed(r.abortCh) {
		return nil // a second interrupt: no reports; `msgload report DIR` builds them later
	}
	if !r.multi {
		// The report holds a few words a message until it is written, and
		// reading the raw files leaves garbage: at the default GOGC the heap
		// may reach twice what is live, and that was the whole run's peak of
		// memory after a long run (issue 16). Collecting at 25 % growth costs
		// a few more short collections here, after the attack. Not when other
		// parts may still be attacking: the setting is the process's.
		defer debug.SetGCPercent(debug.SetGCPercent(reportGCPercent))
	}
	sum, err := reports.Build(r.dir)
	if err != nil {
		return fmt.Errorf("build reports: %w", err)
	}
	r.summary = sum
	return nil
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
