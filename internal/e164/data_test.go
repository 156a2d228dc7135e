package e164

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTablesAreTheLibrarys: the two tables embedded here are the files of the
// phonenumbers version go.mod pins, byte for byte — so a bump of that version
// (the library stays the tests' reference) fails here until the copies are
// refreshed with it, and the binary never answers from older data than the
// tests compare against.
func TestTablesAreTheLibrarys(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/nyaruka/phonenumbers").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/nyaruka/phonenumbers: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	for _, name := range []string{"countrycode_to_region.xml.gz", "prefix_to_timezone.xml.gz"} {
		lib, err := os.ReadFile(filepath.Join(dir, "data", name))
		if err != nil {
			t.Fatalf("the pinned library's %s: %v", name, err)
		}
		ours, err := os.ReadFile(filepath.Join("data", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(lib, ours) {
			t.Errorf("data/%s differs from %s: copy the library's file (cp %s data/)", name, dir, filepath.Join(dir, "data", name))
		}
	}
}
