package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// Environment variables read by `msgload replay`. Secrets come only from here.
const (
	envReplayMessagingLogin    = "MSGLOAD_REPLAY_MESSAGING_LOGIN"    // comma-separated logins
	envReplayMessagingPassword = "MSGLOAD_REPLAY_MESSAGING_PASSWORD" // shared by the logins
	envReplayClientID          = "MSGLOAD_REPLAY_CLIENT_ID"          // comma-separated notify client_ids
	envReplayClientSecret      = "MSGLOAD_REPLAY_CLIENT_SECRET"      // shared by the client_ids
)

// replayCommand replays a recording, a HAR file or vegeta targets. Every replay
// is a run of the harness: with --scenario that scenario with the recording as
// its load, without it the built-in replay scenario (harness.ReplayScenario).
// It takes run's flags (runOpts: out, metrics, --max-messages,
// --confirm-target, --checkpoint, --quiet, --json) and ends as a run does
// (runHarness): one path, one run.json, one exit code.
func (g *globalState) replayCommand() *cli.Command {
	var opts runOpts
	return &cli.Command{
		Name:      "replay",
		Usage:     "replay recorded traffic (msgload recording, HAR 1.2, vegeta JSON targets) at its own pace, scaled by --speed",
		ArgsUsage: "FILE",
		Description: "With no --target the embedded simulator and sink are used. Recorded credentials are never sent:\n" +
			"messaging requests use the logins of " + envReplayMessagingLogin + " with " + envReplayMessagingPassword + ",\n" +
			"notify requests fresh tokens for the client_ids of " + envReplayClientID + " with " + envReplayClientSecret + ".\n" +
			"Recorded clients are mapped onto these in order of first appearance. A replay is a run: it writes runs/<id>/\n" +
			"(one part per API of the recording) with replay.json (recorded against replayed response codes, pacing)\n" +
			"beside the usual run files and reports, takes the flags of msgload run, serves /metrics, stops on Ctrl-C\n" +
			"and exits by its verdict like msgload run.",
		Flags: append(opts.flags(), replayFlags()...),
		Action: func(c *cli.Context) error {
			if err := oneArg(c, "replay", "file"); err != nil {
				return err
			}
			s, err := g.replayScenario(c)
			if err == nil {
				err = capMessages(s, opts.maxMessages)
			}
			if err != nil {
				return badInput(err)
			}
			return g.runHarness(c, harness.Options{Scenario: s}, opts)
		},
	}
}

// replayFlags are the flags of replay beyond run's.
func replayFlags() []cli.Flag {
	return []cli.Flag{
		&cli.Float64Flag{Name: "speed", Value: 1, Usage: "time scale: 2 replays twice as fast, 0.5 at half speed"},
		&cli.StringFlag{Name: "format", Value: replay.FormatAuto, Usage: "auto, msgload, har or vegeta"},
		&cli.StringFlag{Name: "external-ids", Value: replay.ExternalIDsKeep, Usage: "keep (same externalIds: a second replay must get the same notificationIds) or new (fresh, run-tagged); with --scenario the default is new"},
		&cli.StringFlag{Name: "target", Usage: "base `URL` of both APIs (default: the embedded simulator)"},
		&cli.StringFlag{Name: "messaging-url", Usage: "base URL of the messaging API, over --target"},
		&cli.StringFlag{Name: "notify-url", Usage: "base URL of the notification API, over --target"},
		&cli.StringFlag{Name: "token-url", Usage: "token endpoint (default: <notify-url>" + rundir.RouteToken + ")"},
		&cli.StringFlag{Name: "sink", Usage: "base URL of a standalone sink; callbacks and webhook registrations are rewritten to it"},
		&cli.StringFlag{Name: "client-header", Usage: "request header carrying the recorded client id (tried before Authorization and the body)"},
		&cli.StringFlag{Name: "limit", Value: "exceed", Usage: "without --scenario: exceed (keep the recording's pace whatever the service's limit) or respect (hold every client under it)"},
		&cli.DurationFlag{Name: "grace", Value: 30 * time.Second, Usage: "without --scenario: wait for callbacks after the last send (embedded: until the simulator has nothing pending, at most this; a scenario's delivery.grace default)"},
		&cli.DurationFlag{Name: "timeout", Usage: "without --scenario: per request (default: a scenario's retry.timeout, 10s)"},
		&cli.StringFlag{Name: "scenario", Usage: "replay through a scenario (built-in `NAME` or file): its target, clients, limit mode, retries, probes, delivery and thresholds apply, its load is replaced by FILE"},
	}
}

