package main

import (
	"io"

	"github.com/msgload/msgload/reports/render"
)

// isTTY tells whether w is a terminal, through the injected test when there
// is one.
func (g *globalState) isTTY(w io.Writer) bool {
	if g.tty != nil {
		return g.tty(w)
	}
	return isTerminal(w)
}

// color tells whether stdout gets ANSI colours: only on a terminal, never with
// NO_COLOR set to anything (https://no-color.org) or on a dumb terminal.
func (g *globalState) color() bool {
	return g.isTTY(g.stdout) && g.getenv("NO_COLOR") == "" && g.getenv("TERM") != "dumb"
}

// terminal is how summaries are written to stdout.
func (g *globalState) terminal() render.TerminalOptions {
	return render.TerminalOptions{Color: g.color()}
}
