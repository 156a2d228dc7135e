//go:build !linux

package harness

import (
	"os"
	"syscall"
)

// liveChildAttr: no parent-death signal outside Linux; the live loop kills
// its child when it stops.
func liveChildAttr() *syscall.SysProcAttr { return nil }

// lowerPriority: the live analysis keeps the priority it was started with
// outside Linux.
func lowerPriority(int) {}

// runNiced runs start as it is: the child lowers its own priority where it
// can (lowerPriority).
func runNiced(_ int, start func() error) error { return start() }

// niceness is not looked at outside Linux.
func niceness() int { return 0 }

// liveExecutable is the program a live analysis runs: this one.
func liveExecutable() (string, error) { return os.Executable() }
