package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"time"
)

// startProfiles starts the whole process's profiles that the environment asks
// for — MSGLOAD_CPUPROFILE=FILE (CPU, from start to exit) and
// MSGLOAD_MEMPROFILE=FILE (the heap profile at exit, after a GC: its
// inuse_space is what stayed live, alloc_space everything allocated; and,
// while the process runs, FILE.peak: the heap near its peak, see heapPeak)
// and MSGLOAD_TRACE=FILE (the runtime's execution trace, from start to exit:
// `go tool trace FILE`; what ran when a goroutine waited for a core, which is
// where a send due was late) — and returns the function that writes them.
// They are a debugging aid for the whole `msgload run` (attack/README.md,
// Benchmark: the whole msgload run), not a flag: a profile of the attack
// path alone is benchload's -cpuprofile.
func startProfiles(getenv func(string) string, stderr io.Writer) (stop func()) {
	var cpu *os.File
	if p := getenv("MSGLOAD_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(stderr, "msgload: MSGLOAD_CPUPROFILE:", err)
		} else {
			cpu = f
		}
	}
	var tr *os.File
	if p := getenv("MSGLOAD_TRACE"); p != "" {
		f, err := os.Create(p)
		if err == nil {
			if err = trace.Start(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "msgload: MSGLOAD_TRACE:", err)
		} else {
			tr = f
		}
	}
	mem := getenv("MSGLOAD_MEMPROFILE")
	stopPeak := make(chan struct{})
	if mem != "" {
		runtime.MemProfileRate = 64 << 10 // finer than the default 512 KiB, for short runs
		go watchHeapPeak(mem+".peak", stderr, 2*time.Second, stopPeak)
	}
	return func() {
		close(stopPeak)
		if cpu != nil {
			pprof.StopCPUProfile()
			cpu.Close()
		}
		if tr != nil {
			trace.Stop()
			if err := tr.Close(); err != nil {
				fmt.Fprintln(stderr, "msgload: MSGLOAD_TRACE:", err)
			}
		}
		if mem == "" {
			return
		}
		f, err := os.Create(mem)
		if err == nil {
			runtime.GC()
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			err = firstErr(err, f.Close())
		}
		if err != nil {
			fmt.Fprintln(stderr, "msgload: MSGLOAD_MEMPROFILE:", err)
		}
	}
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
