// Package harness runs one msgload run from start to end: it starts what the
// scenario calls embedded (the simulator and the sink, on loopback ports), drives
// the attack, waits the grace period for callbacks, writes the run directory and
// builds the reports. Both `msgload run` and `msgload replay` call it, so cmd/
// stays thin and a test can run a whole scenario in-process.
//
// A program that links harness can be started again as its own run's live
// analysis: with MSGLOAD_LIVE_ANALYSIS_CHILD=1 in its environment, the
// package's init reads the request on standard input, analyses, answers on
// standard output and exits before main (livechild.go).
package harness
