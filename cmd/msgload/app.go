package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes (DESIGN.md).
const (
	exitOK         = 0
	exitThresholds = 1 // verdict fail (a threshold failed, nothing accepted) or error (a raw file missing); the report is still written
	exitBadInput   = 2 // scenario, flags, arguments
	// exitIncomplete: the verdict incomplete (the plan not held, a run
	// interrupted then, a shard missing) when nothing is interrupted now.
	exitIncomplete = 3
	// exitInterrupted: this process was interrupted (Ctrl-C, SIGTERM), as a
	// shell's 128+SIGINT says; never the verdict of a run read later.
	exitInterrupted = 130
)

// globalState is the process state, built once in main and injected, so that a
// test can run the whole program with its own streams, environment and signals.
type globalState struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// signals returns a channel of interrupts (Ctrl-C, SIGTERM) and a stop function.
	signals func() (<-chan os.Signal, func())
	// tty tells whether w is a terminal; nil: isTerminal (a test says yes).
	tty func(w io.Writer) bool
	// procs sets the process's Ps, with one spare or not (spareProc); nil:
	// left as they are.
	procs func(spare bool)
}

// exitError carries an exit code through urfave/cli.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// badInput marks err as bad input (exit code 2).
func badInput(err error) error { return &exitError{code: exitBadInput, err: err} }

func (g *globalState) app() *cli.App {
	app := &cli.App{
		Name:      "msgload",
		Usage:     "load-test and replay traffic against the messaging and notification APIs",
		Version:   version(), // --version: module version, commit and its date
		Writer:    g.stdout,
		ErrWriter: g.stderr,
		// Errors are printed once, by run, with the exit code they carry.
		ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{
			g.runCommand(),
			g.validateCommand(),
			g.simCommand(),
			g.sinkCommand(),
			g.reportCommand(),
			g.compareCommand(),
			g.characteriseCommand(),
			g.recordCommand(),
			g.replayCommand(),
			g.completionCommand(),
		},
		CustomAppHelpTemplate: cli.AppHelpTemplate + examplesSection(""),
	}
	// `msgload` alone shows the help; `msgload runn` is a one-line usage error.
	app.Action = func(c *cli.Context) error {
		if c.NArg() == 0 {
			return cli.ShowAppHelp(c)
		}
		return unknownCommand(c.Args().First(), app.Commands)
	}
	app.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		return usageError("msgload", []cli.Flag{cli.VersionFlag}, err)
	}
	for _, cmd := range app.Commands {
		setEnvVars(cmd)
		cmd.CustomHelpTemplate = cli.CommandHelpTemplate + examplesSection(cmd.Name)
		cmd.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageError("msgload "+cmd.Name, cmd.Flags, err)
		}
		before := cmd.Before
		cmd.Before = func(c *cli.Context) error {
			if err := g.applyEnv(c); err != nil {
				return err
			}
			if cmd.Name != "run" && cmd.Name != "replay" {
				g.setProcs(true) // run and replay decide by their scenario (runHarness)
			}
			if before != nil {
				return before(c)
			}
			return nil
		}
	}
	return app
}

// run runs the program with args and returns its exit code.
func (g *globalState) run(ctx context.Context, args []string) int {
	app := g.app()
	err := app.RunContext(ctx, intersperse(app, args))
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(g.stderr, "msgload:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(g.stderr, "msgload:", err)
	return exitBadInput
}

// intersperse lets flags follow a subcommand's arguments (`msgload run smoke
// --out x`), which urfave/cli v2 does not parse by itself: the flags of the
// subcommand found after its first argument are moved before it. A flag that
// is not a bool takes the next word as its value; "--" ends the flags. A word
// that looks like a flag but is none of the command's moves too, so that the
// parser answers it as an unknown flag wherever it was written.
func intersperse(app *cli.App, args []string) []string {
	if len(args) < 3 {
		return args
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.HasName(args[1]) {
			cmd = c
		}
	}
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{"help": false, "h": false}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, rest []string
	for i := 2; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if takesValue[name] && !hasVal && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(append(append([]string{}, args[:2]...), flags...), rest...)
}

// untilInterrupt returns a context of parent's that ends at the first
// interrupt (Ctrl-C, SIGTERM): how a server (msgload sim, sink, record) is
// told to shut down. stop releases the signals and the context. A run or a
// replay takes the signals themselves instead (harness.Options.Signals): a
// second interrupt there means something of its own.
func (g *globalState) untilInterrupt(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sig, stopSignals := g.signals()
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() { stopSignals(); cancel() }
}
