package main

import (
	"runtime"

	"github.com/msgload/msgload/scenarios"
)

// defaultProcs is the runtime's own GOMAXPROCS (the CPUs the process may
// use), read before msgload changes it.
var defaultProcs = runtime.GOMAXPROCS(0)

// spareProc gives the scheduler one P more than its default (the CPUs the
// process may use), or the default when spare is false, unless GOMAXPROCS is
// set in the environment; it returns the value in force.
//
// The sink's event log fsyncs from one goroutine. While it waits on the disk
// its P stays in the syscall state, and sysmon leaves a P there for up to
// 10 ms when its run queue is empty and another M is looking for work — on a
// 2-core machine half the CPU can sit idle during every fsync. With one spare P
// the sink keeps 0.66–0.68 of a bare handler's throughput instead of
// 0.46–0.53 (sink/README.md, Benchmarks).
//
// A run that takes no callbacks (delivery none or poll) has no use for it,
// and pays for it: with three Ps on two cores the scheduler wakes and parks
// threads more often than vegeta's two (the profiles of the whole run at
// 5,000/s: futex and the scheduler's idle loop are most of msgload's CPU
// above vegeta's; attack/README.md, issue 25).
func spareProc(getenv func(string) string, spare bool) int {
	if getenv("GOMAXPROCS") != "" {
		return runtime.GOMAXPROCS(0)
	}
	n := defaultProcs
	if spare {
		n++
	}
	runtime.GOMAXPROCS(n)
	return n
}

// takesCallbacks reports whether a run of s takes callbacks in its sink:
// delivery through the sink (the default), in s or, with parts, in any part.
func takesCallbacks(s *scenarios.Scenario) bool {
	if len(s.Parts) == 0 {
		return s.Delivery.Via == "" || s.Delivery.Via == "sink"
	}
	for i := range s.Parts {
		if takesCallbacks(&s.Parts[i]) {
			return true
		}
	}
	return false
}

// setProcs sets the process's Ps for a command (spareProc): a no-op unless
// main gave the program state its function (tests run in-process and leave
// the test binary's Ps alone).
func (g *globalState) setProcs(spare bool) {
	if g.procs != nil {
		g.procs(spare)
	}
}
