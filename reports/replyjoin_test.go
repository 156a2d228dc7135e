package reports

import (
	"bytes"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// genReplies is genStream with delivery via (retries up to 1) and incoming
// replies quoting the id the service answered: one to most accepted
// messages 1–3 s after the send, two to a few, one quoting an id never
// answered now and then; events.jsonl in arrival order, as the sink writes
// it. A few ids are answered to two messages (genStream): the reply joins
// the last attempt answered with it, as in one pass.
func genReplies(n int, seed uint64, via string) *run {
	r := genStream(n, seed, via, 1)
	rng := rand.New(rand.NewPCG(seed, 29))
	for _, a := range r.attempts {
		if a.TxID == "" || rng.IntN(10) == 0 {
			continue
		}
		sec := a.Sent.Sub(t0).Seconds() + 1 + 2*rng.Float64()
		id := a.TxID
		if rng.IntN(200) == 0 {
			id = "tx-never-" + itoa(a.Seq)
		}
		for range 1 + rng.IntN(30)/29 {
			r.events = append(r.events, rundir.Event{Kind: rundir.KindIncoming, Route: "/incoming", ReceivedAt: at(sec), API: rundir.APIMessaging,
				Corr: &rundir.Correlation{Key: "in-" + itoa(a.Seq), Channel: "sms", OutgoingTxID: id, Matched: true}})
			sec += 0.5
		}
	}
	slices.SortStableFunc(r.events, func(x, y rundir.Event) int { return x.ReceivedAt.Compare(y.ReceivedAt) })
	return r
}

// TestBoundedRepliesHoldNoIDs: a run with incoming replies analysed in
// passes holds no map of the ids answered (needKeys: an entry a replied
// message, 18 M in an hour's soak): the ids and the replies are spilled to
// disk, sorted and merge-joined; and its summary.json is the one-pass
// analysis's to the byte, its spills in memory or in sorted runs on disk.
func TestBoundedRepliesHoldNoIDs(t *testing.T) {
	dir := genReplies(10_000, 17, "sink").write(t)
	if !twoPasses(os.DirFS(dir)) {
		t.Fatal("a run with replies is not analysed in passes")
	}
	st := passState(t, dir)
	st.sent = sentSpill(os.DirFS(dir), st.census)
	defer st.closeSent()
	a, err := analyzeOnce(os.DirFS(dir), dir, false, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.needKeys) != 0 || a.s.Incoming.Replies == 0 {
		t.Errorf("%d ids held for %d replies: want none held", len(a.needKeys), a.s.Incoming.Replies)
	}
	once, err := analyzeOnce(os.DirFS(dir), dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := marshalled(t, once.s)
	defer func(n int) { spillChunk = n }(spillChunk)
	for _, chunk := range []int{spillChunk, 1000} {
		spillChunk = chunk
		got, err := AnalyzeFS(os.DirFS(dir), dir)
		if err != nil {
			t.Fatal(err)
		}
		if g := marshalled(t, got); !bytes.Equal(g, want) {
			t.Errorf("spill chunk %d: summary.json differs from the one-pass analysis's: %s", chunk, firstDiff(g, want))
		}
	}
}

// TestBoundedPollRepliesAgree: a run with delivery via poll and incoming
// replies, analysed in passes, counts its replies as one pass does (the
// census read no event of a polled run, so the replies found no landed
// message to join: incoming.replies 0).
func TestBoundedPollRepliesAgree(t *testing.T) {
	dir := genReplies(3_000, 19, "poll").write(t)
	if !twoPasses(os.DirFS(dir)) {
		t.Fatal("a polled run is not analysed in passes")
	}
	once, err := analyzeOnce(os.DirFS(dir), dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := AnalyzeFS(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	if once.s.Incoming.Replies == 0 || got.Incoming.Replies != once.s.Incoming.Replies {
		t.Errorf("%d replies in passes, %d in one pass: want the same, not 0", got.Incoming.Replies, once.s.Incoming.Replies)
	}
	if g, want := marshalled(t, got), marshalled(t, once.s); !bytes.Equal(g, want) {
		t.Errorf("summary.json differs from the one-pass analysis's: %s", firstDiff(g, want))
	}
}
