// Package rundir is the contract between the pieces of msgload: the names of the
// files in a run directory and the records they hold (attempts, sink events,
// simulator ground truth, run metadata), plus the correlation tag the attacker
// puts into every message so that the sink can measure delivery latency without
// sharing state with the attacker. It also holds the seeds' vocabulary, each
// word once (vocabulary.go, states.go): the channels, the states and which are
// final, the field limits, the classes of an attempt (Classify), Retry-After
// (ParseRetryAfter) and the one rate grammar (ParseRate), so that the
// simulator, the sink, the scenario loader, the attacker and the reports
// cannot disagree on a word. It depends on nothing but the standard library
// so that every other package, and tools outside this module, can read runs.
package rundir
