package harness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// liveParentEnv makes TestLiveChildDiesWithTheRun's helper process a run's
// process that starts a live analysis and waits (the test kills it).
const liveParentEnv = "MSGLOAD_TEST_LIVE_PARENT"

// TestLiveChildDiesWithTheRun: a run's process killed (kill -9) while its
// live analysis runs leaves no analysis behind: the child gets the
// parent-death signal (Linux). The helper is this test binary run again as
// the run's process; its live analysis a script that writes its pid and
// sleeps.
func TestLiveChildDiesWithTheRun(t *testing.T) {
	if dir := os.Getenv(liveParentEnv); dir != "" {
		runLiveChild(context.Background(), filepath.Join(dir, "slow"), liveRequest{Dir: dir})
		os.Exit(0)
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	script := "#!/bin/sh\necho $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile + "\nexec sleep 60\n"
	if err := os.WriteFile(filepath.Join(dir, "slow"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("no executable: %v", err)
	}
	parent := exec.Command(exe, "-test.run=^TestLiveChildDiesWithTheRun$")
	parent.Env = append(os.Environ(), liveParentEnv+"="+dir)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			parent.Process.Kill()
			t.Fatal("the live analysis never started")
		}
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the live analysis %d is not running: %v", pid, err)
	}
	parent.Process.Kill() // kill -9 of the run
	parent.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the live analysis %d outlived its run's process by 10 s", pid)
		}
	}
}

// alive says whether process pid runs (a zombie, dead but not reaped by
// whoever adopted it, does not).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// A live analysis never runs at a higher priority than the run that started
// it: under `nice -n 17`, a judgement (15 otherwise) stays at 17.
func TestLiveAnalysisNeverAboveTheRun(t *testing.T) {
	exe, dir := liveChildOfThisTest(t)
	// The run at niceness 17: this goroutine's thread, as every thread of a
	// run started by nice -n 17 is. Not unlocked: the thread is discarded
	// when the test's goroutine ends (its niceness cannot go back down).
	runtime.LockOSThread()
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, 0, 17); err != nil {
		t.Skipf("setpriority: %v", err)
	}
	reply, err := runLiveChild(context.Background(), exe, liveRequest{Dir: dir, Via: "sink", Thresholds: []string{"requests.messages >= 0"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := max(17, niceness()); reply.Nice != want || reply.StartedNice != want {
		t.Errorf("the judgement of a run at niceness 17 started at %d and ran at %d, want %d", reply.StartedNice, reply.Nice, want)
	}
}

// TestLiveChildStartsNiced: a live analysis is at its niceness from its
// first instruction (runNiced), not only once it lowered its own priority;
// the run's threads keep theirs.
func TestLiveChildStartsNiced(t *testing.T) {
	exe, dir := liveChildOfThisTest(t)
	own := niceness()
	for _, checkpoint := range []bool{false, true} {
		req := liveRequest{Dir: dir, Via: "sink", Thresholds: []string{"requests.messages >= 0"}, Checkpoint: checkpoint}
		reply, err := runLiveChild(context.Background(), exe, req)
		if err != nil {
			t.Fatal(err)
		}
		if want := max(niceFor(req), own); reply.StartedNice != want || reply.Nice != want {
			t.Errorf("checkpoint %v: the analysis started at niceness %d and ran at %d, want %d from its start", checkpoint, reply.StartedNice, reply.Nice, want)
		}
	}
	var threads []int
	for range 20 { // the runtime's threads, this one among them
		done := make(chan int)
		go func() { done <- niceness() }()
		threads = append(threads, <-done)
	}
	if n := niceness(); n != own || slices.ContainsFunc(threads, func(v int) bool { return v != own }) {
		t.Errorf("the run's threads went from niceness %d to %d (and %v): only the child's should change", own, n, threads)
	}
}
