package rundir

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
)

// FileMode is the mode of every file msgload writes in a run directory:
// readable by its owner only. Most of them hold recipients or message texts
// (attempts.jsonl, events.jsonl, the truth, the reports' message tables) or
// the scenario's settings, and one mode for all of them leaves nothing to get
// wrong file by file.
const FileMode fs.FileMode = 0o600

// DirMode is the mode of a run directory and of the directories msgload makes
// to hold one (its files are FileMode, so listing them shows names only).
const DirMode fs.FileMode = 0o755

// Create opens a new file at path for writing as the run goes (a log appended
// to, not replaced): mode FileMode, never an existing file.
func Create(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
}

// AtomicFile is a file written in place of path: a reader, or a crash, sees
// the old file (or none) until Commit, then the whole new one.
type AtomicFile struct {
	*os.File
	path string
	done bool
}

// CreateAtomic starts writing path: a temporary file beside it (so the rename
// stays on one file system) with mode FileMode.
func CreateAtomic(path string) (*AtomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := f.Chmod(FileMode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return &AtomicFile{File: f, path: path}, nil
}

// Commit makes the written bytes the file at path: the temporary file is
// synced, closed and renamed onto path, and the directory synced so the
// rename itself survives a crash. On an error nothing replaces path.
func (a *AtomicFile) Commit() error {
	if a.done {
		return fmt.Errorf("write %s: already committed or aborted", filepath.Base(a.path))
	}
	a.done = true
	if err := a.commitFile(); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(a.path)); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", filepath.Base(a.path), err)
	}
	return nil
}

// commitFile syncs, closes and renames the temporary file onto path: the
// bytes are on stable storage before the name points at them, so a crash
// leaves the old file or the whole new one; the rename itself is durable
// once the directory is synced (Commit, or a DirBatch's Sync).
func (a *AtomicFile) commitFile() error {
	err := a.File.Sync()
	if cerr := a.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.File.Name(), a.path)
	}
	if err != nil {
		os.Remove(a.File.Name())
		return fmt.Errorf("write %s: %w", filepath.Base(a.path), err)
	}
	return nil
}

// Abort drops the temporary file; path is left as it was. After Commit it
// does nothing, so it can be deferred.
func (a *AtomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.File.Close()
	os.Remove(a.File.Name())
}

// WriteFile writes data to path atomically: a batch of one file (DirBatch).
func WriteFile(path string, data []byte) error {
	b := NewDirBatch(filepath.Dir(path))
	if err := b.WriteFile(filepath.Base(path), data); err != nil {
		return err
	}
	return b.Sync()
}

// DirBatch writes several files into one directory, each whole or not at
// all as WriteFile does, and syncs the directory once, in Sync, instead of
// after every rename: the files are acknowledged together (a report's
// summary.json, charts and renderings are read once the build returns), so
// one directory sync makes every rename durable before that. Each file's own
// bytes are still synced before its rename.
type DirBatch struct {
	dir     string
	pending string // the last file renamed in and not yet covered by a directory sync ("" none)
}

// NewDirBatch starts a batch of files written into dir.
func NewDirBatch(dir string) *DirBatch { return &DirBatch{dir: dir} }

// WriteFile writes data to name in the batch's directory atomically; the
// rename is durable after Sync.
func (b *DirBatch) WriteFile(name string, data []byte) error {
	f, err := CreateAtomic(filepath.Join(b.dir, name))
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	f.done = true
	if err := f.commitFile(); err != nil {
		return err
	}
	b.pending = name
	return nil
}

// Sync makes every rename of the batch durable: one directory sync, none
// when nothing was written since the last.
func (b *DirBatch) Sync() error {
	if b.pending == "" {
		return nil
	}
	if err := syncDir(b.dir); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", b.pending, err)
	}
	b.pending = ""
	return nil
}

// dirSyncs counts the directory syncs this process made (DirSyncs).
var dirSyncs atomic.Int64

// DirSyncs is how many directory syncs this process has made: tests count
// them to check that a batch of files costs one.
func DirSyncs() int64 { return dirSyncs.Load() }

// syncDir flushes a directory's entries (a rename into it) to stable storage.
func syncDir(dir string) error {
	dirSyncs.Add(1)
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
