package harness

import (
	"strconv"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// TestTallyHoldsFewSettled: against a real target the tally remembered every
// id the service answered (a map entry of ~40 bytes a message, up to 170 MB)
// and every sequence (another map entry) for the whole run (issue 23). A
// message whose final status came no longer needs its ids: what is held
// grows with the messages still waiting, plus a byte a sequence. The counts
// and the wait's end are as before: untagged finals are joined by txId.
func TestTallyHoldsFewSettled(t *testing.T) {
	const n, flying = 100_000, 500
	tl := newTally("r1", "a")
	final := func(seq int64) {
		tx := "tx-" + strconv.FormatInt(seq, 10)
		if seq%2 == 0 { // untagged: joined by its txId
			tl.event(&rundir.Event{Kind: rundir.KindCallback, Corr: &rundir.Correlation{Key: tx, State: rundir.StateDelivered, Channel: "sms"}})
			return
		}
		tl.event(&rundir.Event{Kind: rundir.KindCallback, Corr: &rundir.Correlation{Run: "r1", Part: "a", Seq: seq, Key: tx, State: rundir.StateDelivered, Channel: "sms"}})
	}
	for seq := int64(1); seq <= n; seq++ {
		tl.attempt(&rundir.Attempt{Seq: seq, Op: "send", Code: 200, TxID: "tx-" + strconv.FormatInt(seq, 10)})
		if seq > flying {
			final(seq - flying)
		}
	}
	if a, d := tl.counts(); a != n || d != n-flying || tl.complete() {
		t.Fatalf("accepted %d done %d complete %v, want %d %d false", a, d, tl.complete(), n, n-flying)
	}
	ids, seqBytes := tl.held()
	if ids > 4*flying+minSweep || seqBytes > n+2*tallyPage {
		t.Errorf("held %d ids and %d bytes of sequences after %d messages, %d waiting: want at most %d ids and %d bytes",
			ids, seqBytes, n, flying, 4*flying+minSweep, n+2*tallyPage)
	}
	for seq := int64(n - flying + 1); seq <= n; seq++ {
		final(seq)
	}
	if a, d := tl.counts(); a != n || d != n || !tl.complete() {
		t.Fatalf("at the end: accepted %d done %d complete %v, want %d %d true", a, d, tl.complete(), n, n)
	}
}

// held is what the tally holds: ids indexed and bytes of sequence pages.
func (t *tally) held() (ids, seqBytes int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ids), len(t.msgs) * tallyPage
}
