package main

import "testing"

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
