package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/internal/httpserve"
	"github.com/msgload/msgload/internal/shutdown"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// Embedded is the simulator and the sink started on loopback for a replay that
// names no target, as a scenario with `target: embedded` has them.
type Embedded struct {
	SimURL  string
	SinkURL string
	// Messaging and Notify are the simulator's built-in clients (never secrets
	// of a real service).
	Messaging []Cred
	Notify    []Cred

	sim      *sim.Server
	sink     *sink.Sink
	simTr    *shutdown.Tracker // the simulator's server
	sinkTr   *shutdown.Tracker // the sink's server
	runDir   string
	stopOnce bool
}

// StartEmbedded starts the simulator (sim.DefaultConfig, seed 1) and a sink
// writing dir/events.jsonl, both on 127.0.0.1:0, registering their metrics on reg.
func StartEmbedded(dir, runID string, reg prometheus.Registerer) (*Embedded, error) {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	e := &Embedded{runDir: dir}
	sk, err := sink.New(sink.Options{LogPath: filepath.Join(dir, rundir.EventsFile), RunID: runID}, reg)
	if err != nil {
		return nil, fmt.Errorf("start sink: %w", err)
	}
	e.sink = sk
	sinkLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sk.Close()
		return nil, fmt.Errorf("listen for sink: %w", err)
	}
	e.SinkURL = "http://" + sinkLn.Addr().String()
	sinkSrv := httpserve.New(sk.Handler(), httpserve.Default)
	e.sinkTr = shutdown.Track(sinkSrv)
	go sinkSrv.Serve(sinkLn)

	cfg := sim.DefaultConfig()
	cfg.Seed = 1
	for i := range cfg.Messaging.Accounts {
		cfg.Messaging.Accounts[i].PartnerURL = e.SinkURL
	}
	s, err := sim.New(cfg, reg)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	e.sim = s
	simLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("listen for simulator: %w", err)
	}
	e.SimURL = "http://" + simLn.Addr().String()
	simSrv := httpserve.New(s.Handler(), httpserve.Default)
	e.simTr = shutdown.Track(simSrv)
	go simSrv.Serve(simLn)
	for _, a := range cfg.Messaging.Accounts {
		if !a.NoAPIRight {
			e.Messaging = append(e.Messaging, Cred{a.Login, a.Password})
		}
	}
	for _, c := range cfg.Notify.Clients {
		if len(c.Scopes) > 1 { // clients with the webhook scope, like the harness uses
			e.Notify = append(e.Notify, Cred{c.ID, c.Secret})
		}
	}
	return e, nil
}

// Wait waits until the simulator has no delivery pending, at most grace.
func (e *Embedded) Wait(ctx context.Context, grace time.Duration) {
	deadline := time.Now().Add(grace)
	for e.sim != nil && e.sim.Pending() > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Truth is the simulator's ground truth.
func (e *Embedded) Truth() rundir.Truth { return e.sim.Truth() }

// Close stops the simulator, then the sink, and closes the event log.
func (e *Embedded) Close() error {
	if e.stopOnce {
		return nil
	}
	e.stopOnce = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var errs []error
	if e.simTr != nil {
		errs = append(errs, e.simTr.Shutdown(ctx))
	}
	if e.sim != nil {
		errs = append(errs, e.sim.Shutdown(ctx))
	}
	if e.sinkTr != nil {
		errs = append(errs, e.sinkTr.Shutdown(ctx))
	}
	if e.sink != nil {
		errs = append(errs, e.sink.Close())
	}
	return errors.Join(errs...)
}
