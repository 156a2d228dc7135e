package rundir

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Bounds on what msgload reads from outside into memory. A run directory, a
// sink log or a secret file is input: a FIFO never ends, /dev/zero has no
// newline, and a hand-made file may hold one 200 MB line. Every reader of such
// input goes through the helpers below, so none of them buffers more than
// these many bytes of one file or one line.
const (
	// MaxLineBytes is the longest JSON line read from a .jsonl file (an event
	// holds a body of up to the sink's --max-body, 1 MiB by default, that JSON
	// escaping may grow several times). A longer line is a bad line.
	MaxLineBytes = 16 << 20
	// MaxDocBytes is the largest JSON or YAML document of a run directory read
	// whole (run.json, summary.json, replay.json, scenario.yaml).
	MaxDocBytes = 64 << 20
	// MaxTruthBytes is the largest truth.json read whole (older runs; new runs
	// stream their truth into truth.jsonl, read line by line).
	MaxTruthBytes = 512 << 20
	// MaxSecretBytes is the largest secret file (a token, a password, a
	// shared secret).
	MaxSecretBytes = 8 << 10
)

// ErrNotRegular is returned for an input that is not a regular file (a FIFO,
// a device, a socket): reading it may never end, so it is refused before it is
// opened.
var ErrNotRegular = errors.New("not a regular file (a FIFO, device or socket is refused)")

// ErrTooLarge is returned for a file larger than the bound its reader allows.
var ErrTooLarge = errors.New("file too large")

// ErrLineTooLong is reported (as a bad line) for a JSON line longer than
// MaxLineBytes; the line is skipped without being buffered whole.
var ErrLineTooLong = fmt.Errorf("line longer than %d bytes", MaxLineBytes)

// checkRegular refuses anything but a regular file or a directory.
func checkRegular(name string, st fs.FileInfo) error {
	if st.Mode().IsRegular() || st.IsDir() {
		return nil
	}
	return fmt.Errorf("%s: %w", name, ErrNotRegular)
}

// OpenRegularFS opens name in fsys once it has checked (following symlinks)
// that it is a regular file: opening a FIFO would block until a writer comes.
func OpenRegularFS(fsys fs.FS, name string) (fs.File, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(name, st); err != nil {
		return nil, err
	}
	return fsys.Open(name)
}

// OpenRegular is OpenRegularFS on a path of the operating system.
func OpenRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, st); err != nil {
		return nil, err
	}
	return os.Open(path)
}

// ReadFileFS reads name in fsys whole, refusing a file that is not regular or
// holds more than max bytes (at most max+1 are read, whatever its stat says).
func ReadFileFS(fsys fs.FS, name string, max int64) ([]byte, error) {
	f, err := OpenRegularFS(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, name, max)
}

// ReadFile is ReadFileFS on a path of the operating system.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAtMost(f, path, max)
}

// ReadSecretFile reads a secret file (at most MaxSecretBytes, a regular
// file). Errors name the file, never its content.
func ReadSecretFile(path string) ([]byte, error) {
	return ReadFile(path, MaxSecretBytes)
}

func readAtMost(r io.Reader, name string, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: %w: more than %d bytes (reading stopped there)", filepath.Base(name), ErrTooLarge, max)
	}
	return b, nil
}
