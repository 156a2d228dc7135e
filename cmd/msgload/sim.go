package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/internal/httpserve"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

// envSimSigningSecret is the callback signing secret of `msgload sim`: a
// secret, so not a flag (every flag reads MSGLOAD_SIM_<FLAG>, env.go).
const envSimSigningSecret = "MSGLOAD_SIM_SIGNING_SECRET"

// simCommand runs the simulator of both APIs as a standalone server.
func (g *globalState) simCommand() *cli.Command {
	return &cli.Command{
		Name:  "sim",
		Usage: "serve the simulator of the messaging and notification APIs (the embedded target) on one listener",
		Description: "Routes: POST /messaging/v1/send, GET /messaging/v1/check-status/{txId}, POST /oauth/token,\n" +
			"POST /api/v1/notifications, POST|GET /api/v1/webhooks, GET /metrics, /healthz, /sim/v1/truth, /sim/v1/pending.\n" +
			"Without --config the built-in accounts serve (messaging demo/demo and blocked/blocked; notification\n" +
			"clients demo-1 … demo-10, notify-only and webhook-only, secret demo). The callback signing secret (whsec_…) comes from\n" +
			envSimSigningSecret + " or --signing-secret-file, never a flag value.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8081", Usage: "listen address"},
			&cli.StringFlag{Name: "config", Usage: "YAML file replacing the built-in configuration"},
			&cli.StringFlag{Name: "rate-limit", Usage: "notification API limit per client_id, N/DURATION, e.g. 100/1m; 0/1m disables"},
			&cli.StringFlag{Name: "rate-limit-algorithm", Usage: "sliding, fixed or token-bucket"},
			&cli.BoolFlag{Name: "rate-limit-headers", Usage: "send the IETF draft RateLimit and RateLimit-Policy fields"},
			&cli.BoolFlag{Name: "no-retry-after", Usage: "answer 429 without Retry-After"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed of every random draw; 0 draws one"},
			&cli.StringFlag{Name: "signing-secret-file", Usage: "file holding a Standard Webhooks secret (whsec_…) to sign callbacks and webhooks"},
			&cli.StringFlag{Name: "truth", Usage: "stream the ground truth to this file (truth.jsonl's records) as it becomes final, instead of keeping it in memory: a soak against the simulator stays flat"},
		},
		Action: func(c *cli.Context) error {
			cfg, addr, err := g.simConfig(c)
			if err != nil {
				return badInput(err)
			}
			return g.runSim(c.Context, cfg, addr, c.String("truth"))
		},
	}
}

// simConfig builds the configuration: defaults, then the file, then the
// environment and flags (applyEnv has set every flag not given from its
// variable).
func (g *globalState) simConfig(c *cli.Context) (sim.Config, string, error) {
	str := c.String
	var problems []error
	cfg := sim.DefaultConfig()
	if path := str("config"); path != "" {
		var err error
		if cfg, err = sim.LoadConfig(path); err != nil {
			return cfg, "", err
		}
	}
	addr := str("addr")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		problems = append(problems, fmt.Errorf("--addr %q: %w", addr, err))
	}
	if v := str("rate-limit"); v != "" {
		n, w, err := sim.ParseRate(v)
		if err != nil {
			problems = append(problems, fmt.Errorf("--rate-limit: %w", err))
		}
		cfg.RateLimit.Requests, cfg.RateLimit.Window = n, w
	}
	if v := str("rate-limit-algorithm"); v != "" {
		cfg.RateLimit.Algorithm = v
	}
	if c.IsSet("rate-limit-headers") {
		cfg.RateLimit.Headers = c.Bool("rate-limit-headers")
	}
	if c.Bool("no-retry-after") {
		cfg.RateLimit.RetryAfter = false
	}
	if c.IsSet("seed") {
		cfg.Seed = c.Uint64("seed")
	}
	if p := c.String("signing-secret-file"); p != "" {
		b, err := rundir.ReadSecretFile(p)
		if err != nil {
			problems = append(problems, fmt.Errorf("--signing-secret-file: %w", err))
		}
		cfg.Callbacks.SigningSecret = strings.TrimRight(string(b), "\r\n")
	} else if v := g.getenv(envSimSigningSecret); v != "" {
		cfg.Callbacks.SigningSecret = v
	}
	problems = append(problems, cfg.Validate()...)
	return cfg, addr, errors.Join(problems...)
}

// runSim serves until an interrupt (Ctrl-C, SIGTERM). With truth set the
// simulator streams its ground truth to that file as it becomes final
// (Server.StreamTruth): kept in memory it grows ~640 bytes a message up to
// truthCap, which a soak against the simulator reads as the target's
// memory growing (drift.memory_slope: 20 MB per 10 minutes at 50/s).
func (g *globalState) runSim(parent context.Context, cfg sim.Config, addr, truth string) error {
	ctx, stop := g.untilInterrupt(parent)
	defer stop()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg.ListenAddr = addr
	s, err := sim.New(cfg, reg)
	if err != nil {
		return badInput(err)
	}
	defer s.Close()
	if truth != "" {
		if err := s.StreamTruth(truth); err != nil {
			return badInput(fmt.Errorf("--truth: %w", err))
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.Handle("/", s.Handler())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return badInput(fmt.Errorf("listen on %s: %w", addr, err))
	}
	sv := httpserve.Start(ln, httpserve.New(mux, httpserve.Default)) // read, write and idle timeouts a slow client cannot defeat
	fmt.Fprintf(g.stderr, "msgload sim: listening on http://%s (rate limit %d/%s %s per client_id)\n",
		ln.Addr(), cfg.RateLimit.Requests, cfg.RateLimit.Window, cfg.RateLimit.Algorithm)
	failed := false
	select {
	case <-ctx.Done():
	case <-sv.Failed():
		failed = true
	}
	// one bound for the server and the simulator's callbacks in flight
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	stopErr := sv.Stop(sctx)
	if failed {
		return stopErr // serve: …
	}
	// a shutdown past its bound (requests still in flight, now cut off) is
	// not the simulator's failure: stopErr goes no further
	if err := s.Shutdown(sctx); err != nil {
		return fmt.Errorf("stop simulator: %w", err)
	}
	fmt.Fprintln(g.stderr, "msgload sim: stopped")
	return nil
}
