package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
)

// shardPoll is how often report --merge --wait-for looks at the shards'
// directories.
var shardPoll = 2 * time.Second

// shardEnded reports whether dir holds a shard that has ended: its run.json
// exists and has an end (a shard writes the end last, killed or not).
func shardEnded(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, rundir.MetaFile))
	if err != nil {
		return false
	}
	var m struct {
		End time.Time `json:"end"`
	}
	return json.Unmarshal(b, &m) == nil && !m.End.IsZero()
}

// waitShards waits until shards 0 … n-1 of the run directory out have all
// ended, timeout passes or ctx is done. It returns the directories to merge
// (those with a run.json: one that has not ended merges as incomplete, named)
// and the shards that had not ended.
func waitShards(ctx context.Context, out string, n int, timeout time.Duration) (dirs []string, notEnded []int) {
	deadline := time.Now().Add(timeout)
	t := time.NewTicker(shardPoll)
	defer t.Stop()
	for {
		dirs, notEnded = dirs[:0], notEnded[:0]
		for i := range n {
			d := filepath.Join(out, rundir.Shard{Index: i, Count: n}.Dir())
			if _, err := os.Stat(filepath.Join(d, rundir.MetaFile)); err == nil {
				dirs = append(dirs, d)
			}
			if !shardEnded(d) {
				notEnded = append(notEnded, i)
			}
		}
		if len(notEnded) == 0 || !time.Now().Before(deadline) || ctx.Err() != nil {
			return dirs, notEnded
		}
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
}

// runWaitMerge is report --merge OUT --wait-for N: it waits for the N shards
// of OUT (OUT/shard-I) to end, at most timeout, then merges those there. A
// shard missing or unfinished makes the merged run incomplete, named; with
// none there at all there is nothing to merge, and the exit code says
// incomplete.
func (g *globalState) runWaitMerge(ctx context.Context, out string, n int, timeout time.Duration, sinkLogs []string, quiet bool) error {
	if n < 1 || timeout <= 0 {
		return badInput(fmt.Errorf("report: --wait-for %d --wait-timeout %v: want N ≥ 1 and a timeout > 0", n, timeout))
	}
	// An interrupt (the pod's SIGTERM) ends the wait, not the merge: what
	// is there is merged, the missing named; a second one kills.
	waitCtx, stop := g.untilInterrupt(ctx)
	dirs, notEnded := waitShards(waitCtx, out, n, timeout)
	interrupted := waitCtx.Err() != nil && ctx.Err() == nil
	stop()
	if len(notEnded) > 0 {
		why := fmt.Sprintf("after %v", timeout)
		if interrupted {
			why = "when interrupted"
		}
		fmt.Fprintf(g.stderr, "msgload: report --merge: shards %s of %d had not ended %s; merging the %d there\n",
			joinInts(notEnded), n, why, len(dirs))
	}
	var err error
	if len(dirs) == 0 {
		err = &exitError{code: exitIncomplete, err: fmt.Errorf("verdict INCOMPLETE: no shard of %d of %s began (shards %s missing)", n, out, joinInts(notEnded))}
	} else {
		err = g.runMerge(out, dirs, sinkLogs, quiet)
	}
	var ee *exitError
	if interrupted && errors.As(err, &ee) && ee.code != exitBadInput {
		ee.code = exitInterrupted // this wait was interrupted now, whatever the merge says
	}
	return err
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
