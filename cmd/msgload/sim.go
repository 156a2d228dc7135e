package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// simCommand is built in its own issue; until then it says so.
func (g *globalState) simCommand() *cli.Command {
	return &cli.Command{
		Name:  "sim",
		Usage: "(not built yet)",
		Action: func(*cli.Context) error {
			return errors.New("sim: not built yet")
		},
	}
}
