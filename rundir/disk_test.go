package rundir

import (
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// FreeBytes is the space stat(1) says is available to a user on the
// directory's file system (%a blocks of %S bytes), within what other
// writers on the machine change between the two looks.
func TestFreeBytesIsStats(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("stat -f -c is GNU coreutils'")
	}
	dir := t.TempDir()
	got, err := FreeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("stat", "-f", "-c", "%a %S", dir).Output()
	if err != nil {
		t.Skipf("stat -f: %v", err)
	}
	f := strings.Fields(string(out))
	blocks, err1 := strconv.ParseUint(f[0], 10, 64)
	size, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("stat -f said %q", out)
	}
	want := blocks * size
	const slack = 64 << 20
	if got+slack < want || want+slack < got {
		t.Errorf("FreeBytes(%s) = %d, stat -f says %d", dir, got, want)
	}
	if _, err := FreeBytes(dir + "/not-there"); err == nil {
		t.Error("FreeBytes of a path that does not exist: no error")
	}
}
