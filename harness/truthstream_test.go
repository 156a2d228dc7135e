package harness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgload/msgload/reports"
	"github.com/msgload/msgload/rundir"
)

// truthStreamSource: a failover cascade with callbacks dropped, duplicated
// and reordered, so that the simulator's truth has messages with several
// calls in flight at once.
const truthStreamSource = `
name: truthstream
api: messaging
target: embedded
sink: embedded
load: { profile: constant, rate: 50/s, requests: 150 }
message:
  recipient: "+7999{0000000-0000999}"
  text: "truth {{.Seq}}"
  scenario:
    - { channel: viber, sender: msgload, failover: { ttl: 1, condition_status: DELIVERED } }
    - { channel: sms, sender: msgload }
delivery: { via: sink, grace: 5s }
sim:
  seed: 23
  callbacks: { drop: 5%, duplicate: 10%, reorder: 10% }
  profiles:
    viber: { median: 300ms, p95: 2s, outcomes: { DELIVERED: 60%, NOT_DELIVERED: 40% } }
    sms: { median: 200ms, p95: 1s, outcomes: { DELIVERED: 100% } }
`

// TestTruthStreamFreshRun: the embedded simulator streams its truth into the
// run directory (truth.jsonl, finished with its end record, each message's
// record after every call of its id), and the report's truth figures from
// truth.jsonl are those from truth.json (written beside it, the truth being
// small) — the differential test on a fresh run.
func TestTruthStreamFreshRun(t *testing.T) {
	p, stderr := runSource(t, "truthstream.yaml", t.TempDir(), truthStreamSource)
	if p.Err != nil || p.Summary == nil {
		t.Fatalf("run: %v\n%s", p.Err, stderr)
	}
	f, err := os.Open(filepath.Join(p.Dir, rundir.TruthStreamFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	written := map[string]bool{} // ids whose message record went out
	var late []string
	messages := 0
	err = rundir.DecodeTruthRecords(f, func(rec *rundir.TruthRecord) error {
		switch {
		case rec.Message != nil:
			written[rec.Message.ID] = true
			messages++
		case rec.Callback != nil && written[rec.Callback.ID]:
			late = append(late, rec.Callback.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", rundir.TruthStreamFile, err)
	}
	if len(late) > 0 {
		t.Errorf("%d calls recorded after their message's record (the reader would not join them): %v", len(late), late[:min(len(late), 5)])
	}
	if int64(messages) != p.Summary.Requests.Accepted && p.Summary.Truth != nil && !p.Summary.Truth.Truncated {
		t.Errorf("truth.jsonl has %d messages, the run %d accepted", messages, p.Summary.Requests.Accepted)
	}
	streamed := p.Summary.Truth
	if streamed == nil {
		t.Fatal("no truth section from truth.jsonl")
	}
	whole := t.TempDir()
	for _, name := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.EventsFile, rundir.TruthFile} {
		b, err := os.ReadFile(filepath.Join(p.Dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(whole, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := reports.Analyze(whole)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(streamed)
	b, _ := json.Marshal(s.Truth)
	if !bytes.Equal(a, b) {
		t.Fatalf("truth from truth.jsonl:\n%s\nfrom truth.json:\n%s", a, b)
	}
}
