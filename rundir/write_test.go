package rundir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFileReplacesWholeOwnerOnly: WriteFile replaces a file whole, with
// FileMode whatever the old file's mode was, and leaves no temporary file.
func TestWriteFileReplacesWholeOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, SummaryFile)
	if err := os.WriteFile(p, []byte("an older, longer content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "new\n" {
		t.Fatalf("read %q, %v", b, err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != FileMode {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), FileMode)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the directory, want the file alone", len(ents))
	}
}

// TestAtomicFileAbortKeepsOld: an aborted write leaves the old file and no
// temporary one; Commit after Abort is refused.
func TestAtomicFileAbortKeepsOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, EventsFile)
	if err := WriteFile(p, []byte("old\n")); err != nil {
		t.Fatal(err)
	}
	f, err := CreateAtomic(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half of a new file")
	f.Abort()
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("after Abort the file holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the directory, want the file alone", len(ents))
	}
}

func TestDirBatchSyncsOnceForItsFiles(t *testing.T) {
	dir := t.TempDir()
	b := NewDirBatch(dir)
	before := DirSyncs()
	for _, name := range []string{"a.json", "b.json"} {
		if err := b.WriteFile(name, []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	if n := DirSyncs() - before; n != 0 {
		t.Errorf("%d directory syncs before Sync, want none", n)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := DirSyncs() - before; n != 1 {
		t.Errorf("%d directory syncs for the batch, want 1 (a second Sync with nothing new makes none)", n)
	}
	for _, name := range []string{"a.json", "b.json"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != name {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
}
