// Package memlimit is the soft memory limit a process sets while it analyses
// a run directory alone — `msgload report`, and the run's live analysis in
// its own process (harness): the analysis's state is bounded, but it decodes
// gigabytes of lines and drops them, and at the collector's default headroom
// its peak RSS would follow that garbage. ForReport caps the headroom at a
// floor while the live heap is small and follows the live heap above it.
package memlimit
