package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestStartProfiles: MSGLOAD_CPUPROFILE and MSGLOAD_MEMPROFILE write the
// process's profiles (gzipped pprof protobufs) when stop is called; unset,
// nothing is written; an unwritable path is said on stderr, not fatal.
func TestStartProfiles(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{
		"MSGLOAD_CPUPROFILE": filepath.Join(dir, "cpu.prof"),
		"MSGLOAD_MEMPROFILE": filepath.Join(dir, "mem.prof"),
	}
	var stderr bytes.Buffer
	stop := startProfiles(func(k string) string { return env[k] }, &stderr)
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
	if !bytes.Contains(stderr.Bytes(), []byte("MSGLOAD_CPUPROFILE")) || !bytes.Contains(stderr.Bytes(), []byte("MSGLOAD_MEMPROFILE")) {
		t.Errorf("an unwritable path is not reported: %q", stderr.String())
	}
}
