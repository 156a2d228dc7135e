package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// compareCommand is built in its own issue; until then it says so.
func (g *globalState) compareCommand() *cli.Command {
	return &cli.Command{
		Name:  "compare",
		Usage: "(not built yet)",
		Action: func(*cli.Context) error {
			return errors.New("compare: not built yet")
		},
	}
}
