package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/msgload/msgload/rundir"
)

// createRunDir makes out/id, and out when missing. An existing run directory is
// never reused: two runs must not mix their files.
func createRunDir(out, id string) (string, error) {
	if err := os.MkdirAll(out, rundir.DirMode); err != nil {
		return "", fmt.Errorf("create output directory: %w", err)
	}
	dir := filepath.Join(out, id)
	if err := os.Mkdir(dir, rundir.DirMode); err != nil {
		return "", fmt.Errorf("create run directory: %w", err)
	}
	return dir, nil
}

// writeJSON writes v as indented JSON, atomically.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return rundir.WriteFile(path, append(b, '\n'))
}
