package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// sinkCommand is built in its own issue; until then it says so.
func (g *globalState) sinkCommand() *cli.Command {
	return &cli.Command{
		Name:  "sink",
		Usage: "(not built yet)",
		Action: func(*cli.Context) error {
			return errors.New("sink: not built yet")
		},
	}
}
