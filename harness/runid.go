package harness

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
)

// NewRunID names a run: UTC start time, the scenario's name and six random hex
// digits, e.g. 20261123T020000Z-smoke-1a2b3c. It is safe in a path and in a
// correlation tag (rundir.ValidRunID).
func NewRunID(scenario string, now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := sanitize(scenario)
	if name == "" {
		name = "run"
	}
	return now.UTC().Format("20060102T150405Z") + "-" + name + "-" + hex.EncodeToString(b[:])
}

// sanitize keeps [A-Za-z0-9_-] and at most 32 characters, turning anything else into '-'.
func sanitize(s string) string {
	var sb strings.Builder
	for _, r := range s {
		if sb.Len() >= 32 {
			break
		}
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	return strings.Trim(sb.String(), "-")
}
