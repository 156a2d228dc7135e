package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/rundir"
)

// TestReplayBinaryWritesRunDirectory builds the real binary and replays a
// recording without a scenario: the built-in replay scenario goes through the
// harness like every run and writes a complete run directory, with the
// recorded externalIds kept (their webhooks joined by externalId), the
// recorded webhook registration replayed and the token call skipped.
func TestReplayBinaryWritesRunDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "msgload")
	if b, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	const sends = 3
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	lines := []string{fmt.Sprintf(`{"format":%q,"version":%d,"started":%q}`, replay.FormatName, replay.FormatVersion, start.Format(time.RFC3339Nano))}
	add := func(i int, method, path, body string) {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		lines = append(lines, fmt.Sprintf(`{"time":%q,"offset_ns":%d,"method":%q,"path":%q,"headers":{"Content-Type":["application/json"]},"body":%q,"client":"app-1","code":200,"latency_s":0.001}`,
			at.Format(time.RFC3339Nano), at.Sub(start).Nanoseconds(), method, path, body))
	}
	add(0, "POST", "/oauth/token", "grant_type=client_credentials&client_id=app-1")
	add(1, "POST", "/api/v1/webhooks", `{"url":"https://app.example/hook"}`)
	for i := range sends {
		add(i+2, "POST", "/api/v1/notifications", fmt.Sprintf(`{"externalId":"order-%d","recipient":{"value":"+7999123456%d"},"notificationText":"shipped"}`, i, i))
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "traffic.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "runs")
	cmd := exec.Command(bin, "replay", "--out", out, "--metrics-addr", "", "--speed", "5", "--grace", "15s", file)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, b)
	}
	runs, _ := os.ReadDir(out)
	if len(runs) != 1 {
		t.Fatalf("want one run directory, got %d\n%s", len(runs), b)
	}
	run := filepath.Join(out, runs[0].Name())
	for _, f := range []string{rundir.MetaFile, rundir.ScenarioFile, rundir.AttemptsFile, rundir.EventsFile, rundir.ResultsFile, rundir.TruthStreamFile,
		rundir.SummaryFile, rundir.HTMLFile, rundir.MarkdownFile, rundir.JUnitFile, replay.ReplayFile} {
		if fi, err := os.Stat(filepath.Join(run, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	var sum struct {
		OK       bool `json:"ok"`
		Delivery struct {
			Received, Lost int64
		} `json:"delivery"`
		Requests struct {
			ByOp map[string]int64 `json:"by_op"`
		} `json:"requests"`
	}
	sb, _ := os.ReadFile(filepath.Join(run, rundir.SummaryFile))
	if err := json.Unmarshal(sb, &sum); err != nil {
		t.Fatal(err)
	}
	if !sum.OK || sum.Delivery.Received != sends || sum.Delivery.Lost != 0 {
		t.Errorf("summary: ok %v, delivery %+v: want every kept-id notification delivered\n%s", sum.OK, sum.Delivery, b)
	}
	var rep replay.Report
	rb, _ := os.ReadFile(filepath.Join(run, replay.ReplayFile))
	if err := json.Unmarshal(rb, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Planned != sends || rep.Matching != sends || rep.ExternalIDs != replay.ExternalIDsKeep || rep.Other != 1 || rep.Skipped[replay.SkipToken] != 1 {
		t.Errorf("replay.json %+v", rep)
	}
	for _, want := range []string{"run directory: " + run, "delivered / ", "not replayed: 1 (token endpoint"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("output lacks %q:\n%s", want, b)
		}
	}
}

// --confirm-target takes several hosts (a,b and repeated): a replay whose
// notification API and token endpoint are on two confirmed hosts is refused
// only for the third, unconfirmed one, named in the error. Nothing is sent:
// the check comes first.
func TestReplayConfirmsAListOfHosts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "traffic.jsonl")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(`{"format":%q,"version":%d,"started":"2026-11-23T10:00:00Z"}`+"\n", replay.FormatName, replay.FormatVersion)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, confirm := range [][]string{
		{"--confirm-target", "notify.example.com,auth.example.com"},
		{"--confirm-target", "notify.example.com", "--confirm-target", "auth.example.com"},
	} {
		args := append([]string{"replay", "--metrics-addr", "", "--out", t.TempDir(),
			"--notify-url", "https://notify.example.com", "--token-url", "https://auth.example.com/oauth/token",
			"--messaging-url", "https://sms.example.com"}, confirm...)
		code, _, stderr := runProgram(t, nil, nil, append(args, file)...)
		if code != exitBadInput || !strings.Contains(stderr, "host sms.example.com ") {
			t.Errorf("%v: exit %d, want 2 naming sms.example.com:\n%s", confirm, code, stderr)
		}
		if strings.Contains(stderr, "host notify.example.com ") || strings.Contains(stderr, "host auth.example.com ") {
			t.Errorf("%v: a confirmed host refused:\n%s", confirm, stderr)
		}
	}
}
