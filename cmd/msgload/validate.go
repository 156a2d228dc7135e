package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// validateCommand is built in its own issue; until then it says so.
func (g *globalState) validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "(not built yet)",
		Action: func(*cli.Context) error {
			return errors.New("validate: not built yet")
		},
	}
}
