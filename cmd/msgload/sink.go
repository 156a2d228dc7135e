package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sink"
)

// Secrets of `msgload sink`: from the environment or from files only, never
// from flags (every flag reads MSGLOAD_SINK_<FLAG>, env.go).
const (
	envSinkBasicUser     = "MSGLOAD_SINK_BASIC_USER"
	envSinkBasicPassword = "MSGLOAD_SINK_BASIC_PASSWORD"
	envSinkBearerToken   = "MSGLOAD_SINK_BEARER_TOKEN"
	envSinkHMACSecret    = "MSGLOAD_SINK_HMAC_SECRET"
	envSinkWebhookSecret = "MSGLOAD_SINK_WEBHOOK_SECRET"
	// envSinkReadToken is the bearer token of the sink's read API (GET
	// /v1/events, /v1/stats): `msgload sink` requires it from callers of that
	// API, `msgload run` and `msgload replay` send it to a standalone sink.
	envSinkReadToken = "MSGLOAD_SINK_READ_TOKEN"
)

// sinkCommand runs the sink as a standalone server.
func (g *globalState) sinkCommand() *cli.Command {
	return &cli.Command{
		Name:  "sink",
		Usage: "receive status callbacks, incoming messages and webhooks; log them durably; export delivery metrics",
		Description: "Routes: POST /callback, /incoming, /webhook; GET /metrics, /healthz, /v1/events?run=&after=&limit=, /v1/stats.\n" +
			"Authentication (optional) from the environment or files only: " + envSinkBasicUser + " with " + envSinkBasicPassword +
			" (or --basic-password-file), " + envSinkBearerToken + " (or --bearer-token-file), " + envSinkHMACSecret +
			" (or --hmac-secret-file), " + envSinkWebhookSecret + " (or --webhook-secret-file).\n" +
			"Read API (/v1/events, /v1/stats): Authorization: Bearer " + envSinkReadToken + " (or --read-token-file); required beyond loopback, " +
			"where without one the sink generates it into DIR/" + sink.ReadTokenFile + ".",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: sink.DefaultAddr, Usage: "listen address (loopback by default)"},
			&cli.StringFlag{Name: "data", Usage: "data directory `DIR`; events go to DIR/events.jsonl (required)"},
			&cli.StringFlag{Name: "fsync", Value: string(sink.FsyncBatch), Usage: "batch (group commit), always or none"},
			&cli.Int64Flag{Name: "max-body", Value: sink.DefaultMaxBody, Usage: "largest body accepted, bytes; larger ones are answered 413"},
			&cli.StringFlag{Name: "run-id", Usage: "count tags of other runs as unmatched (default: any msgload tag matches)"},
			&cli.IntFlag{Name: "max-tracked", Value: sink.DefaultMaxTracked, Usage: "messages the correlation table remembers before forgetting the oldest"},
			&cli.Float64Flag{Name: "fault-share", Usage: "share (0..1) of valid calls answered with --fault-code and/or after --fault-delay, to make the service retry on purpose"},
			&cli.IntFlag{Name: "fault-code", Usage: "status given to those calls instead of 200 (e.g. 503); the event is still logged, with \"answered\""},
			&cli.DurationFlag{Name: "fault-delay", Usage: "wait before answering those calls (e.g. 5s)"},
			&cli.DurationFlag{Name: "fault-retry-after", Usage: "with --fault-code: send Retry-After (whole seconds) with it, e.g. a 429 that says when to come back"},
			&cli.BoolFlag{Name: "fault-per-message", Usage: "draw --fault-share once per message, and answer every arrival of a chosen one with the fault (its whole retry schedule shows)"},
			&cli.StringFlag{Name: "signature-header", Value: sink.DefaultSignatureHeader, Usage: "header carrying the HMAC-SHA256 body signature"},
			&cli.StringFlag{Name: "basic-password-file", Usage: "file holding the Basic password (user from " + envSinkBasicUser + ")"},
			&cli.StringFlag{Name: "bearer-token-file", Usage: "file holding the bearer token callers must present"},
			&cli.StringFlag{Name: "hmac-secret-file", Usage: "file holding the HMAC-SHA256 shared secret"},
			&cli.StringFlag{Name: "webhook-secret-file", Usage: "file holding a Standard Webhooks secret (whsec_…)"},
			&cli.StringFlag{Name: "read-token-file", Usage: "file holding the bearer token of the read API /v1/events, /v1/stats (or the token itself in " + envSinkReadToken + "; beyond loopback generated into DIR/" + sink.ReadTokenFile + " when not given)"},
		},
		Action: func(c *cli.Context) error {
			cfg, err := g.sinkConfig(c)
			if err != nil {
				return badInput(err)
			}
			return g.runSink(c.Context, cfg)
		},
	}
}

