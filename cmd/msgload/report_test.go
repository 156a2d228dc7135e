package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// copySample copies the committed sample run into a temporary directory.
func copySample(t *testing.T) string {
	t.Helper()
	src := filepath.Join("..", "..", "reports", "testdata", "runs", "sample")
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readVerdict(t *testing.T, dir string) (string, bool) {
	t.Helper()
	var s struct {
		OK      bool   `json:"ok"`
		Verdict string `json:"verdict"`
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil || json.Unmarshal(b, &s) != nil {
		t.Fatalf("summary.json: %v", err)
	}
	return s.Verdict, s.OK
}

// msgload report exits by the verdict: a missing attempts.jsonl is an error
// (1), an interrupted run is incomplete (3: nothing is interrupted now), never PASS with 0 requests.
func TestReportExitsByVerdict(t *testing.T) {
	t.Run("no attempts.jsonl", func(t *testing.T) {
		dir := copySample(t)
		os.Remove(filepath.Join(dir, rundir.AttemptsFile))
		code, stdout, stderr := runProgram(t, nil, nil, "report", dir)
		if code != exitThresholds || !strings.Contains(stderr, "verdict ERROR") || !strings.Contains(stderr, "attempts.jsonl is missing") {
			t.Errorf("exit %d, want %d with the reason\nstdout:\n%s\nstderr:\n%s", code, exitThresholds, stdout, stderr)
		}
		if !strings.Contains(stdout, ": ERROR\n") {
			t.Errorf("terminal summary does not say ERROR:\n%s", stdout)
		}
		if v, ok := readVerdict(t, dir); v != "error" || ok {
			t.Errorf("summary.json verdict %q ok %v, want error, false", v, ok)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		dir := copySample(t)
		meta := mustRead(t, filepath.Join(dir, rundir.MetaFile))
		meta = strings.Replace(meta, `"version": "test",`, `"version": "test", "interrupted": true,`, 1)
		os.WriteFile(filepath.Join(dir, rundir.MetaFile), []byte(meta), 0o644)
		code, stdout, stderr := runProgram(t, nil, nil, "report", dir)
		// The run was interrupted then, nothing is now: the verdict's code, not 130.
		if code != exitIncomplete || !strings.Contains(stderr, "verdict INCOMPLETE") {
			t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitIncomplete, stdout, stderr)
		}
		if v, ok := readVerdict(t, dir); v != "incomplete" || ok {
			t.Errorf("summary.json verdict %q ok %v, want incomplete, false", v, ok)
		}
		for _, f := range []string{rundir.HTMLFile, rundir.JUnitFile} {
			if b := mustRead(t, filepath.Join(dir, f)); !strings.Contains(b, "INCOMPLETE") {
				t.Errorf("%s does not say INCOMPLETE", f)
			}
		}
	})
	t.Run("complete sample with a failing threshold", func(t *testing.T) {
		dir := copySample(t)
		code, _, stderr := runProgram(t, nil, nil, "report", dir)
		if code != exitThresholds || !strings.Contains(stderr, "verdict FAIL") {
			t.Errorf("exit %d, want %d\nstderr:\n%s", code, exitThresholds, stderr)
		}
	})
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A run with parts: msgload report rebuilds every part and writes the whole
// run's summary.json (kind run, the worst part's verdict), report.html,
// report.md and junit.xml (one suite per part) at the top, and ends with the
// one-line verdict; compare reads the whole run part by part.
func TestReportWholeRun(t *testing.T) {
	dir := t.TempDir()
	for _, part := range []string{"part-b", "part-a"} {
		src := copySample(t)
		if err := os.Rename(src, filepath.Join(dir, part)); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, rundir.ScenarioFile), []byte("name: two\ndescription: two parts\nparts:\n  - name: part-b\n  - name: part-a\n"), 0o644)
	code, stdout, stderr := runProgram(t, nil, nil, "report", dir)
	if code != exitThresholds || !strings.Contains(stderr, "verdict FAIL") {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitThresholds, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if want := "two: FAIL (0 of 2 parts) — " + filepath.Join(dir, rundir.HTMLFile); lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
	var whole struct {
		Kind    string `json:"kind"`
		Verdict string `json:"verdict"`
		Parts   []struct {
			Name, Dir, Verdict string
		} `json:"parts"`
	}
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(dir, rundir.SummaryFile))), &whole); err != nil {
		t.Fatal(err)
	}
	if whole.Kind != "run" || whole.Verdict != "fail" || len(whole.Parts) != 2 || whole.Parts[0].Dir != "part-b" || whole.Parts[1].Name != "part-a" || whole.Parts[1].Verdict != "fail" {
		t.Errorf("whole summary.json %+v", whole)
	}
	if j := mustRead(t, filepath.Join(dir, rundir.JUnitFile)); strings.Count(j, "<testsuite ") != 2 {
		t.Errorf("junit.xml wants one suite per part:\n%s", j)
	}
	for _, f := range []string{rundir.HTMLFile, rundir.MarkdownFile} {
		if b := mustRead(t, filepath.Join(dir, f)); !strings.Contains(b, "part-a") || !strings.Contains(b, "part-b") || !strings.Contains(b, "FAIL") {
			t.Errorf("%s does not show the parts and the verdict", f)
		}
	}
	for _, part := range []string{"part-a", "part-b"} {
		if v, _ := readVerdict(t, filepath.Join(dir, part)); v != "fail" {
			t.Errorf("%s verdict %q", part, v)
		}
	}
	for _, arg := range []string{dir, filepath.Join(dir, rundir.SummaryFile)} {
		code, stdout, stderr = runProgram(t, nil, nil, "compare", arg, arg)
		if code != exitOK || !strings.Contains(stdout, "part-a") || !strings.Contains(stdout, "part-b") {
			t.Errorf("compare of a whole run with itself (%s): exit %d\n%s\n%s", arg, code, stdout, stderr)
		}
	}
}
