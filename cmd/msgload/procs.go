package main

import "runtime"

// spareProc gives the scheduler one P more than its default (the CPUs the
// process may use) unless GOMAXPROCS is set in the environment, and returns
// the value in force.
//
// The sink's event log fsyncs from one goroutine. While it waits on the disk
// its P stays in the syscall state, and sysmon leaves a P there for up to
// 10 ms when its run queue is empty and another M is looking for work — on a
// 2-core machine half the CPU can sit idle during every fsync. With one spare P
// the sink keeps 0.66–0.68 of a bare handler's throughput instead of
// 0.46–0.53 (sink/README.md, Benchmarks).
func spareProc(getenv func(string) string) int {
	if getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	n := runtime.GOMAXPROCS(0) + 1
	runtime.GOMAXPROCS(n)
	return n
}
