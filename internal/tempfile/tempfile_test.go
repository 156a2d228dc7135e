package tempfile

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// An unlinked file reads back what was written, and its directory holds
// nothing from the start.
func TestUnlinkedLeavesNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be removed on Windows")
	}
	dir := t.TempDir()
	f, err := Unlinked(dir, "x-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("spilled"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%s holds %v", dir, ents)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(f); err != nil || string(b) != "spilled" {
		t.Errorf("read back %q, %v", b, err)
	}
}

// A process killed with its spill open leaves nothing in its directory: the
// test runs itself as a child that makes the file, writes, and is killed.
func TestUnlinkedKilledLeavesNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be removed on Windows")
	}
	if dir := os.Getenv("TEMPFILE_CHILD_DIR"); dir != "" {
		f, err := Unlinked(dir, "child-*")
		if err != nil {
			os.Exit(2)
		}
		f.WriteString(strings.Repeat("x", 1<<20))
		os.Stdout.WriteString("ready\n")
		select {} // until killed
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestUnlinkedKilledLeavesNothing$")
	cmd.Env = append(os.Environ(), "TEMPFILE_CHILD_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "ready\n" {
		cmd.Process.Kill()
		t.Fatalf("child: %q %v", buf, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a killed process left %v in %s", ents, filepath.Base(dir))
	}
}
