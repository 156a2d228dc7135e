package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// In-flight copies go with the first send and are compared with its id;
// the changed-body resend keeps the externalId, sends another text, and its
// other notificationId is recorded, never a mismatch. Against a service
// that forgets every externalId: each copy mismatches, the changed body not.
func TestProbeInFlightAndChangedBody(t *testing.T) {
	f := newFakeService(t)
	f.forgetExt = true // forget every externalId: each copy a new id, a mismatch
	srv := httptest.NewServer(f)
	defer srv.Close()
	rec := &memRecorder{}
	res, err := Run(context.Background(), Options{
		API: rundir.APINotify, BaseURL: srv.URL, TokenURL: srv.URL + "/token", Clients: clients("c1"),
		Pacer: Constant(vegeta.Rate{Freq: 200, Per: time.Second}), Requests: 2,
		Body: func(seq int64, _ string, tag rundir.Tag) ([]byte, error) {
			return json.Marshal(map[string]any{"externalId": tag.ExternalID(), "notificationText": fmt.Sprint("hello ", seq)})
		}, RunID: "r", Out: rec, Probes: 1, ProbeConcurrency: 1, ProbeInFlight: 2, ProbeChangedBody: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	// 2 messages × (2 in flight + 1 sequential + 1 concurrent + 1 changed).
	if res.Probes != 10 || res.Mismatches != 8 {
		t.Fatalf("probes %d mismatches %d, want 10 and 8", res.Probes, res.Mismatches)
	}
	kinds := map[string]int{}
	nums := map[[2]int64]bool{}
	for _, a := range rec.ops(OpSend) {
		kinds[a.Probe]++
		k := [2]int64{a.Seq, int64(a.Attempt)}
		if nums[k] {
			t.Errorf("seq %d: attempt %d twice", a.Seq, a.Attempt)
		}
		nums[k] = true
		if a.Probe == rundir.ProbeChangedBody && a.Mismatch {
			t.Errorf("a changed body flagged a mismatch: %+v", a)
		}
	}
	if kinds[rundir.ProbeInFlight] != 4 || kinds[rundir.ProbeChangedBody] != 2 || kinds[""] != 2 {
		t.Errorf("attempts by probe kind %v", kinds)
	}
	texts := map[string]map[any]bool{}
	for _, s := range f.sends {
		ext, _ := s.body["externalId"].(string)
		if texts[ext] == nil {
			texts[ext] = map[any]bool{}
		}
		texts[ext][s.body["notificationText"]] = true
	}
	if len(texts) != 2 {
		t.Fatalf("%d externalIds sent, want 2", len(texts))
	}
	for ext, ts := range texts {
		if len(ts) != 2 {
			t.Errorf("externalId %s: texts %v, want its own and the changed one", ext, ts)
		}
	}
}

// A copy in flight the service took first holds the key: the own send is
// the one answered 409 (the simulator's inFlight: "409"), and the message is
// still probed after the answer — its resends compared with the copy's id.
// Which of the three sends arrives first is the scheduler's: the service
// here answers the third arrival of each message, so the own send is
// refused in about two messages of three; before the probes followed only
// an accepted own send, 30 messages all probed was a 1 in 3^30 chance.
func TestProbeFollowsACopyThatTookTheKey(t *testing.T) {
	f := newFakeService(t)
	f.fail = func(_ int64, arrival int, _ *http.Request) int {
		if arrival <= 2 { // the first two of the own send and its 2 copies
			return 409
		}
		return 0
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	rec := &memRecorder{}
	const n = 30
	res, err := Run(context.Background(), Options{
		API: rundir.APINotify, BaseURL: srv.URL, TokenURL: srv.URL + "/token", Clients: clients("c1"),
		Pacer: Constant(vegeta.Rate{Freq: 200, Per: time.Second}), Requests: n,
		Body: func(seq int64, _ string, tag rundir.Tag) ([]byte, error) {
			return json.Marshal(map[string]any{"externalId": tag.ExternalID(), "notificationText": fmt.Sprint("hello ", seq)})
		}, RunID: "r", Out: rec, Probes: 1, ProbeConcurrency: 1, ProbeInFlight: 2, ProbeChangedBody: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mismatches != 0 {
		t.Errorf("%d mismatches: the resends were compared with another id than the key's", res.Mismatches)
	}
	type seen struct{ ownRefused, seq, changed bool }
	by := map[int64]*seen{}
	for _, a := range rec.ops(OpSend) {
		s := by[a.Seq]
		if s == nil {
			s = &seen{}
			by[a.Seq] = s
		}
		switch a.Probe {
		case "":
			s.ownRefused = a.Code == 409
		case probeSequential:
			s.seq = a.Code == 200
		case rundir.ProbeChangedBody:
			s.changed = true
		}
	}
	refused := 0
	for seq := int64(1); seq <= n; seq++ {
		s := by[seq]
		if s == nil || !s.seq || !s.changed {
			t.Errorf("message %d: %+v, want its sequential resend answered 200 and its changed body sent", seq, s)
			continue
		}
		if s.ownRefused {
			refused++
		}
	}
	t.Logf("%d of %d own sends refused 409 (a copy took the key)", refused, n)
}
