package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestStartProfiles: MSGLOAD_CPUPROFILE and MSGLOAD_MEMPROFILE write the
// process's profiles (gzipped pprof protobufs) when stop is called, and
// MSGLOAD_TRACE its execution trace (the runtime's header first); unset,
// nothing is written; an unwritable path is said on stderr, not fatal.
func TestStartProfiles(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"MSGLOAD_CPUPROFILE": filepath.Join(dir, "cpu.prof"),
		"MSGLOAD_MEMPROFILE": filepath.Join(dir, "mem.prof"),
	}
	tracePath := filepath.Join(dir, "trace.out")
	var stderr bytes.Buffer
	stop := startProfiles(func(k string) string {
		if k == "MSGLOAD_TRACE" {
			return tracePath
		}
		return env[k]
	}, &stderr)
	var sink [][]byte
	for range 1000 {
		sink = append(sink, make([]byte, 1024))
	}
	_ = sink
	stop()
	for _, p := range env {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: not a gzipped profile (%d bytes)", p, len(b))
		}
	}
	if b, err := os.ReadFile(tracePath); err != nil {
		t.Fatal(err)
	} else if !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b[:16], []byte(" trace")) {
		t.Errorf("%s: not an execution trace: %q…", tracePath, b[:min(len(b), 16)])
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %s", stderr.String())
	}

	stop = startProfiles(func(string) string { return "" }, &stderr)
	stop()
	if stderr.Len() != 0 {
		t.Errorf("unset: stderr %s", stderr.String())
	}

	bad := filepath.Join(dir, "no", "such", "dir", "p")
	stop = startProfiles(func(string) string { return bad }, &stderr)
	stop()
	if !bytes.Contains(stderr.Bytes(), []byte("MSGLOAD_CPUPROFILE")) || !bytes.Contains(stderr.Bytes(), []byte("MSGLOAD_MEMPROFILE")) ||
		!bytes.Contains(stderr.Bytes(), []byte("MSGLOAD_TRACE")) {
		t.Errorf("an unwritable path is not reported: %q", stderr.String())
	}
}

// TestHeapPeak: the peak profile is written when the live heap first passes
// 4 MiB and then only when it has grown a quarter over the last written; an
// unwritable path is said once on stderr.
func TestHeapPeak(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mem.prof.peak")
	var stderr bytes.Buffer
	p := &heapPeak{path: path, stderr: &stderr}
	steps := []struct {
		live  uint64
		wrote bool
	}{{1 << 20, false}, {8 << 20, true}, {9 << 20, false}, {10 << 20, true}, {4 << 20, false}, {13 << 20, true}}
	for _, s := range steps {
		if got := p.check(s.live); got != s.wrote {
			t.Errorf("live %d: wrote %v, want %v", s.live, got, s.wrote)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("peak profile: %d bytes, %v", len(b), err)
	}
	bad := &heapPeak{path: filepath.Join(t.TempDir(), "no", "dir", "p"), stderr: &stderr}
	bad.check(8 << 20)
	bad.check(64 << 20)
	if n := bytes.Count(stderr.Bytes(), []byte("MSGLOAD_MEMPROFILE peak")); n != 1 {
		t.Errorf("unwritable path said %d times, want once: %q", n, stderr.String())
	}
}