// sinkConfig gathers the flags (applyEnv has set every flag not given from
// its variable) and the secrets.
func (g *globalState) sinkConfig(c *cli.Context) (sink.ServerConfig, error) {
	var cfg sink.ServerConfig
	var problems []error
	cfg.Addr = c.String("addr")
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		problems = append(problems, fmt.Errorf("--addr %q: %w", cfg.Addr, err))
	}
	cfg.Dir = c.String("data")
	if cfg.Dir == "" {
		problems = append(problems, errors.New("--data: a data directory is required"))
	}
	cfg.LogPath = filepath.Join(cfg.Dir, rundir.EventsFile)
	mode, err := sink.ParseFsyncMode(c.String("fsync"))
	if err != nil {
		problems = append(problems, fmt.Errorf("--fsync: %w", err))
	}
	cfg.Fsync = mode
	cfg.MaxBody = c.Int64("max-body")
	if cfg.MaxBody <= 0 {
		problems = append(problems, errors.New("--max-body: must be positive"))
	}
	cfg.RunID = c.String("run-id")
	cfg.MaxTracked = c.Int("max-tracked")
	if cfg.MaxTracked <= 0 {
		problems = append(problems, errors.New("--max-tracked: must be positive"))
	}
	cfg.Fault = sink.Fault{Share: c.Float64("fault-share"), Code: c.Int("fault-code"), Delay: c.Duration("fault-delay"),
		RetryAfter: c.Duration("fault-retry-after"), PerMessage: c.Bool("fault-per-message")}
	if f := cfg.Fault; f.Share < 0 || f.Share > 1 {
		problems = append(problems, errors.New("--fault-share: must be 0..1"))
	} else if f.Code != 0 && (f.Code < 100 || f.Code > 599) {
		problems = append(problems, errors.New("--fault-code: must be an HTTP status 100..599"))
	} else if f.Delay < 0 || f.Delay >= sink.WriteTimeout {
		problems = append(problems, fmt.Errorf("--fault-delay: must be 0 to under the %v write timeout", sink.WriteTimeout))
	} else if f.RetryAfter < 0 || f.RetryAfter > 0 && f.Code == 0 {
		problems = append(problems, errors.New("--fault-retry-after: needs --fault-code, and is not negative"))
	} else if f.Share > 0 && f.Code == 0 && f.Delay == 0 {
		problems = append(problems, errors.New("--fault-share: needs --fault-code or --fault-delay"))
	}
	secret := func(file, env string) string {
		if p := c.String(file); p != "" {
			b, err := rundir.ReadSecretFile(p)
			if err != nil {
				problems = append(problems, fmt.Errorf("--%s: %w", file, err))
				return ""
			}
			return strings.TrimRight(string(b), "\r\n")
		}
		return g.getenv(env)
	}
	cfg.Auth = sink.Auth{
		BasicUser:       g.getenv(envSinkBasicUser),
		BasicPassword:   secret("basic-password-file", envSinkBasicPassword),
		BearerToken:     secret("bearer-token-file", envSinkBearerToken),
		HMACSecret:      []byte(secret("hmac-secret-file", envSinkHMACSecret)),
		SignatureHeader: c.String("signature-header"),
		WebhookSecret:   secret("webhook-secret-file", envSinkWebhookSecret),
	}
	cfg.ReadToken = secret("read-token-file", envSinkReadToken)
	if cfg.Auth.BasicPassword != "" && cfg.Auth.BasicUser == "" {
		problems = append(problems, errors.New(envSinkBasicUser+": a Basic password is set but no user"))
	}
	return cfg, errors.Join(problems...)
}

// runSink serves until an interrupt (Ctrl-C, SIGTERM), then closes the log.
func (g *globalState) runSink(parent context.Context, cfg sink.ServerConfig) error {
	ctx, stop := g.untilInterrupt(parent)
	defer stop()
	cfg.Ready = func(addr string) {
		fmt.Fprintf(g.stderr, "msgload sink: listening on http://%s (log %s, fsync %s)\n", addr, cfg.LogPath, cfg.Fsync)
	}
	// Beyond loopback: where the generated read token is, and a warning when
	// callbacks are not authenticated (never a secret).
	cfg.Notify = func(msg string) { fmt.Fprintln(g.stderr, "msgload sink: "+msg) }
	err := sink.Serve(ctx, cfg)
	if err != nil {
		var ne *net.OpError
		if errors.As(err, &ne) && ne.Op == "listen" || errors.Is(err, sink.ErrAuthConfig) || errors.Is(err, sink.ErrOptions) {
			return badInput(err)
		}
		// the log failed (a disk error at open, write or close): the
		// environment's failure, not bad input; say where
		return &exitError{code: exitThresholds, err: fmt.Errorf("sink: event log %s: %w", cfg.LogPath, err)}
	}
	fmt.Fprintln(g.stderr, "msgload sink: stopped; event log closed")
	return nil
}
