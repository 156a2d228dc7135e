package reports

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/msgload/msgload/rundir"
)

// targetMemory adds the samples of the target's memory (target-memory.jsonl,
// written when the scenario names target.metrics) to the drift's windows
// (wins[i] covers [start + i·width, start + (i+1)·width)): each window's sum
// and count, for the fit of memory_slope over the windows' means — none when
// fewer than three windows, or fewer than half of them, hold a sample. It
// returns the drift's notes on them (samples that failed, lines that did not
// decode) and sets why memory_slope has no data when it will have none.
func (a *analyzer) targetMemory(wins []driftWin, width time.Duration) []string {
	src := a.meta.TargetMemory
	if src == nil {
		if a.meta.Target == "embedded" {
			a.s.memoryNoData = "the embedded simulator shares msgload's process: the target's memory is not sampled"
		} else {
			a.s.memoryNoData = "the scenario names no target.metrics: the target's memory is not sampled"
		}
		return nil
	}
	var taken, failed, bad int64
	var lastErr string
	err := readJSONLFunc(a.fsys, rundir.TargetMemoryFile, func(b []byte, m *rundir.MemorySample) error { return json.Unmarshal(b, m) }, func(m rundir.MemorySample) error {
		taken++
		if m.Bytes == nil {
			failed++
			lastErr = m.Error
			return nil
		}
		if !sane(m.At) || m.At.Before(a.start) {
			return nil
		}
		i := int(m.At.Sub(a.start) / width)
		if i >= len(wins) {
			return nil // after the last whole window
		}
		wins[i].memSum += *m.Bytes
		wins[i].memN++
		return nil
	}, func(int, error) { bad++ })
	var notes []string
	if err != nil { // a missing file reads as empty: no sample, said below
		notes = append(notes, fmt.Sprintf("target memory: %s cannot be read: %v", rundir.TargetMemoryFile, err))
		a.s.memoryNoData = fmt.Sprintf("%s cannot be read: %v", rundir.TargetMemoryFile, err)
		return notes
	}
	if taken == 0 && bad == 0 {
		a.s.memoryNoData = fmt.Sprintf("no sample of the target's memory (%s) in %s", src.Metric, rundir.TargetMemoryFile)
	}
	if failed > 0 {
		notes = append(notes, fmt.Sprintf("target memory: %d of %d samples of %s at %s failed (missing, not 0 bytes; the last: %s)", failed, taken, src.Metric, src.URL, lastErr))
	}
	if bad > 0 {
		notes = append(notes, fmt.Sprintf("target memory: %d lines of %s did not decode", bad, rundir.TargetMemoryFile))
	}
	with := 0
	for i := range wins {
		if wins[i].memN > 0 {
			with++
		}
	}
	if (with < 3 || 2*with < len(wins)) && a.s.memoryNoData == "" {
		// A gate does not pass on a slope of a few minutes of the run: the
		// windows missing are missing, not flat.
		a.s.memoryNoData = fmt.Sprintf("the target's memory was read in %d of %d windows (%d of %d samples failed): a slope needs three and at least half of them", with, len(wins), failed, taken)
		for i := range wins {
			wins[i].memN, wins[i].memSum = 0, 0
		}
	}
	return notes
}
