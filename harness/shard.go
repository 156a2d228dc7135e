package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// ErrShard: a sharded run cannot be made of these options (exit 2).
var ErrShard = errors.New("shard")

// shardRunID is the run id every shard of a sharded run derives alike from the
// scenario's name, the shared start instant and the number of shards, when no
// id is given: <start UTC>-<name>-<6 hex of a hash of the three>.
func shardRunID(scenario string, startAt time.Time, count int) string {
	name := sanitize(scenario)
	if name == "" {
		name = "run"
	}
	h := sha256.Sum256([]byte(scenario + "\x00" + startAt.UTC().Format(time.RFC3339Nano) + "\x00" + strconv.Itoa(count)))
	return startAt.UTC().Format("20060102T150405Z") + "-" + name + "-" + hex.EncodeToString(h[:3])
}

// shardScenario is the scenario one shard runs: its clients (when partitioned
// by clients), the load scaled to its share of the plan, a request count cut
// to its sequences, and in respect mode by sequence the limiter split among
// the shards that share a client. It returns the scenario and the shard.
func shardScenario(s *scenarios.Scenario, index, count int) (*scenarios.Scenario, rundir.Shard, error) {
	if len(s.Parts) > 0 {
		return nil, rundir.Shard{}, fmt.Errorf("%w: %s has parts; shard the scenario of each part instead", ErrShard, s.Name)
	}
	if s.Load.Profile == "replay" {
		return nil, rundir.Shard{}, fmt.Errorf("%w: %s replays a recording (load.profile replay), which is not sharded", ErrShard, s.Name)
	}
	sh, err := rundir.NewShard(index, count, len(s.Creds))
	if err != nil {
		return nil, rundir.Shard{}, fmt.Errorf("%w: %v", ErrShard, err)
	}
	c := *s
	f := sh.Share()
	scale := func(r scenarios.Rate) scenarios.Rate {
		r.Count *= f
		return r
	}
	l := &c.Load
	l.Rate, l.From, l.To, l.Amplitude = scale(l.Rate), scale(l.From), scale(l.To), scale(l.Amplitude)
	l.Steps = append([]scenarios.Step(nil), l.Steps...)
	for i := range l.Steps {
		l.Steps[i].Rate = scale(l.Steps[i].Rate)
	}
	if l.Requests > 0 {
		l.Requests = sh.Messages(l.Requests)
	}
	if sh.By == rundir.ShardByClients {
		c.Creds = nil
		for i, cr := range s.Creds {
			if i%count == index {
				c.Creds = append(c.Creds, cr)
			}
		}
	}
	return &c, sh, nil
}

// shardLimit is the limiter of one shard in respect mode: the whole limit when
// no client spans two shards, else the client's limit over the shards that
// share it (N/gcd(N, clients) of them), at least 1.
func shardLimit(sh rundir.Shard, requests int) int {
	if sh.By == rundir.ShardByClients || requests <= 0 {
		return requests
	}
	g := gcd(sh.Count, sh.Clients)
	return max(1, requests*g/sh.Count)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// ErrShardDirExists: the shard's directory is already there: another
// process ran this shard (a pod replaced after a disruption). It is never
// reused: its messages went out once, a second run would send them again.
var ErrShardDirExists = errors.New("the shard's directory exists: this shard already ran (it is never run twice)")

// createShardDir makes <out>/<id>/shard-<I>: the run's directory is shared by
// the shards (made by whichever comes first), the shard's own is never reused.
func createShardDir(out, id string, sh rundir.Shard) (string, error) {
	parent := filepath.Join(out, id)
	if err := os.MkdirAll(parent, rundir.DirMode); err != nil {
		return "", fmt.Errorf("create run directory: %w", err)
	}
	dir := filepath.Join(parent, sh.Dir())
	if err := os.Mkdir(dir, rundir.DirMode); errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("%w: %s", ErrShardDirExists, dir)
	} else if err != nil {
		return "", fmt.Errorf("create shard directory: %w", err)
	}
	return dir, nil
}

// waitStart waits until at (every shard begins on the same instant); a stop
// ends the wait. It says how late the start is when at has passed.
func waitStart(ctx context.Context, at time.Time, now func() time.Time) (late time.Duration) {
	d := at.Sub(now())
	if d <= 0 {
		return -d
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return 0
}
