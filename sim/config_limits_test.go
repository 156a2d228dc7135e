package sim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 13: nested YAML cost the parser memory quadratic in its depth, and
// LoadConfig read /dev/zero until memory ran out. Both are refused at a
// bound, with file:line:col where there is a place.
func TestLoadConfigBounds(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, src, want string
	}{
		// 40 KB of nested flow sequences under a key: refused at level 33
		{"flow", "faults: " + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + "\n", ":1:40: nested more than 32 levels deep"},
		// block mappings, one more space a line
		{"block", func() string {
			var b strings.Builder
			for i := range 100 {
				b.WriteString(strings.Repeat(" ", i) + "a:\n")
			}
			return b.String()
		}(), ":33:33: nested more than 32 levels deep"},
		// a flat list of 200 000 entries
		{"nodes", "seed: [" + strings.Repeat("1,", 200_000) + "1]\n", ":1:100005: more than 100000 nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".yaml")
			if err := os.WriteFile(path, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := LoadConfig(path)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), path+tc.want) {
				t.Fatalf("got %v, want %s%s", err, path, tc.want)
			}
		})
	}
	if _, err := ParseConfig("c.yaml", []byte("messaging:\n  accounts:\n    - login: d\xffmo\n")); err == nil ||
		!strings.Contains(err.Error(), "c.yaml:3:15: not valid UTF-8") {
		t.Fatalf("invalid UTF-8: %v", err)
	}
	// an answer delayed past the server's write timeout would be cut: refused
	if _, err := ParseConfig("c.yaml", []byte("faults:\n  latency: 55s\n")); err == nil ||
		!strings.Contains(err.Error(), "c.yaml:2:12: faults.latency: 0 to 50s") {
		t.Fatalf("latency past the write timeout: %v", err)
	}
	if _, err := ParseConfig("c.yaml", []byte("faults:\n  latency: 50s\n")); err != nil {
		t.Fatalf("latency at the bound: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := LoadConfig("/dev/zero")
		if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), "/dev/zero: not a regular file") {
			t.Fatalf("/dev/zero: %v", err)
		}
	}
}
