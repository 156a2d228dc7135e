package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestCreateRunDirNeverReuses(t *testing.T) {
	out := filepath.Join(t.TempDir(), "runs") // missing parent is created
	dir, err := createRunDir(out, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("run directory not created: %v", err)
	}
	if _, err := createRunDir(out, "r1"); err == nil {
		t.Fatal("second createRunDir with the same id succeeded; runs would mix their files")
	}
}

func TestWriteJSONReplacesWhole(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.json")
	if err := writeJSON(p, map[string]any{"a": 1, "long": "xxxxxxxxxxxxxxxx"}); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(p, map[string]any{"a": 2}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("file is not one JSON document after a rewrite: %v\n%s", err, b)
	}
	if got["a"] != float64(2) || len(got) != 1 {
		t.Fatalf("got %v, want only a=2", got)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".run.json.*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
}
