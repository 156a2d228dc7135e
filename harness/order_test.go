package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// reorderSource is sms(SEEN) → vkok against the embedded simulator with half
// the callbacks held back (200 ms, so a later one overtakes them) and a fifth
// sent twice; a quarter of the sends are processed and answered 500, so the
// retry makes a second txId for the message and it is delivered twice
// (idempotency.duplicate_deliveries). sms delivers at once but is never SEEN: after the 1 s ttl it
// reports EXPIRED and vkok delivers — and vkok's records carry no channel
// (vkok is not in the status record's enum).
const reorderSource = `
name: reorder
api: messaging
target: embedded
sink: embedded
load: { profile: constant, rate: 20/s, requests: 40 }
message:
  recipient: "+7999{0000000-0000999}"
  text: "reorder {{.Seq}}"
  scenario:
    - { channel: sms, sender: msgload, failover: { ttl: 1, condition_status: SEEN } }
    - { channel: vkok, sender: msgload }
delivery: { via: sink, grace: 10s }
retry: { on: [500], max: 2, backoff: 100ms }
sim:
  seed: 21
  faults: { processedThen500: 25% }
  profiles:
    sms: { median: 20ms, p95: 60ms, outcomes: { DELIVERED: 100% } }
    vkok: { median: 20ms, p95: 60ms, outcomes: { DELIVERED: 100% } }
  callbacks: { reorder: 50%, duplicate: 20% }
`

// TestReorderedChannellessRecords: with callbacks reordered, lost and
// duplicates equal the simulator's truth (issue 21 item 4: a record without a
// channel was put on the item the message was on when it arrived — lost 4 and
// 8 duplicates against 0 and 0). MSGLOAD_ORDER_OUT=DIR keeps the run directory
// (reports/testdata/runs/reorder is one).
func TestReorderedChannellessRecords(t *testing.T) {
	p, stderr := runSource(t, "reorder.yaml", t.TempDir(), reorderSource)
	if p.Err != nil || p.Summary == nil {
		t.Fatalf("run: %v\n%s", p.Err, stderr)
	}
	if keep := os.Getenv("MSGLOAD_ORDER_OUT"); keep != "" {
		if err := os.CopyFS(keep, os.DirFS(p.Dir)); err != nil {
			t.Fatal(err)
		}
	}
	if n := overtaken(t, p.Dir); n == 0 {
		t.Fatal("no vkok record arrived before its message's sms EXPIRED: the run did not exercise reordering")
	} else {
		t.Logf("%d messages with vkok's record before sms's EXPIRED", n)
	}
	s, tr := p.Summary, p.Summary.Truth
	if tr == nil || tr.Agrees == nil {
		t.Fatalf("no truth comparison: %+v", tr)
	}
	d := s.Delivery
	if d.Lost < tr.ExpectedLostMin || d.Lost > tr.ExpectedLost {
		t.Errorf("lost %d, true %d to %d", d.Lost, tr.ExpectedLostMin, tr.ExpectedLost)
	}
	if d.Duplicates < tr.ExpectedDuplicates || d.Duplicates > tr.ExpectedDuplicatesMax {
		t.Errorf("duplicates %d, true %d to %d", d.Duplicates, tr.ExpectedDuplicates, tr.ExpectedDuplicatesMax)
	}
	if s.Idempotency.DuplicateDeliveries == 0 {
		t.Error("no duplicate delivery: the run did not exercise a message ended under two txIds")
	}
	if !*tr.Agrees {
		t.Errorf("truth disagrees: %q", tr.Disagreements)
	}
}

// overtaken counts the messages of the run whose record without a channel
// arrived before their sms EXPIRED.
func overtaken(t *testing.T, dir string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, rundir.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	expired, channelless := map[int64]int64{}, map[int64]int64{}
	err = rundir.DecodeJSONLFunc(f, func(b []byte, e *rundir.Event) error { return json.Unmarshal(b, e) }, func(e rundir.Event) error {
		c := e.Corr
		if c == nil || e.Kind != rundir.KindCallback {
			return nil
		}
		at := e.ReceivedAt.UnixNano()
		switch {
		case c.Channel == "" && (channelless[c.Seq] == 0 || at < channelless[c.Seq]):
			channelless[c.Seq] = at
		case c.Channel == rundir.ChannelSMS && c.State == rundir.StateExpired:
			expired[c.Seq] = max(expired[c.Seq], at)
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for seq, at := range channelless {
		if at < expired[seq] {
			n++
		}
	}
	return n
}
