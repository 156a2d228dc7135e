package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// recordCommand is built in its own issue; until then it says so.
func (g *globalState) recordCommand() *cli.Command {
	return &cli.Command{
		Name:  "record",
		Usage: "(not built yet)",
		Action: func(*cli.Context) error {
			return errors.New("record: not built yet")
		},
	}
}
