package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/msgload/msgload/internal/testnet"
)

// TestSinkCommandReadToken: MSGLOAD_SINK_READ_TOKEN guards the read API of
// `msgload sink` and never shows in its output; a read token equal to a
// callback secret is bad input.
func TestSinkCommandReadToken(t *testing.T) {
	addr := testnet.FreeAddr(t)
	env := map[string]string{envSinkReadToken: "read-secret-value", envSinkBearerToken: "callback-secret"}
	stop := serveCommand(t, env, addr, "sink", "--addr", addr, "--data", t.TempDir())
	for authz, want := range map[string]int{"": 401, "Bearer callback-secret": 401, "Bearer read-secret-value": 200} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/v1/stats", nil)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("/v1/stats with %q: %d, want %d", authz, resp.StatusCode, want)
		}
	}
	code, stderr := stop()
	if code != exitOK || strings.Contains(stderr, "read-secret-value") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	env[envSinkReadToken] = "callback-secret"
	if code, _, stderr := runProgram(t, env, nil, "sink", "--addr", testnet.FreeAddr(t), "--data", t.TempDir()); code != exitBadInput || !strings.Contains(stderr, "read token") {
		t.Errorf("read token equal to the callback token: exit %d, %q", code, stderr)
	}
}
