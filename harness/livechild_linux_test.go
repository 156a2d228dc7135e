package harness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
