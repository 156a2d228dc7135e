package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// TestTruthReadAllocatesLittle: reading truth.jsonl allocates about what
// the analysis keeps of a line — a call's or message's id, the tag — not a
// record, its steps and every string (issue 23: encoding/json's reflection
// was about 70 % of the garbage of `msgload report` on a run with callbacks
// and a truth: the collector's work and its headroom).
func TestTruthReadAllocatesLittle(t *testing.T) {
	const n = 2_000
	var b strings.Builder
	b.WriteString(`{"type":"rate_limit","rate_limit":{"requests":100,"window":"1m0s","algorithm":"sliding"}}` + "\n")
	for i := range n {
		id := fmt.Sprintf("f2c2fb56-28bd-4039-a65e-%012d", i)
		fmt.Fprintf(&b, `{"type":"callback","callback":{"id":"%s","kind":"callback","state":"DELIVERED","channel":"sms","action":"sent","attempt":1,"at":"2026-11-26T16:28:55.523137774Z","done":"2026-11-26T16:28:55.527039438Z","status":200,"due":"2026-11-26T16:28:55.522423527Z"}}`+"\n", id)
		fmt.Fprintf(&b, `{"type":"message","message":{"api":"messaging","id":"%s","external_id":"20261126T162855Z-cb1000-930b12.%d","client":"demo","accepted_at":"2026-11-26T16:28:55.497800083Z","sends":1,"steps":[{"channel":"viber","state":"EXPIRED","code":0,"delay":"1.5s"},{"channel":"sms","state":"DELIVERED","code":0,"delay":"24.970273ms"}],"final":"DELIVERED"}}`+"\n", id, i+1)
	}
	b.WriteString(`{"type":"end"}` + "\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, rundir.TruthStreamFile), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	a := &analyzer{fsys: os.DirFS(dir)}
	lines := 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ok, err := a.readTruth(func(rec *rundir.TruthRecord) error { lines++; return nil })
	runtime.ReadMemStats(&after)
	if !ok || err != nil || lines != 2*n+2 {
		t.Fatalf("read %d lines (%v, %v): want %d", lines, ok, err, 2*n+2)
	}
	// The ids: 48 bytes each (36, rounded up to a size class), a message's
	// two and a call's one; the line reader's buffer (64 KiB) once.
	perLine := float64(after.TotalAlloc-before.TotalAlloc-1<<16) / float64(2*n)
	if perLine > 100 {
		t.Errorf("reading truth.jsonl allocated %.0f bytes a line: want at most 100 (the ids)", perLine)
	}
}
