package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
)

// baselineOpts are --baseline and --baseline-gate of run and report: the
// run is compared with an earlier run of its scenario, as msgload compare
// does, and the verdict card shows the result.
type baselineOpts struct {
	dir  string
	gate bool
	run  reports.Run // the baseline, read by load
}

func (o *baselineOpts) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "baseline", Usage: "compare the run with the earlier run `DIR` of the same scenario (as msgload compare does): the verdict card shows the change, compare.json holds every figure; a regression fails the run only with --baseline-gate", Destination: &o.dir},
		&cli.BoolFlag{Name: "baseline-gate", Usage: "a regression against --baseline is a service reason: the run fails", Destination: &o.gate},
	}
}

// load reads the baseline, before anything is sent: a directory that does
// not exist, holds no report, has parts, or ran another scenario (digest is
// the scenario digest of this run) is refused, naming the path.
func (o *baselineOpts) load(cmd, digest string) error {
	if o.dir == "" {
		if o.gate {
			return badInput(fmt.Errorf("%s: --baseline-gate needs --baseline DIR", cmd))
		}
		return nil
	}
	if err := isDir(cmd+": --baseline", o.dir); err != nil {
		return err
	}
	if len(reports.PartDirs(o.dir)) > 0 {
		return badInput(fmt.Errorf("%s: --baseline %q is a run of several parts: --baseline compares runs of one part; compare parts with msgload compare", cmd, o.dir))
	}
	path := filepath.Join(o.dir, rundir.SummaryFile)
	if _, err := os.Stat(path); err != nil {
		return badInput(fmt.Errorf("%s: --baseline %q is not a run directory with a report (no %s: msgload report %s builds it)", cmd, o.dir, rundir.SummaryFile, o.dir))
	}
	if d := runDigest(o.dir); digest != "" && d != "" && d != digest {
		return badInput(fmt.Errorf("%s: --baseline %q ran another scenario (its digest %s, this run's %s): compare runs of one scenario", cmd, o.dir, d, digest))
	}
	r, err := readRun(path)
	if err != nil {
		return badInput(fmt.Errorf("%s: --baseline %q: %w", cmd, o.dir, err))
	}
	o.run = r
	return nil
}

// apply compares the run s of dir with the baseline and rewrites its
// reports, compare.json with them; nothing without --baseline.
func (o *baselineOpts) apply(s *reports.Summary, dir string) error {
	if o.dir == "" || s == nil {
		return nil
	}
	if err := s.AgainstBaseline(o.run, o.dir, o.gate); err != nil {
		return err
	}
	return render.WriteFiles(dir, s)
}

// runDigest is the scenario digest run.json of dir records, or "" (a run
// from before digests, or no run.json).
func runDigest(dir string) string {
	b, err := rundir.ReadFile(filepath.Join(dir, rundir.MetaFile), rundir.MaxDocBytes)
	if err != nil {
		return ""
	}
	var m rundir.Meta
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return m.ScenarioDigest
}

// errBaselineParts refuses --baseline for a scenario of several parts.
var errBaselineParts = errors.New("--baseline compares runs of one part; for a scenario of several parts use msgload compare BASE NEW")

// loadRunBaseline reads run's --baseline before the attack starts, so that a
// baseline that cannot be compared never costs a run: the scenario must have
// one part, not be a shard, and be the baseline's (the same digest).
func loadRunBaseline(o *baselineOpts, ho harness.Options) error {
	if o.dir == "" {
		return o.load("run", "")
	}
	if len(ho.Scenario.Parts) > 0 {
		return badInput(fmt.Errorf("run: %w", errBaselineParts))
	}
	if ho.ShardCount > 0 {
		return badInput(errors.New("run: --baseline compares a whole run of one part, not a shard: compare the merged run with msgload compare BASE OUT"))
	}
	red, err := ho.Scenario.Redacted()
	if err != nil {
		return badInput(fmt.Errorf("run: %w", err))
	}
	return o.load("run", rundir.ScenarioDigest(red))
}
