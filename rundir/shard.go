package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Shard partitions the messages of one run among Count processes (msgload run
// --shard I/N, or a Kubernetes Indexed Job). Every shard keeps the run's
// global sequence numbers, so the union of the shards' attempts.jsonl is a
// valid attempts.jsonl of the whole run, and the client of a message is the
// one a single process would give it (round robin by sequence over all the
// scenario's clients).
//
//   - By "clients" (when the scenario has at least Count clients): shard I
//     takes the clients whose index i (from 0, in the scenario's order) has
//     i mod Count == I, and every message of those clients. No client spans
//     two shards, so its rate limit is judged exactly.
//   - By "sequence" (fewer clients than shards): shard I takes the messages
//     with (seq-1) mod Count == I; a client then spans shards.
type Shard struct {
	Index   int    `json:"index"`   // 0 … Count-1, as JOB_COMPLETION_INDEX
	Count   int    `json:"count"`   // shards in the run
	By      string `json:"by"`      // ShardByClients or ShardBySequence
	Clients int    `json:"clients"` // clients of the whole scenario
}

// Ways to partition a run.
const (
	ShardByClients  = "clients"
	ShardBySequence = "sequence"
)

// NewShard partitions a scenario of clients clients into count shards and
// returns shard index: by clients when there are enough, else by sequence.
func NewShard(index, count, clients int) (Shard, error) {
	if count < 1 || index < 0 || index >= count {
		return Shard{}, fmt.Errorf("shard %d/%d: want 0 ≤ I < N", index, count)
	}
	clients = max(clients, 1)
	by := ShardByClients
	if clients < count {
		by = ShardBySequence
	}
	return Shard{Index: index, Count: count, By: by, Clients: clients}, nil
}

// ParseShard reads "I/N" (I from 0).
func ParseShard(s string) (index, count int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if ok {
		index, err = strconv.Atoi(a)
		if err == nil {
			count, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || count < 1 || index < 0 || index >= count {
		return 0, 0, fmt.Errorf("shard %q: want I/N with 0 ≤ I < N, e.g. 0/3", s)
	}
	return index, count, nil
}

// String is "I/N".
func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Dir is the name of the shard's run directory under the run's: shard-I.
func (s Shard) Dir() string { return "shard-" + strconv.Itoa(s.Index) }

// modulus is the period of the partition: the sequence's residues mod it
// decide the owner.
func (s Shard) modulus() int64 {
	if s.By == ShardByClients {
		return int64(max(s.Clients, 1))
	}
	return int64(max(s.Count, 1))
}

// owned is how many residues r (0 ≤ r < modulus) of (seq-1) this shard
// owns: Index, Index+Count, … (by clients, the indexes of its clients).
func (s Shard) owned() int64 {
	m, i, n := s.modulus(), int64(s.Index), int64(max(s.Count, 1))
	if i >= m {
		return 0
	}
	return (m - i + n - 1) / n
}

// Owns reports whether message seq (from 1) belongs to this shard.
func (s Shard) Owns(seq int64) bool {
	if seq <= 0 || s.Count <= 1 {
		return s.Count <= 1
	}
	m := s.modulus()
	return ((seq-1)%m)%int64(s.Count) == int64(s.Index)
}

// Share is the shard's part of the plan: its clients over all, or 1/Count.
func (s Shard) Share() float64 {
	return float64(s.owned()) / float64(s.modulus())
}

// Seq is the global sequence of the shard's k-th message (k from 1): the
// shard's sequences in increasing order, so a cap on the global sequence
// keeps the union of the shards equal to what one process would send.
func (s Shard) Seq(k int64) int64 {
	n := s.owned()
	if n == 0 || k <= 0 {
		return 0
	}
	j, l := (k-1)/n, (k-1)%n
	return int64(s.Index) + l*int64(s.Count) + 1 + j*s.modulus()
}

// Messages is how many of the sequences 1 … total belong to this shard.
func (s Shard) Messages(total int64) int64 {
	m, c := s.modulus(), int64(max(s.Count, 1))
	var n int64
	for r := int64(s.Index); r < m && r < total; r += c {
		n += (total - r + m - 1) / m
	}
	return n
}

// ScenarioDigest names a run's plan: "sha256:" and the hex SHA-256 of its
// scenario.yaml as written in the run directory (the resolved scenario with
// its secrets redacted, so the digest reveals none). Shards of one run have
// the same digest; two runs that reused one run id with different scenarios
// do not.
func ScenarioDigest(scenarioYAML []byte) string {
	sum := sha256.Sum256(scenarioYAML)
	return "sha256:" + hex.EncodeToString(sum[:])
}
