package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// replayCommand is built in its own issue; until then it says so.
func (g *globalState) replayCommand() *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "(not built yet)",
		Action: func(*cli.Context) error {
			return errors.New("replay: not built yet")
		},
	}
}
