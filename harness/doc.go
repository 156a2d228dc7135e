// Package harness runs one msgload run from start to end: it starts what the
// scenario calls embedded (the simulator and the sink, on loopback ports), drives
// the attack, waits the grace period for callbacks, writes the run directory and
// builds the reports. Both `msgload run` and `msgload replay` call it, so cmd/
// stays thin and a test can run a whole scenario in-process.
package harness
