package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
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

// TestRunDirectoryFileModes runs both APIs briefly against the embedded
// simulator and sink and checks the mode of every file the run wrote: each
// is rundir.FileMode (owner only: they hold recipients, texts and settings),
// whoever wrote it (harness, attack, sink, simulator, reports).
func TestRunDirectoryFileModes(t *testing.T) {
	src := `name: modes
target: embedded
parts:
  - name: n
    api: notify
    load: { rate: 20/s, requests: 5 }
    message: { recipient: "+7999{0000000-0000999}", text: "hello {{.Seq}}" }
    delivery: { grace: 5s }
  - name: m
    api: messaging
    load: { rate: 20/s, requests: 5 }
    message: { recipient: "+7999{0000000-0000999}", text: "hello {{.Seq}}" }
    delivery: { grace: 5s }
`
	s, err := scenarios.Parse("modes.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(res.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(res.Dir, path)
		if d.IsDir() {
			if fi.Mode().Perm()&0o022 != 0 {
				t.Errorf("directory %s: mode %v, writable by others", rel, fi.Mode().Perm())
			}
			return nil
		}
		seen[d.Name()] = true
		if fi.Mode().Perm() != rundir.FileMode {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode().Perm(), rundir.FileMode)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{rundir.ScenarioFile, rundir.MetaFile, rundir.AttemptsFile, rundir.ResultsFile, rundir.EventsFile,
		rundir.TruthStreamFile, rundir.SummaryFile, rundir.HTMLFile, rundir.MarkdownFile, rundir.JUnitFile, rundir.LostFile} {
		if !seen[name] {
			t.Errorf("the run wrote no %s: its mode went untested", name)
		}
	}
}
