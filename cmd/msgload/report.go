package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// reportCommand is built in its own issue; until then it says so.
func (g *globalState) reportCommand() *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "(not built yet)",
		Action: func(*cli.Context) error {
			return errors.New("report: not built yet")
		},
	}
}
