package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	stamped := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-23T13:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	tests := []struct {
		name         string
		bi           *debug.BuildInfo
		commit, date string
		want         string
	}{
		// The toolchain stamped the commit: version, short commit, dirty, date.
		{"stamped", stamped, "", "", "v1.2.0 (commit 0123456789ab+dirty, 2026-11-23T13:00:00Z)"},
		// What the toolchain stamped wins over the Makefile's.
		{"stamped wins", stamped, "fedcba987654", "2020-01-01T00:00:00Z", "v1.2.0 (commit 0123456789ab+dirty, 2026-11-23T13:00:00Z)"},
		// -buildvcs=false: the Makefile's -X values.
		{"ldflags", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "fedcba987654", "2026-11-22T10:00:00+00:00", "(devel) (commit fedcba987654, 2026-11-22T10:00:00+00:00)"},
		// Nothing known: the module version alone.
		{"bare", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "", "", "(devel)"},
		// No build information at all.
		{"none", nil, "", "", "(devel)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionOf(tt.bi, tt.commit, tt.date); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
