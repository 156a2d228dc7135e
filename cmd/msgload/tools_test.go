package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

// serveCommand starts a long-running command (record, sink) in-process and
// waits until addr accepts connections; stop interrupts it and returns its exit
// code and standard error.
func serveCommand(t *testing.T, env map[string]string, addr string, args ...string) (stop func() (int, string)) {
	t.Helper()
	sig := make(chan os.Signal, 1)
	type result struct {
		code   int
		stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, _, stderr := runProgram(t, env, sig, args...)
		done <- result{code, stderr}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		select {
		case r := <-done:
			t.Fatalf("%s ended before serving (exit %d): %s", args[0], r.code, r.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come up: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return func() (int, string) {
		sig <- syscall.SIGINT
		select {
		case r := <-done:
			return r.code, r.stderr
		case <-time.After(20 * time.Second):
			t.Fatalf("%s did not stop on interrupt", args[0])
			return -1, ""
		}
	}
}

// TestRecordReplayReportCompare walks the traffic-replay path a user takes:
// record notification traffic through the proxy in front of a service, replay
// the recording through a scenario against the embedded simulator, rebuild the
// reports of that run, and compare it with itself.
func TestRecordReplayReportCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a replay end to end")
	}
	sv, err := sim.New(sim.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	upstream := httptest.NewServer(sv.Handler())
	defer upstream.Close()
	defer sv.Close()

	dir := t.TempDir()
	recording := filepath.Join(dir, "traffic.jsonl")
	listen := testnet.FreeAddr(t)
	proxy := "http://" + listen
	stop := serveCommand(t, nil, listen, "record", "--listen", listen, "--upstream", upstream.URL, "--out", recording,
		"--redact-field", "*pin")

	// An application's traffic: a token, then five notifications, 100 ms apart.
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"demo-1"}, "client_secret": {"demo"}}
	resp, err := http.PostForm(proxy+"/oauth/token", form)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if tok.AccessToken == "" {
		t.Fatalf("no token through the proxy: %s", resp.Status)
	}
	const sends = 5
	for i := range sends {
		body := fmt.Sprintf(`{"recipient":{"value":"+7999123456%d"},"notificationText":"hello %d","externalId":"app-%d"}`, i, i, i)
		req, _ := http.NewRequest(http.MethodPost, proxy+"/api/v1/notifications", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", "ak-Secret-Api-Key") // a built-in pattern
		req.Header.Set("X-Pin", "pn-Secret-Pin")         // --redact-field
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("send %d through the proxy: %v %v", i, err, resp)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		time.Sleep(100 * time.Millisecond)
	}
	if code, stderr := stop(); code != exitOK || !strings.Contains(stderr, "exchanges written") {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	rec, err := os.ReadFile(recording)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{tok.AccessToken, "client_secret=", "Bearer ", "ak-Secret-Api-Key", "pn-Secret-Pin"} {
		if strings.Contains(string(rec), secret) {
			t.Fatalf("the recording holds a secret (%.20s…):\n%s", secret, rec)
		}
	}

	// Replay through a scenario: its clients, limit and thresholds.
	scenario := writeScenario(t, `name: replayed
api: notify
target: embedded
clients: 1
load: { rate: 1/s, requests: 1 } # replaced by the recording
limit: { rate: 100/1m, mode: respect }
delivery: { grace: 10s }
thresholds: [ "delivery.lost == 0", "requests.error_rate == 0" ]
`)
	runs := filepath.Join(dir, "runs")
	code, stdout, stderr := runProgram(t, nil, nil, "replay", "--scenario", scenario, "--speed", "2", "--out", runs, "--metrics-addr", "", recording)
	if code != exitOK {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	runDirs, _ := filepath.Glob(filepath.Join(runs, "*"))
	if len(runDirs) != 1 {
		t.Fatalf("run directories %v, want one", runDirs)
	}
	run := runDirs[0]
	var rep replay.Report
	b, err := os.ReadFile(filepath.Join(run, replay.ReplayFile))
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("replay.json: %v", err)
	}
	if rep.Planned != sends || rep.Sent != sends || rep.Matching != sends {
		t.Errorf("replay.json planned %d sent %d matching %d, want %d each", rep.Planned, rep.Sent, rep.Matching, sends)
	}
	if !strings.Contains(stdout, "delivered / accepted") || !strings.Contains(stdout, "run directory: "+run) {
		t.Errorf("replay printed no summary:\n%s", stdout)
	}

	// Rebuild the reports from the files alone: the same summary.
	before, _ := os.ReadFile(filepath.Join(run, rundir.SummaryFile))
	os.Remove(filepath.Join(run, rundir.HTMLFile))
	if code, out, errOut := runProgram(t, nil, nil, "report", "--quiet", run); code != exitOK {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errOut)
	}
	after, _ := os.ReadFile(filepath.Join(run, rundir.SummaryFile))
	if fi, err := os.Stat(filepath.Join(run, rundir.HTMLFile)); err != nil || fi.Size() == 0 {
		t.Errorf("report did not rebuild %s: %v", rundir.HTMLFile, err)
	}
	var s1, s2 map[string]any
	json.Unmarshal(before, &s1)
	json.Unmarshal(after, &s2)
	if fmt.Sprint(s1["delivery"]) != fmt.Sprint(s2["delivery"]) || fmt.Sprint(s1["requests"]) != fmt.Sprint(s2["requests"]) {
		t.Errorf("rebuilt summary differs from the run's")
	}

	// A run compared with itself holds no regression.
	if code, out, errOut := runProgram(t, nil, nil, "compare", run, run); code != exitOK {
		t.Fatalf("compare with itself: exit %d\n%s\n%s", code, out, errOut)
	}
	// A directory that is not a run is bad input.
	if code, _, errOut := runProgram(t, nil, nil, "report", dir); code != exitBadInput || errOut == "" {
		t.Errorf("report of a non-run directory: exit %d, stderr %q; want %d with a reason", code, errOut, exitBadInput)
	}
	for _, other := range []string{dir, filepath.Join(dir, "missing")} {
		if code, _, errOut := runProgram(t, nil, nil, "compare", run, other); code != exitBadInput || !strings.Contains(errOut, other) {
			t.Errorf("compare with %s: exit %d, stderr %q; want %d naming it", other, code, errOut, exitBadInput)
		}
	}
}

// TestSinkCommand runs the standalone sink: a status callback of a msgload tag
// is logged to the data directory, counted in /v1/stats and /metrics, and the
// log is flushed when the sink is interrupted.
func TestSinkCommand(t *testing.T) {
	data := t.TempDir()
	addr := testnet.FreeAddr(t)
	base := "http://" + addr
	stop := serveCommand(t, nil, addr, "sink", "--addr", addr, "--data", data)
	tag := rundir.Tag{Run: "r1", Seq: 7, First: time.Now().Add(-time.Second)}
	td, _ := json.Marshal(tag.TrackData())
	cb := fmt.Sprintf(`{"txId":"6f1c2a8e-3b4d-4e5f-9a0b-1c2d3e4f5a6b","channel":"sms","state":"DELIVERED","updatedAt":%q,"trackData":%s}`,
		time.Now().UTC().Format(time.RFC3339Nano), td)
	resp, err := http.Post(base+"/callback", "application/json", strings.NewReader(cb))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("callback answered %s: %s", resp.Status, b)
	}
	resp.Body.Close()
	resp, err = http.Get(base + "/v1/stats")
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Callbacks        int64 `json:"callbacks"`
		TerminalMatched  int64 `json:"terminal_matched"`
		TerminalMessages int64 `json:"terminal_messages"`
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st.Callbacks != 1 || st.TerminalMatched != 1 {
		t.Errorf("stats %+v: want one callback, one terminal message matched", st)
	}
	if code, stderr := stop(); code != exitOK {
		t.Fatalf("sink: exit %d: %s", code, stderr)
	}
	n := 0
	err = rundir.ReadJSONL(filepath.Join(data, rundir.EventsFile), func(e rundir.Event) error {
		if e.Corr == nil || e.Corr.Seq != 7 || e.Corr.Run != "r1" || e.Corr.State != "DELIVERED" {
			t.Errorf("event %+v", e)
		}
		n++
		return nil
	}, nil)
	if err != nil || n != 1 {
		t.Fatalf("%d events logged (%v), want 1", n, err)
	}
	// Without --data the sink refuses to start, and says which flag.
	if code, _, stderr := runProgram(t, nil, nil, "sink", "--addr", testnet.FreeAddr(t)); code != exitBadInput || !strings.Contains(stderr, "data") {
		t.Errorf("sink without --data: exit %d, %q", code, stderr)
	}
}
