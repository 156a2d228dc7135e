package main

import (
	"strings"
	"testing"
)

// A sink whose event log fails (here it cannot be created: the data directory
// is under a file) exits 1 naming the log, not 2 ("bad input"): the disk
// failed, not the flags (issue 24).
func TestSinkLogFailureIsNotBadInput(t *testing.T) {
	code, _, stderr := runProgram(t, nil, nil, "sink", "--addr", "127.0.0.1:0", "--data", "/dev/null/sink")
	if code != exitThresholds || !strings.Contains(stderr, "event log /dev/null/sink/events.jsonl") {
		t.Fatalf("exit %d, stderr %q; want 1 naming the event log", code, stderr)
	}
}
