package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/scenarios"
)

// Environment variables read by `msgload replay`. Secrets come only from here.
const (
	envReplayMessagingLogin    = "MSGLOAD_REPLAY_MESSAGING_LOGIN"    // comma-separated logins
	envReplayMessagingPassword = "MSGLOAD_REPLAY_MESSAGING_PASSWORD" // shared by the logins
	envReplayClientID          = "MSGLOAD_REPLAY_CLIENT_ID"          // comma-separated notify client_ids
	envReplayClientSecret      = "MSGLOAD_REPLAY_CLIENT_SECRET"      // shared by the client_ids
)

// replayCommand replays a recording, a HAR file or vegeta targets.
func (g *globalState) replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "replay recorded traffic (msgload recording, HAR 1.2, vegeta JSON targets) at its own pace, scaled by --speed",
		ArgsUsage: "FILE",
		Description: "With no --target the embedded simulator and sink are used. Recorded credentials are never sent:\n" +
			"messaging requests use the logins of " + envReplayMessagingLogin + " with " + envReplayMessagingPassword + ",\n" +
			"notify requests fresh tokens for the client_ids of " + envReplayClientID + " with " + envReplayClientSecret + ".\n" +
			"Recorded clients are mapped onto these in order of first appearance. Writes runs/<id>/ with replay.json\n" +
			"(recorded against replayed response codes, pacing) beside the usual run files and reports.",
		Flags: []cli.Flag{
			&cli.Float64Flag{Name: "speed", Value: 1, Usage: "time scale: 2 replays twice as fast, 0.5 at half speed"},
			&cli.StringFlag{Name: "format", Value: replay.FormatAuto, Usage: "auto, msgload, har or vegeta"},
			&cli.StringFlag{Name: "out", Value: "runs", Usage: "parent `DIR` of run directories"},
			&cli.StringFlag{Name: "external-ids", Value: replay.ExternalIDsKeep, Usage: "keep (same externalIds: a second replay must get the same notificationIds) or new (fresh, run-tagged)"},
			&cli.StringFlag{Name: "target", Usage: "base `URL` of both APIs (default: the embedded simulator)"},
			&cli.StringFlag{Name: "messaging-url", Usage: "base URL of the messaging API, over --target"},
			&cli.StringFlag{Name: "notify-url", Usage: "base URL of the notification API, over --target"},
			&cli.StringFlag{Name: "token-url", Usage: "token endpoint (default: <notify-url>/oauth/token)"},
			&cli.StringFlag{Name: "sink", Usage: "base URL of a standalone sink; callbacks and webhook registrations are rewritten to it"},
			&cli.StringFlag{Name: "client-header", Usage: "request header carrying the recorded client id (tried before Authorization and the body)"},
			&cli.DurationFlag{Name: "grace", Value: 30 * time.Second, Usage: "wait for callbacks after the last send (embedded: until the simulator has nothing pending, at most this)"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "per request"},
			&cli.StringFlag{Name: "scenario", Usage: "replay through a scenario (built-in `NAME` or file): its target, clients, limit mode, retries, probes, delivery and thresholds apply, its load is replaced by FILE's sends; run-tagged externalIds"},
			&cli.StringFlag{Name: "metrics-addr", Value: "127.0.0.1:9464", Usage: "with --scenario: serve /metrics here while the replay goes (\"\" for none; port 0 for any free one; a busy port is an error)"},
			&cli.StringFlag{Name: "confirm-target", Usage: "`HOST` that may be replayed against although it is not loopback"},
		},
		Action: func(c *cli.Context) error {
			if err := oneArg(c, "replay", "file"); err != nil {
				return err
			}
			o, err := g.replayConfig(c)
			if err != nil {
				return badInput(err)
			}
			if name := c.String("scenario"); name != "" {
				if c.IsSet("external-ids") && o.ExternalIDs != replay.ExternalIDsNew {
					return badInput(errors.New("--scenario replays with run-tagged externalIds; --external-ids keep works without --scenario"))
				}
				return g.runScenarioReplay(c, name, o)
			}
			return g.runReplay(c.Context, o)
		},
	}
}

