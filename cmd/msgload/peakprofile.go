package main

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// heapPeak writes the heap profile while the process runs, each time the
// live heap (as the last GC found it) has grown a quarter over the one last
// written: MSGLOAD_MEMPROFILE=FILE's profile at exit shows what stayed live
// when the run was over, FILE.peak what was live near its peak — what a soak's
// peak RSS is made of (issue 23).
type heapPeak struct {
	path   string
	stderr io.Writer
	last   uint64 // live heap bytes at the last profile written
	failed bool   // a write failed: said once, not retried
}

// watchHeapPeak samples the live heap every interval until stop is closed.
func watchHeapPeak(path string, stderr io.Writer, interval time.Duration, stop <-chan struct{}) {
	p := &heapPeak{path: path, stderr: stderr}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			p.check(sample[0].Value.Uint64())
		}
	}
}

// check writes the profile when live has grown a quarter over the last one
// written (the first at 4 MiB), and reports whether it did.
func (p *heapPeak) check(live uint64) bool {
	if p.failed || live < 4<<20 || live < p.last+p.last/4 {
		return false
	}
	tmp := p.path + ".tmp"
	f, err := os.Create(tmp)
	if err == nil {
		err = pprof.Lookup("heap").WriteTo(f, 0)
		err = firstErr(err, f.Close())
	}
	if err == nil {
		err = os.Rename(tmp, p.path)
	}
	if err != nil {
		fmt.Fprintln(p.stderr, "msgload: MSGLOAD_MEMPROFILE peak:", err)
		p.failed = true
		return false
	}
	p.last = live
	return true
}
