package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --disk-reserve reads sizes in SI and binary units; 0 is none (the
// harness's negative), and what is not a size is refused.
func TestDiskReserveFlag(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"256MiB", 256 << 20, false},
		{"2GB", 2_000_000_000, false},
		{"1.5 GiB", 3 << 29, false},
		{"1048576", 1 << 20, false},
		{"0", -1, false},
		{"0MiB", -1, false},
		{"lots", 0, true},
		{"-5MB", 0, true},
		{"", 0, true},
		{"10EB", 0, true}, // past int64
		{"9EB", 9_000_000_000_000_000_000, false},
	} {
		got, err := diskReserve(tt.in)
		if (err != nil) != tt.bad || !tt.bad && got != tt.want {
			t.Errorf("diskReserve(%q) = %d, %v; want %d (bad %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// msgload run on a disk with less free than --disk-reserve exits 3 (the
// environment's: incomplete, not bad input), says why, and makes no run
// directory; a reserve that is no size is bad input (2).
func TestRunRefusedOnAFullDisk(t *testing.T) {
	out := filepath.Join(t.TempDir(), "runs")
	run := func(args ...string) (int, string) {
		var o, e bytes.Buffer
		g := &globalState{stdout: &o, stderr: &e, getenv: func(string) string { return "" },
			signals: func() (<-chan os.Signal, func()) { return make(chan os.Signal), func() {} }}
		return g.run(context.Background(), append([]string{"msgload", "run", "smoke", "--out", out, "--metrics-addr", ""}, args...)), e.String()
	}
	code, stderr := run("--disk-reserve", "4EiB")
	if code != exitIncomplete || !strings.Contains(stderr, "disk reserve") || !strings.Contains(stderr, "less than the 4.0 EiB the run keeps free") {
		t.Errorf("exit %d, stderr %q; want 3 and the disk named", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s made for a run refused: %v", out, err)
	}
	if code, stderr := run("--disk-reserve", "lots"); code != exitBadInput || !strings.Contains(stderr, `--disk-reserve "lots"`) {
		t.Errorf("exit %d, stderr %q; want 2 naming the flag", code, stderr)
	}
}
