package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/replay"
)

// recordOpts is what `msgload record` was asked to do.
type recordOpts struct {
	listen   string
	upstream *url.URL
	out      string
	redact   replay.RedactOptions
	maxBody  int64
}

// recordCommand runs the recording proxy.
func (g *globalState) recordCommand() *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "record real traffic through a reverse proxy, secrets removed, for `msgload replay`",
		ArgsUsage: " ",
		Description: "Point your application at --listen instead of the service; every request is forwarded unchanged to --upstream\n" +
			"and written to --out as one JSON line (format msgload-recording v1, see replay/README.md). Authorization, cookies,\n" +
			"token responses and every header, JSON, form or query field whose name matches the secret patterns (password, passwd,\n" +
			"*secret*, *token*, *apikey*, … see replay/README.md) or --redact-field are removed before anything is written.\n" +
			"Ctrl-C stops the proxy and flushes the file.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:8090", Usage: "address the proxy listens on"},
			&cli.StringFlag{Name: "upstream", Usage: "base URL of the real service (required)"},
			&cli.StringFlag{Name: "out", Usage: "recording file to create (required)"},
			&cli.BoolFlag{Name: "mask-recipients", Usage: "mask phone numbers: +79991234567 → +7999*****67"},
			&cli.StringSliceFlag{Name: "redact-field", Aliases: []string{"secret-field"}, Usage: "one more name pattern to remove from headers, JSON, form and query fields, " +
				"matched like the built-in list (case and - _ . ignored, * for any characters; repeatable; comma-separated in the variable)"},
			&cli.StringSliceFlag{Name: "secret-header", Usage: "extra header to remove (repeatable; comma-separated in the variable)"},
			&cli.Int64Flag{Name: "max-body", Value: replay.DefaultMaxBody, Usage: "largest body written; larger ones are forwarded but not recorded"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out if it exists"},
		},
		Action: func(c *cli.Context) error {
			o, err := g.recordConfig(c)
			if err != nil {
				return badInput(err)
			}
			return g.runRecord(c.Context, o, c.Bool("force"))
		},
	}
}

// recordConfig reads the flags (applyEnv has set every flag not given from its
// variable).
func (g *globalState) recordConfig(c *cli.Context) (recordOpts, error) {
	var o recordOpts
	var problems []error
	o.listen = c.String("listen")
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		problems = append(problems, fmt.Errorf("--listen %q: %w", o.listen, err))
	}
	up := c.String("upstream")
	if up == "" {
		problems = append(problems, errors.New("--upstream: the base URL of the service is required"))
	} else if u, err := url.Parse(up); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		problems = append(problems, fmt.Errorf("--upstream %q: want an http(s) base URL", redactURL(up)))
	} else {
		o.upstream = u
	}
	o.out = c.String("out")
	if o.out == "" {
		problems = append(problems, errors.New("--out: a recording file is required"))
	}
	o.redact.MaskRecipients = c.Bool("mask-recipients")
	o.redact.SecretFields = c.StringSlice("redact-field")
	o.redact.SecretHeaders = c.StringSlice("secret-header")
	o.maxBody = c.Int64("max-body")
	if o.maxBody <= 0 {
		problems = append(problems, errors.New("--max-body: must be positive"))
	}
	return o, errors.Join(problems...)
}

// redactURL drops the user info of a URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}

// runRecord records until an interrupt, then flushes the file.
func (g *globalState) runRecord(parent context.Context, o recordOpts, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(o.out, flags, 0o600)
	if err != nil {
		return badInput(fmt.Errorf("create recording: %w (use --force to overwrite)", err))
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		f.Close()
		os.Remove(o.out)
		return badInput(fmt.Errorf("listen on %s: %w", o.listen, err))
	}
	rec, err := replay.NewRecorder(replay.RecorderOptions{Upstream: o.upstream, Out: f, Redact: o.redact, MaxBody: o.maxBody})
	if err != nil {
		ln.Close()
		f.Close()
		return err
	}
	ctx, stop := g.untilInterrupt(parent)
	defer stop()
	fmt.Fprintf(g.stderr, "msgload record: proxy on http://%s → %s, writing %s; Ctrl-C to stop\n",
		ln.Addr(), redactURL(o.upstream.String()), o.out)
	serveErr := replay.Serve(ctx, ln, rec)
	syncErr := f.Sync()
	closeErr := f.Close()
	fmt.Fprintf(g.stderr, "msgload record: %d exchanges written", rec.Written())
	if d := rec.Dropped(); d > 0 {
		fmt.Fprintf(g.stderr, ", %d NOT written (the writer could not keep up)", d)
	}
	fmt.Fprintln(g.stderr)
	return errors.Join(serveErr, syncErr, closeErr)
}
