package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 13: 40 KB of nested flow sequences cost the parser 670 MB. It is
// refused before parsing, at once, with file:line:col.
func TestLoadRefusesDeepNesting(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		// flow sequences: the mapping is level 1, the first [ level 2, the 32nd [ level 33
		{"flow", "name: x\nload: " + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + "\n", ":2:38: nested more than 32 levels deep"},
		// block mappings, one more space each line
		{"block", func() string {
			var b strings.Builder
			for i := range 100 {
				b.WriteString(strings.Repeat(" ", i) + "a:\n")
			}
			return b.String()
		}(), ":33:33: nested more than 32 levels deep"},
		// a flat list of 200 000 entries
		{"nodes", "name: [" + strings.Repeat("1,", 200_000) + "1]\n", ":1:100005: more than 100000 nodes"},
		// ${VAR} values that make the text too long
		{"expanded", "name: a ${BIG}\n", ":1:1: after ${VAR} expansion: larger than 1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "deep.yaml")
			if err := os.WriteFile(path, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := Load(path, env(map[string]string{"BIG": strings.Repeat("x", maxFileSize)}))
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), path+tc.want) {
				t.Fatalf("got %v, want %s%s", err, path, tc.want)
			}
		})
	}
}

// /dev/zero (size 0, endless) is refused as not a regular file before it is
// read; the size bound counts bytes read, not the stat size.
func TestLoadStopsAtByteBound(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	_, err := Load("/dev/zero", env(nil))
	if !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), "/dev/zero: not a regular file") {
		t.Fatalf("got %v", err)
	}
	// a file one byte over is refused the same way, one at the bound is parsed
	dir := t.TempDir()
	over := filepath.Join(dir, "over.yaml")
	body := "api: notify\nload: { rate: 1/s, requests: 3 }\n#"
	if err := os.WriteFile(over, []byte(body+strings.Repeat("x", maxFileSize-len(body)+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(over, env(nil)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("one byte over: %v", err)
	}
	at := filepath.Join(dir, "at.yaml")
	if err := os.WriteFile(at, []byte(body+strings.Repeat("x", maxFileSize-len(body))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(at, env(nil)); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
}

// Issue 13: the YAML parser reads invalid UTF-8 as U+FFFD, so a name with it
// passed. It is refused at its place, naming the field.
func TestInvalidUTF8Refused(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"plain name", "name: ab\xffc\napi: notify\nload: { rate: 1/s, requests: 3 }\n", "f.yaml:1:9: name: not valid UTF-8"},
		{"quoted name", "api: notify\nname: \"é\xfe\"\nload: { rate: 1/s, requests: 3 }\n", "f.yaml:2:9: name: not valid UTF-8"},
		{"message text", "api: notify\nload: { rate: 1/s, requests: 3 }\nmessage: { text: \"hi \xff\" }\n", "f.yaml:3:22: message.text: not valid UTF-8"},
		// from a ${VAR}: at the ${
		{"from the environment", "api: notify\nname: x-${BAD}\nload: { rate: 1/s, requests: 3 }\n", "f.yaml:2:9: name: not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.yaml", "", []byte(tc.src), env(map[string]string{"BAD": "\xff"}))
			if !errors.Is(err, errInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
		})
	}
}