// replayScenario is the scenario a replay runs: --scenario's with the
// recording as its load, or the built-in replay scenario (its notes on
// stderr).
func (g *globalState) replayScenario(c *cli.Context) (*scenarios.Scenario, error) {
	o, err := g.replayConfig(c)
	if err != nil {
		return nil, err
	}
	if name := c.String("scenario"); name != "" {
		return g.scenarioReplay(c, name, o)
	}
	s, notes, err := harness.ReplayScenario(o)
	for _, n := range notes {
		fmt.Fprintf(g.stderr, "msgload replay: %s\n", n)
	}
	return s, err
}

func (g *globalState) replayConfig(c *cli.Context) (harness.ReplayOptions, error) {
	var problems []error
	o := harness.ReplayOptions{
		File: c.Args().First(), Format: c.String("format"), Speed: c.Float64("speed"),
		ExternalIDs: c.String("external-ids"), ClientHeader: c.String("client-header"), LimitMode: c.String("limit"),
		TokenURL: c.String("token-url"), SinkURL: c.String("sink"), Grace: c.Duration("grace"), Timeout: c.Duration("timeout"),
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
	if o.LimitMode != "exceed" && o.LimitMode != "respect" {
		problems = append(problems, fmt.Errorf("--limit %q: want exceed or respect", o.LimitMode))
	}
	o.MessagingURL, o.NotifyURL = c.String("target"), c.String("target")
	if v := c.String("messaging-url"); v != "" {
		o.MessagingURL = v
	}
	if v := c.String("notify-url"); v != "" {
		o.NotifyURL = v
	}
	confirm := confirmTargets(c)
	for _, u := range []struct{ flag, v string }{{"--messaging-url", o.MessagingURL}, {"--notify-url", o.NotifyURL}, {"--token-url", o.TokenURL}, {"--sink", o.SinkURL}} {
		if u.v == "" {
			continue
		}
		p, err := url.Parse(u.v)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			problems = append(problems, fmt.Errorf("%s %q: want an http(s) base URL", u.flag, redactURL(u.v)))
			continue
		}
		if u.flag == "--sink" {
			continue
		}
		if err := harness.CheckTarget(redactURL(u.v), confirm); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", u.flag, err))
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
		o.Messaging = append(o.Messaging, scenarios.Cred{ID: id, Secret: g.getenv(envReplayMessagingPassword)})
	}
	for _, id := range split(g.getenv(envReplayClientID)) {
		o.Notify = append(o.Notify, scenarios.Cred{ID: id, Secret: g.getenv(envReplayClientSecret)})
	}
	if c.String("scenario") != "" {
		if o.MessagingURL != "" || o.NotifyURL != "" || o.SinkURL != "" || o.TokenURL != "" {
			problems = append(problems, errors.New("--scenario names the target and the sink: leave out --target, --messaging-url, --notify-url, --token-url and --sink"))
		}
		if c.IsSet("limit") {
			problems = append(problems, errors.New("--scenario names the limit mode (limit.mode): leave out --limit"))
		}
	} else if (o.MessagingURL != "" || o.NotifyURL != "") && len(o.Messaging) == 0 && len(o.Notify) == 0 {
		problems = append(problems, fmt.Errorf("a target needs credentials: set %s/%s or %s/%s", envReplayMessagingLogin, envReplayMessagingPassword, envReplayClientID, envReplayClientSecret))
	}
	return o, errors.Join(problems...)
}

// scenarioReplay is the scenario NAME with its load (every part's) replaced by
// the recording: run-tagged externalIds unless --external-ids keep is given.
func (g *globalState) scenarioReplay(c *cli.Context, name string, o harness.ReplayOptions) (*scenarios.Scenario, error) {
	if _, err := replay.LoadWith(o.File, o.Format, replay.ReadOptions{ClientHeader: o.ClientHeader}); err != nil {
		return nil, err // before anything starts
	}
	s, err := scenarios.Load(name, g.getenv)
	if err != nil {
		return nil, err
	}
	file, err := filepath.Abs(o.File)
	if err != nil {
		return nil, err
	}
	ids := replay.ExternalIDsNew
	if c.IsSet("external-ids") {
		ids = o.ExternalIDs
	}
	parts := []*scenarios.Scenario{s}
	if len(s.Parts) > 0 {
		parts = parts[:0]
		for i := range s.Parts {
			parts = append(parts, &s.Parts[i])
		}
	}
	for _, p := range parts {
		p.Load = scenarios.LoadSpec{Profile: "replay", File: file, Speed: o.Speed, Format: o.Format, ClientHeader: o.ClientHeader, ExternalIDs: ids}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// writeReplayTable prints the recorded against replayed table of a part
// whose load was a replay (its replay.json), before its summary; nothing for
// any other part.
func writeReplayTable(w io.Writer, dir string) {
	b, err := rundir.ReadFile(filepath.Join(dir, replay.ReplayFile), rundir.MaxDocBytes)
	if err != nil {
		return
	}
	var rep replay.Report
	if json.Unmarshal(b, &rep) == nil {
		rep.WriteTable(w)
	}
}
