package rundir

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A line longer than MaxLineBytes is a bad line (ErrLineTooLong), counted
// and skipped; the lines around it are read. Before, it was gathered whole
// (a 200 MB line cost gigabytes) and reported as a JSON error.
func TestDecodeJSONLSkipsTooLongLine(t *testing.T) {
	var in bytes.Buffer
	in.WriteString(`{"seq":1}` + "\n")
	in.WriteString(`{"seq":2,"x":"` + strings.Repeat("a", MaxLineBytes) + `"}` + "\n")
	in.WriteString(`{"seq":3}` + "\n")
	in.WriteString(strings.Repeat("b", MaxLineBytes+1)) // no newline: a file cut short
	var seqs []int
	var bad []int
	err := DecodeJSONL(&in, func(v struct{ Seq int }) error { seqs = append(seqs, v.Seq); return nil },
		func(line int, err error) {
			if !errors.Is(err, ErrLineTooLong) {
				t.Errorf("line %d: %v, want ErrLineTooLong", line, err)
			}
			bad = append(bad, line)
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 2 || seqs[0] != 1 || seqs[1] != 3 {
		t.Fatalf("decoded %v, want [1 3]", seqs)
	}
	if len(bad) != 2 || bad[0] != 2 || bad[1] != 4 {
		t.Fatalf("bad lines %v, want [2 4]", bad)
	}
}

// Readers of whole files refuse what is not a regular file before opening it
// (a FIFO blocks at open) and stop at their bound.
func TestReadFileBounds(t *testing.T) {
	dir := t.TempDir()
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadFile("/dev/zero", MaxDocBytes); !errors.Is(err, ErrNotRegular) {
			t.Errorf("/dev/zero: %v, want ErrNotRegular", err)
		}
		if err := ReadJSONL(filepath.Join("/dev/zero"), func(struct{}) error { return nil }, nil); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadJSONL /dev/zero: %v, want ErrNotRegular", err)
		}
	}
	big := filepath.Join(dir, "secret")
	os.WriteFile(big, bytes.Repeat([]byte("s"), MaxSecretBytes+1), 0o600)
	_, err := ReadSecretFile(big)
	if !errors.Is(err, ErrTooLarge) || strings.Contains(err.Error(), "sss") {
		t.Errorf("big secret: %v, want ErrTooLarge without its content", err)
	}
	os.WriteFile(big, []byte("tok\n"), 0o600)
	if b, err := ReadSecretFile(big); err != nil || string(b) != "tok\n" {
		t.Errorf("secret: %q, %v", b, err)
	}
}