func (g *globalState) replayConfig(c *cli.Context) (replay.SessionOptions, error) {
	var problems []error
	o := replay.SessionOptions{
		File: c.Args().First(), Format: c.String("format"), Speed: c.Float64("speed"), Out: c.String("out"),
		ExternalIDs: c.String("external-ids"), Read: replay.ReadOptions{ClientHeader: c.String("client-header")},
		TokenURL: c.String("token-url"), SinkURL: c.String("sink"), Grace: c.Duration("grace"), Timeout: c.Duration("timeout"),
		Version: version(), Log: g.stderr,
	}
	switch o.Format {
	case replay.FormatAuto, replay.FormatMsgload, replay.FormatHAR, replay.FormatVegeta:
	default:
		problems = append(problems, fmt.Errorf("--format %q: want auto, msgload, har or vegeta", o.Format))
	}
	if !(o.Speed > 0) {
		problems = append(problems, fmt.Errorf("--speed %v: %w", o.Speed, replay.ErrBadSpeed))
	}
	if o.ExternalIDs != replay.ExternalIDsKeep && o.ExternalIDs != replay.ExternalIDsNew {
		problems = append(problems, fmt.Errorf("--external-ids %q: want keep or new", o.ExternalIDs))
	}
	o.MessagingURL, o.NotifyURL = c.String("target"), c.String("target")
	if v := c.String("messaging-url"); v != "" {
		o.MessagingURL = v
	}
	if v := c.String("notify-url"); v != "" {
		o.NotifyURL = v
	}
	confirm := c.String("confirm-target")
	for _, u := range []struct{ flag, v string }{{"--messaging-url", o.MessagingURL}, {"--notify-url", o.NotifyURL}, {"--token-url", o.TokenURL}, {"--sink", o.SinkURL}} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			problems = append(problems, fmt.Errorf("%s %q: want an http(s) base URL", u.flag, redactURL(u.v)))
			continue
		}
		if u.flag != "--sink" && !isLoopbackHost(p.Hostname()) && p.Hostname() != confirm {
			problems = append(problems, fmt.Errorf("%s: %s is not loopback; pass --confirm-target %s to replay against it", u.flag, p.Hostname(), p.Hostname()))
		}
	}
	split := func(s string) []string {
		var out []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	for _, id := range split(g.getenv(envReplayMessagingLogin)) {
		o.Messaging = append(o.Messaging, replay.Cred{ID: id, Secret: g.getenv(envReplayMessagingPassword)})
	}
	for _, id := range split(g.getenv(envReplayClientID)) {
		o.Notify = append(o.Notify, replay.Cred{ID: id, Secret: g.getenv(envReplayClientSecret)})
	}
	if c.String("scenario") != "" {
		if o.MessagingURL != "" || o.NotifyURL != "" || o.SinkURL != "" || o.TokenURL != "" {
			problems = append(problems, errors.New("--scenario names the target and the sink: leave out --target, --messaging-url, --notify-url, --token-url and --sink"))
		}
	} else if (o.MessagingURL != "" || o.NotifyURL != "") && len(o.Messaging) == 0 && len(o.Notify) == 0 {
		problems = append(problems, fmt.Errorf("a target needs credentials: set %s/%s or %s/%s", envReplayMessagingLogin, envReplayMessagingPassword, envReplayClientID, envReplayClientSecret))
	}
	return o, errors.Join(problems...)
}

