package attack

import (
	"context"
	"encoding/json"
	"fmt"
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
