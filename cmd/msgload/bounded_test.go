package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

// boundedArgsEnv carries the arguments of msgload to TestBoundedProcess;
// boundedCapEnv its memory cap in bytes.
const (
	boundedArgsEnv = "MSGLOAD_TEST_BOUNDED_ARGS"
	boundedCapEnv  = "MSGLOAD_TEST_BOUNDED_CAP"
	exitOverCap    = 99 // the process went over its memory cap
)

// TestBoundedProcess is not a test: it is the msgload process that
// TestNoReaderIsUnbounded starts (this test binary, run again) under a hard
// memory cap: past the cap it exits exitOverCap at once.
func TestBoundedProcess(t *testing.T) {
	js := os.Getenv(boundedArgsEnv)
	if js == "" {
		t.Skip("the msgload process of TestNoReaderIsUnbounded")
	}
	var args []string
	if err := json.Unmarshal([]byte(js), &args); err != nil {
		t.Fatal(err)
	}
	limit, _ := strconv.ParseUint(os.Getenv(boundedCapEnv), 10, 64)
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > limit {
				fmt.Fprintf(os.Stderr, "memory cap: %d bytes in use\n", m.HeapAlloc)
				os.Exit(exitOverCap)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	os.Args = append([]string{"msgload"}, args...)
	main() // exits
}

// TestNoReaderIsUnbounded runs every command of msgload that reads outside
// input on /dev/zero (or a FIFO), itself or a symlink to it inside a run
// directory, each in a subprocess with a hard memory cap: each ends (in far
// less than its deadline, which only stops a hang) under the cap, saying which
// file it refused. Before, report/compare/merge read /dev/zero until memory
// ran out, secret files were read whole, and validate of a FIFO never ended.
func TestNoReaderIsUnbounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	zeroIn := func(name string) func(t *testing.T) string { // a sample run with name → /dev/zero
		return func(t *testing.T) string {
			dir := copySampleRun(t, t.TempDir())
			link(t, filepath.Join(dir, name))
			return dir
		}
	}
	cases := []struct {
		name string
		args func(t *testing.T) []string
		want string // in stdout+stderr or the summary written
	}{
		{"report attempts", func(t *testing.T) []string { return []string{"report", zeroIn(rundir.AttemptsFile)(t)} }, "not a regular file"},
		{"report events", func(t *testing.T) []string { return []string{"report", zeroIn(rundir.EventsFile)(t)} }, "not a regular file"},
		{"report run.json", func(t *testing.T) []string { return []string{"report", zeroIn(rundir.MetaFile)(t)} }, "not a regular file"},
		{"report truth.json", func(t *testing.T) []string { return []string{"report", zeroIn(rundir.TruthFile)(t)} }, "not a regular file"},
		{"compare summary.json", func(t *testing.T) []string {
			a, b := zeroIn(rundir.SummaryFile)(t), zeroIn(rundir.SummaryFile)(t)
			return []string{"compare", a, b}
		}, "not a regular file"},
		{"report --merge attempts", func(t *testing.T) []string {
			sh := shardOf(t, zeroIn(rundir.AttemptsFile)(t))
			return []string{"report", "--merge", filepath.Join(t.TempDir(), "out"), sh}
		}, "not a regular file"},
		{"report --merge --sink-log", func(t *testing.T) []string {
			sh := shardOf(t, copySampleRun(t, t.TempDir()))
			return []string{"report", "--merge", filepath.Join(t.TempDir(), "out"), "--sink-log", "/dev/zero", sh}
		}, "not a regular file"},
		{"sink --read-token-file", func(t *testing.T) []string {
			return []string{"sink", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--read-token-file", "/dev/zero"}
		}, "not a regular file"},
		{"sink --basic-password-file", func(t *testing.T) []string {
			return []string{"sink", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--basic-password-file", "/dev/zero"}
		}, "not a regular file"},
		{"sink --hmac-secret-file", func(t *testing.T) []string {
			return []string{"sink", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--hmac-secret-file", "/dev/zero"}
		}, "not a regular file"},
		{"sim --signing-secret-file", func(t *testing.T) []string {
			return []string{"sim", "--addr", "127.0.0.1:0", "--signing-secret-file", "/dev/zero"}
		}, "not a regular file"},
		{"validate /dev/zero", func(t *testing.T) []string { return []string{"validate", "/dev/zero"} }, "not a regular file"},
		{"validate FIFO", func(t *testing.T) []string {
			p := filepath.Join(t.TempDir(), "scenario.yaml")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skip("no FIFO:", err)
			}
			return []string{"validate", p}
		}, "not a regular file"},
	}
	const memCap = 256 << 20
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args(t)
			code, out := runBounded(t, memCap, args)
			if code == exitOverCap {
				t.Fatalf("msgload %v went over %d bytes of memory:\n%s", args, memCap, out)
			}
			if code == -1 {
				t.Fatalf("msgload %v did not end:\n%s", args, out)
			}
			if !strings.Contains(out, c.want) {
				t.Fatalf("msgload %v: exit %d, output does not say %q:\n%s", args, code, c.want, out)
			}
		})
	}
}

// runBounded runs msgload args in a subprocess capped at memCap bytes of heap
// and returns its exit code (-1 when it had not ended at a deadline that only
// catches a hang) and its output with every summary.json it wrote.
func runBounded(t *testing.T, memCap uint64, args []string) (int, string) {
	t.Helper()
	js, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBoundedProcess$")
	cmd.Env = append(os.Environ(), boundedArgsEnv+"="+string(js), boundedCapEnv+"="+strconv.FormatUint(memCap, 10))
	out, _ := cmd.CombinedOutput()
	text := string(out)
	for _, a := range args {
		if b, err := rundir.ReadFile(filepath.Join(a, rundir.SummaryFile), rundir.MaxDocBytes); err == nil {
			text += "\n" + string(b)
		}
	}
	if ctx.Err() != nil {
		return -1, text
	}
	return cmd.ProcessState.ExitCode(), text
}

// copySampleRun copies reports/testdata/runs/sample into dir.
func copySampleRun(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join("..", "..", "reports", "testdata", "runs", "sample")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// link makes path a symlink to /dev/zero.
func link(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Fatal(err)
	}
}

// shardOf makes the run directory dir the only shard of a sharded run and
// returns it. A run.json that is a symlink is left alone.
func shardOf(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, rundir.MetaFile)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["shard"] = rundir.Shard{Index: 0, Count: 1, By: rundir.ShardByClients, Clients: 2}
	b, _ = json.Marshal(m)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
