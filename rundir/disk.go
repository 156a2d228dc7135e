package rundir

import "time"

// What a run writes to its directory, bytes a message (README, Soak runs,
// "Sizes"): measured on 300 s of delivery none at 3,000/s and on
// scripts/callbacks-1000.yaml (messaging; a notification's records are
// within 10 % of them). The plan sizes a run's disk with them
// (scenarios.Plan.DiskBytes): a message retried, polled or called back
// more than once writes more.
const (
	SendBytes     = 500 // a send: its line of attempts.jsonl (~380) and its result in results.bin (~120)
	CallbackBytes = 670 // a callback, webhook or incoming message in events.jsonl
	// The embedded simulator's truth.jsonl: a message, and its callback
	// (620 a message called back in all, as measured).
	TruthBytes         = 330
	TruthCallbackBytes = 290
)

// DefaultDiskReserve is the free space a run keeps on its directory's disk
// by default: when less is left, its sends stop (DiskLow), so that what it
// recorded, its grace period's callbacks and its reports still fit. At
// 5,000 sends a second with callbacks (6–9 MB/s, without and with the
// embedded simulator's truth) it is 30–45 seconds of writes.
const DefaultDiskReserve = 256 << 20

// DiskLow is what stopped a run's sends when its directory's disk ran low:
// the free space seen, under the reserve the run keeps (msgload run
// --disk-reserve). The run is incomplete: its plan was not sent, for the
// environment's reason.
type DiskLow struct {
	At      time.Time `json:"at"`
	Path    string    `json:"path"`          // the directory whose disk it was
	Free    uint64    `json:"free_bytes"`    // bytes free to the run then
	Reserve uint64    `json:"reserve_bytes"` // the reserve it keeps
}
