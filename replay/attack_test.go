package replay

import (
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

// TestForAttackThroughAttacker replays a recording through the attack package
// (as the harness does for load.profile: replay) and builds replay.json from
// the attempts: recorded codes come back, the client map is honoured and kept
// externalIds are sent.
func TestForAttackThroughAttacker(t *testing.T) {
	s, err := sim.New(sim.DefaultConfig(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	defer s.Close()
	const n = 6
	reqs, err := Load(recordAgainstSim(t, srv.URL, n), FormatMsgload)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ForAttack(reqs, apiNotify, []string{"demo-3", "demo-4"}, AttackRewrite{ExternalIDs: ExternalIDsKeep}, 10)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rec, err := attack.NewRecorder(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = attack.Run(t.Context(), attack.Options{
		API: rundir.APINotify, BaseURL: srv.URL, TokenURL: srv.URL + "/oauth/token",
		Clients: []attack.Client{{ID: "demo-3", Secret: "demo"}, {ID: "demo-4", Secret: "demo"}},
		Pacer:   plan.Pacer, Requests: plan.Requests, Body: plan.Body, ClientFor: plan.ClientFor,
		RunID: "atk-1", Out: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, rundir.AttemptsFile)
	rep, err := plan.Report("atk-1", 10, path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != n || rep.Matching != n || len(rep.Codes) != 1 || rep.Codes[0] != (codeRow{API: apiNotify, Recorded: 200, Replayed: 200, Count: n}) {
		t.Errorf("report %+v", rep)
	}
	// One recorded client (demo-1) maps onto the first scenario client.
	rundir.ReadJSONL(path, func(a rundir.Attempt) error {
		if a.Op == OpSend && (a.Client != "demo-3" || a.ExternalID != plan.Sends[a.Seq-1].ExternalID) {
			t.Errorf("attempt %+v", a)
		}
		return nil
	}, nil)
	if rep.Lateness.Hits != n {
		t.Errorf("lateness %+v", rep.Lateness)
	}
}
