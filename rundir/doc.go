// Package rundir is the contract between the pieces of msgload: the names of the
// files in a run directory and the records they hold (attempts, sink events,
// simulator ground truth, run metadata), plus the correlation tag the attacker
// puts into every message so that the sink can measure delivery latency without
// sharing state with the attacker. It depends on nothing but the standard library
// so that every other package, and tools outside this module, can read runs.
package rundir
