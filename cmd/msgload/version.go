package main

import (
	"runtime/debug"
	"strings"
)

// commit and commitDate are set by `make build` (-ldflags "-X main.commit=…
// -X main.commitDate=…") for builds the Go toolchain stamps with no VCS
// information (GOFLAGS=-buildvcs=false, a source tarball); what the toolchain
// stamped wins.
var commit, commitDate string

// version is what --version prints after "msgload version ", and what run.json
// records: the module version, then the commit and its date when known,
// "v1.2.0 (commit 0123456789ab, 2026-11-23T13:00:00Z)".
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi, commit, commitDate)
}

func versionOf(bi *debug.BuildInfo, commit, date string) string {
	v, rev, at := vcsOf(bi, commit, date)
	if h, dirty := strings.CutSuffix(rev, "+dirty"); len(h) > 12 {
		rev = h[:12] // the short form; "+dirty" kept
		if dirty {
			rev += "+dirty"
		}
	}
	var about []string
	if rev != "" {
		about = append(about, "commit "+rev)
	}
	if at != "" {
		about = append(about, at)
	}
	if len(about) > 0 {
		v += " (" + strings.Join(about, ", ") + ")"
	}
	return v
}

// vcsOf reads the module version, the VCS revision ("+dirty" when the work
// tree was modified) and its time from the build information; what the
// toolchain did not stamp comes from commit and date (make build's -X).
func vcsOf(bi *debug.BuildInfo, commit, date string) (v, rev, at string) {
	dirty := false
	if bi != nil {
		v = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev != "" && dirty {
		rev += "+dirty"
	}
	if rev == "" {
		rev = commit
	}
	if at == "" {
		at = date
	}
	if v == "" {
		v = "(devel)"
	}
	return v, rev, at
}
