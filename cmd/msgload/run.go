package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// runCommand is built in its own issue; until then it says so.
func (g *globalState) runCommand() *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "(not built yet)",
		Action: func(*cli.Context) error {
			return errors.New("run: not built yet")
		},
	}
}
