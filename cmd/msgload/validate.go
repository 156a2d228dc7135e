package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/scenarios"
)

// validateOpts are the flags of validate.
type validateOpts struct {
	maxMessages int64
	asJSON      bool
}

// validateCommand is the dry run: load every scenario, print its plan, exit 2
// with every problem listed when one is bad.
func (g *globalState) validateCommand() *cli.Command {
	var opts validateOpts
	return &cli.Command{
		Name:      "validate",
		Usage:     "check scenario files and print their plan (requests per client, rate against the limit, duration, expected 429, messages really sent)",
		ArgsUsage: "SCENARIO… (a built-in name: " + joinNames(scenarios.Builtins()) + "; or a file)",
		Flags: []cli.Flag{
			&cli.Int64Flag{Name: "max-messages", Usage: "hard cap of `N` messages really sent, as msgload run would apply it (0: the scenario's maxMessages)", Destination: &opts.maxMessages},
			&cli.BoolFlag{Name: "json", Usage: "print the plans as JSON (snake_case, seconds: the shape in README.md)", Destination: &opts.asJSON},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return badInput(errors.New("validate: name at least one scenario; see 'msgload validate --help'"))
			}
			return g.runValidate(c.Args().Slice(), opts)
		},
	}
}

func joinNames(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// runValidate checks every scenario, printing plans to stdout and problems to
// stderr; it returns a bad-input error when any scenario is bad.
func (g *globalState) runValidate(names []string, opts validateOpts) error {
	bad := 0
	var plans []scenarios.PlanJSON
	for _, name := range names {
		s, err := scenarios.Load(name, g.getenv)
		if err == nil && opts.maxMessages > 0 {
			s.MaxMessages = opts.maxMessages
			for i := range s.Parts {
				s.Parts[i].MaxMessages = opts.maxMessages
			}
			err = s.Validate()
		}
		if err != nil {
			bad++
			fmt.Fprintln(g.stderr, err)
			continue
		}
		p := s.Plan()
		if opts.asJSON {
			plans = append(plans, p.JSON())
			continue
		}
		fmt.Fprintf(g.stdout, "%s (%s): ok\n", s.Name, s.File)
		if s.Description != "" {
			fmt.Fprintf(g.stdout, "  %s\n", s.Description)
		}
		if err := p.WriteText(g.stdout); err != nil {
			return fmt.Errorf("validate: write plan: %w", err)
		}
	}
	if opts.asJSON && len(plans) > 0 {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(plans); err != nil {
			return fmt.Errorf("validate: write plans: %w", err)
		}
	}
	if bad > 0 {
		return badInput(fmt.Errorf("validate: %d of %d scenarios are bad", bad, len(names)))
	}
	return nil
}
