// Command msgload is a load-testing and traffic-replay harness for the messaging
// and notification APIs. main only builds the process state and dispatches; each
// subcommand lives in a file of its own.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	g := &globalState{
		stdout: os.Stdout,
		stderr: os.Stderr,
		getenv: os.Getenv,
		signals: func() (<-chan os.Signal, func()) {
			ch := make(chan os.Signal, 2)
			signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
			return ch, func() { signal.Stop(ch) }
		},
		procs: func(spare bool) { spareProc(os.Getenv, spare) }, // see procs.go
	}
	stop := startProfiles(os.Getenv, os.Stderr)
	code := g.run(context.Background(), os.Args)
	stop()
	os.Exit(code)
}
