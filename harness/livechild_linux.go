package harness

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// liveChildAttr kills a live analysis when the thread that started it, and
// so the run's process, dies (PR_SET_PDEATHSIG): a killed run leaves no
// analysis reading its directory.
func liveChildAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// runNiced runs start (a child's Start and Wait) on an OS thread of its own
// set to niceness nice (never above the calling thread's), so that the child
// takes that niceness from its first instruction: a new process takes the
// niceness of the thread that forked it. Else its first ~10 ms — the
// program's start, every package's init, reading its request — ran at the
// run's own priority beside the attack, before lowerPriority. The thread is
// kept until the child ended (PR_SET_PDEATHSIG is sent when the thread that
// started the child ends, not the process) and then discarded: the goroutine
// returns without unlocking it, since its niceness cannot be lowered back
// without a privilege.
func runNiced(nice int, start func() error) error {
	nice = max(nice, niceness())
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		syscall.Setpriority(syscall.PRIO_PROCESS, 0, nice) // this thread alone (Linux)
		errc <- start()
	}()
	return <-errc
}

// liveExecutable is the program a live analysis runs: /proc/self/exe, the
// run's own executable as it was started — still itself if the file was
// replaced (an upgrade) or removed while the run goes, where its path would
// name another program or none.
func liveExecutable() (string, error) {
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		return os.Executable()
	}
	return self, nil
}

// lowerPriority sets every thread of this process to niceness nice. On Linux
// the niceness is a thread's own, and a new thread takes its creator's: the
// threads the runtime started before this are set one by one, again until
// no new one appeared.
func lowerPriority(nice int) {
	nice = max(nice, niceness()) // never above the priority it was started with
	seen := map[int]bool{}
	for range 5 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			syscall.Setpriority(syscall.PRIO_PROCESS, 0, nice)
			return
		}
		fresh := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || seen[tid] {
				continue
			}
			seen[tid], fresh = true, true
			syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
		}
		if !fresh {
			return
		}
	}
}

// niceness is the calling thread's niceness (the kernel's getpriority
// answers 20 less it).
func niceness() int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return 0
	}
	return 20 - p
}
