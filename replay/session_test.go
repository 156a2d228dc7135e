package replay

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

func TestSessionEmbedded(t *testing.T) {
	s, err := sim.New(sim.DefaultConfig(), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	simSrv := httptest.NewServer(s.Handler())
	defer simSrv.Close()
	defer s.Close()
	const n = 5
	path := recordAgainstSim(t, simSrv.URL, n)

	var log bytes.Buffer
	out := t.TempDir()
	res, err := Session(t.Context(), SessionOptions{File: path, Speed: 5, Out: out, RunID: "sess-1", Grace: 10 * time.Second, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if res.Dir != filepath.Join(out, "sess-1") {
		t.Errorf("dir %s", res.Dir)
	}
	// Against the embedded simulator every replayed request gets its recorded answer.
	if res.Report.Sent != 2*n || res.Report.Matching != 2*n {
		t.Errorf("report %+v", res.Report)
	}
	for _, f := range []string{rundir.MetaFile, rundir.AttemptsFile, rundir.ResultsFile, rundir.EventsFile, rundir.TruthFile, ReplayFile, rundir.SummaryFile} {
		if st, err := os.Stat(filepath.Join(res.Dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	if res.Summary == nil {
		t.Fatalf("no summary: %v", res.SummaryErr)
	}
	// The callbacks of the replayed messaging sends reached the embedded sink and matched the run.
	matched := 0
	rundir.ReadJSONL(filepath.Join(res.Dir, rundir.EventsFile), func(e rundir.Event) error {
		if e.Corr != nil && e.Corr.Matched && e.Corr.Run == "sess-1" {
			matched++
		}
		return nil
	}, nil)
	if matched == 0 {
		t.Errorf("no event matched the run; log:\n%s", log.String())
	}
	// A second replay into the same directory is refused, never mixed.
	if _, err := Session(t.Context(), SessionOptions{File: path, Out: out, RunID: "sess-1"}); err == nil {
		t.Error("run directory reused")
	}
}