// runReplay replays until done; the first interrupt stops sending (what was
// sent is still reported).
func (g *globalState) runReplay(parent context.Context, o replay.SessionOptions) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	sig, stop := g.signals()
	defer stop()
	go func() {
		select {
		case <-sig:
			fmt.Fprintln(g.stderr, "msgload replay: interrupted; stopping sends")
			cancel()
		case <-ctx.Done():
		}
	}()
	res, err := replay.Session(ctx, o)
	if err != nil {
		if errors.Is(err, replay.ErrFormat) || errors.Is(err, replay.ErrNoRequests) || errors.Is(err, replay.ErrNotRecording) ||
			errors.Is(err, replay.ErrBadLine) || errors.Is(err, replay.ErrVersion) {
			return badInput(err)
		}
		return err
	}
	failed := false
	for _, p := range res.Parts {
		if len(res.Parts) > 1 {
			fmt.Fprintf(g.stdout, "== %s (%s)\n", p.API, p.Dir)
		}
		switch {
		case p.Err != nil:
			failed = true
			fmt.Fprintf(g.stdout, "%s: not replayed: %v\n", p.API, p.Err)
			continue
		case p.Report != nil:
			p.Report.WriteTable(g.stdout)
		}
		switch {
		case p.Summary != nil:
			p.Summary.TerminalWith(g.stdout, g.terminal())
			failed = failed || !p.Summary.OK()
		case p.SummaryErr != nil:
			fmt.Fprintf(g.stdout, "no report: %v (rebuild it with: msgload report %s)\n", p.SummaryErr, p.Dir)
		}
	}
	fmt.Fprintf(g.stdout, "run directory: %s\n", res.Dir)
	switch {
	case res.Interrupted():
		return &exitError{code: exitInterrupted, err: errors.New("replay interrupted; partial results kept in " + res.Dir)}
	case failed:
		return &exitError{code: exitThresholds, err: errors.New("replay failed: a part did not run or a threshold did not hold; see " + res.Dir)}
	}
	return nil
}

// runScenarioReplay replays the file through the harness with the scenario's
// settings, its load replaced by the recording; the harness writes replay.json
// (recorded against replayed codes) in every part's directory, and its table is
// printed with the summary.
func (g *globalState) runScenarioReplay(c *cli.Context, name string, o replay.SessionOptions) error {
	if _, err := replay.LoadWith(o.File, o.Format, o.Read); err != nil {
		return badInput(err) // before anything starts
	}
	s, err := scenarios.Load(name, g.getenv)
	if err != nil {
		return badInput(err)
	}
	file, err := filepath.Abs(o.File)
	if err != nil {
		return badInput(err)
	}
	parts := []*scenarios.Scenario{s}
	if len(s.Parts) > 0 {
		parts = parts[:0]
		for i := range s.Parts {
			parts = append(parts, &s.Parts[i])
		}
	}
	for _, p := range parts {
		p.Load = scenarios.LoadSpec{Profile: "replay", File: file, Speed: o.Speed}
	}
	if err := s.Validate(); err != nil {
		return badInput(err)
	}
	sig, stopSignals := g.signals()
	defer stopSignals()
	res, err := harness.Run(c.Context, harness.Options{
		Scenario: s, Out: o.Out, MetricsAddr: c.String("metrics-addr"), MetricsLinger: 15 * time.Second,
		ConfirmTarget: c.String("confirm-target"), Version: version(), SinkReadToken: g.getenv(envSinkReadToken),
		Stdout: g.stdout, Stderr: g.stderr, TTY: g.isTTY(g.stderr), Signals: sig,
	})
	if err != nil {
		if errors.Is(err, harness.ErrUnconfirmedTarget) {
			return badInput(err)
		}
		return &exitError{code: exitBadInput, err: fmt.Errorf("replay: %w", err)}
	}
	for _, p := range res.Parts {
		if len(res.Parts) > 1 {
			fmt.Fprintf(g.stdout, "== %s (%s)\n", p.Name, p.API)
		}
		if b, err := os.ReadFile(filepath.Join(p.Dir, replay.ReplayFile)); err == nil {
			var rep replay.Report
			if json.Unmarshal(b, &rep) == nil {
				rep.WriteTable(g.stdout)
			}
		}
		switch {
		case p.Summary != nil:
			p.Summary.TerminalWith(g.stdout, g.terminal())
		case p.Err != nil:
			fmt.Fprintf(g.stdout, "%s: no report: %v\n", p.Name, p.Err)
		default:
			fmt.Fprintf(g.stdout, "%s: no report yet; build it with: msgload report %s\n", p.Name, p.Dir)
		}
	}
	if res.MetricsAddr != "" {
		fmt.Fprintf(g.stdout, "metrics: http://%s/metrics (while the replay went)\n", res.MetricsAddr)
	}
	fmt.Fprintf(g.stdout, "run directory: %s\n", res.Dir)
	switch {
	case res.Interrupted:
		return &exitError{code: exitInterrupted, err: errors.New("replay interrupted; partial results kept in " + res.Dir)}
	case !res.OK():
		return &exitError{code: exitThresholds, err: errors.New("replay failed: a threshold did not hold or a part did not finish; see " + res.Dir)}
	}
	return nil
}
