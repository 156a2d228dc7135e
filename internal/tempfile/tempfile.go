package tempfile

import "os"

// Unlinked is os.CreateTemp(dir, pattern) removed from its directory at
// once: an open file no name leads to. On a system that cannot remove an
// open file (Windows) it fails.
func Unlinked(dir, pattern string) (*os.File, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
