package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgload/msgload/internal/testnet"
	"github.com/msgload/msgload/rundir"
)

func TestSimCommandBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "sim.yaml")
	if err := os.WriteFile(bad, []byte("rateLimit:\n  request: 5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		env    map[string]string
		args   []string
		stderr string
	}{
		// A rate that does not parse.
		{"rate", nil, []string{"--rate-limit", "fast"}, "--rate-limit"},
		// An unknown algorithm, from the environment.
		{"algorithm env", map[string]string{"MSGLOAD_SIM_RATE_LIMIT_ALGORITHM": "leaky"}, nil, "rateLimit.algorithm"},
		// A config file error names file:line:col.
		{"config", nil, []string{"--config", bad}, "sim.yaml:2:3: unknown field"},
		// A bad address.
		{"addr", nil, []string{"--addr", "nowhere"}, "--addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runProgram(t, tt.env, nil, append([]string{"sim"}, tt.args...)...)
			if code != exitBadInput || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.stderr)
			}
		})
	}
}

// TestSimCommandServes runs `msgload sim` on a free loopback port: /healthz,
// a messaging send and /metrics answer; an interrupt stops it with exit 0.
func TestSimCommandServes(t *testing.T) {
	addr := testnet.FreeAddr(t)
	stop := serveCommand(t, map[string]string{"MSGLOAD_SIM_RATE_LIMIT": "10/1s"}, addr, "sim", "--addr", addr, "--seed", "3")
	base := "http://" + addr
	sendOne(t, base)
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `msgload_sim_messages_accepted_total{api="messaging",channel="sms"} 1`) {
		t.Fatalf("metrics lack the accepted send:\n%.2000s", b)
	}
	if code, stderr := stop(); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// TestSimCommandStreamsTruth: `msgload sim --truth FILE` writes its ground
// truth to FILE as truth.jsonl's records (a message's once it is settled,
// the end record at the stop), and GET /sim/v1/truth still answers it whole
// while it serves; a file that cannot be made is bad input.
func TestSimCommandStreamsTruth(t *testing.T) {
	if code, _, stderr := runProgram(t, nil, nil, "sim", "--addr", testnet.FreeAddr(t), "--truth", filepath.Join(t.TempDir(), "no", "such", "dir", "truth.jsonl")); code != exitBadInput || !strings.Contains(stderr, "--truth") {
		t.Fatalf("--truth in a missing directory: exit %d, %q", code, stderr)
	}
	addr := testnet.FreeAddr(t)
	path := filepath.Join(t.TempDir(), "truth.jsonl")
	stop := serveCommand(t, nil, addr, "sim", "--addr", addr, "--seed", "3", "--truth", path)
	base := "http://" + addr
	const sends = 3
	for range sends {
		sendOne(t, base)
	}
	resp, err := http.Get(base + "/sim/v1/truth")
	if err != nil {
		t.Fatal(err)
	}
	var live rundir.Truth
	err = json.NewDecoder(resp.Body).Decode(&live)
	resp.Body.Close()
	if err != nil || len(live.Messages) != sends {
		t.Fatalf("GET /sim/v1/truth while streaming: %d messages, %v; want %d", len(live.Messages), err, sends)
	}
	if code, stderr := stop(); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msgs, ended := 0, false
	if err := rundir.DecodeTruthRecords(f, func(rec *rundir.TruthRecord) error {
		switch rec.Type {
		case rundir.TruthRecMessage:
			msgs++
		case rundir.TruthRecEnd:
			ended = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if msgs != sends || !ended {
		t.Fatalf("%s: %d message records, end %v; want %d and an end", path, msgs, ended, sends)
	}
}

// sendOne sends one messaging send as the built-in demo account to the
// simulator at base and requires it accepted.
func sendOne(t *testing.T, base string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/messaging/v1/send", strings.NewReader(
		`{"scenario":[{"channel":"sms","recipient":{"type":"MSISDN","value":"+79991234567"},"sender":"Acme"}]}`))
	req.SetBasicAuth("demo", "demo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("send: %v %v", err, resp)
	}
	resp.Body.Close()
}
