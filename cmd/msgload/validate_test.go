package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runValidateForTest(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &globalState{stdout: &out, stderr: &errb, getenv: func(k string) string { return env[k] },
		signals: func() (<-chan os.Signal, func()) { return make(chan os.Signal), func() {} }}
	code = g.run(context.Background(), append([]string{"msgload", "validate"}, args...))
	return code, out.String(), errb.String()
}

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(bad, []byte("api: notify\nload: { rate: 150/1m, duration: 2m, extra: 1 }\nlimit: { mode: respect }\nretry: { backoff: soon }\n"), 0o644)
	badName := filepath.Join(dir, "bad-name.yaml")
	os.WriteFile(badName, []byte("name: smoke-\xff\napi: notify\nload: { rate: 1/s, requests: 3 }\n"), 0o644)
	os.WriteFile(good, []byte("api: notify\nclients: 2\nauth: { clientSecret: ${S} }\nload: { rate: 150/1m, duration: 2m }\nlimit: { rate: 100/1m, mode: exceed }\n"), 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // each must appear
		stderr []string
	}{
		// a built-in prints its plan per client and exits 0
		{"builtin", []string{"notify-exceed-limit"}, 0,
			[]string{"notify-exceed-limit (scenarios/notify-exceed-limit.yaml): ok", "demo-1  300", "expected 429: 33.3%"}, nil},
		// every problem of a bad file is listed, with positions, and the exit code is 2
		{"bad file", []string{bad}, 2, nil,
			[]string{bad + ":2:37: load.extra: unknown field", bad + ":4:19: retry.backoff: bad duration", "cannot be kept", "1 of 1 scenarios are bad"}},
		// good and bad together: the good plan is printed, the run still fails
		{"mixed", []string{good, bad, "no-such"}, 2, []string{"good (" + good + "): ok", "expected 429: 0.0%"},
			[]string{"no-such\" is neither a built-in", "2 of 3 scenarios are bad"}},
		// --max-messages caps what is really sent
		{"max messages", []string{"--max-messages", "100", "notify-exceed-limit"}, 0, []string{"300 messages planned, 100 really sent"}, nil},
		// a name with invalid UTF-8 (the YAML parser reads it as U+FFFD) is refused at its place
		{"invalid UTF-8 name", []string{badName}, 2, nil, []string{badName + ":1:13: name: not valid UTF-8"}},
		// /dev/zero is refused at the byte bound, not read until memory runs out
		{"endless file", []string{"/dev/zero"}, 2, nil, []string{"/dev/zero: not a regular file"}},
		// no argument is bad input
		{"no args", nil, 2, nil, []string{"name at least one scenario"}},
		// --json prints plans for scripts
		{"json", []string{"--json", "smoke"}, 0, []string{`"name": "smoke-notify"`, `"window_s": 60`, `"duration_s": 10`, `"client_id": "`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runValidateForTest(t, map[string]string{"S": "x"}, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errs)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}

// TestValidateJSONShape: validate --json has summary.json's naming and units:
// snake_case keys, seconds, rates per second, limits as requests per window.
func TestValidateJSONShape(t *testing.T) {
	code, out, errs := runValidateForTest(t, nil, "--json", "notify-exceed-limit")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var plans []map[string]any
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	p := plans[0]
	keys := []string{"name", "api", "profile", "duration_s", "rate", "peak_rate", "requests", "messages", "probes",
		"retries", "attempts", "limit", "limit_enforced", "mode", "expected_429", "disk_bytes", "clients"}
	for _, k := range keys {
		if _, ok := p[k]; !ok {
			t.Errorf("no %q in %v", k, p)
		}
	}
	if len(p) != len(keys) {
		t.Errorf("keys %v, want exactly %v", p, keys)
	}
	// notify-exceed-limit: 150/1m for 2m against 100/1m.
	if p["duration_s"] != 120.0 || p["rate"] != 2.5 || p["limit"].(map[string]any)["window_s"] != 60.0 {
		t.Errorf("not seconds: duration_s %v, rate %v, limit %v", p["duration_s"], p["rate"], p["limit"])
	}
	c := p["clients"].([]any)[0].(map[string]any)
	for _, k := range []string{"client_id", "requests", "rate", "peak_per_window", "limit_per_window", "expected_429"} {
		if _, ok := c[k]; !ok {
			t.Errorf("client: no %q in %v", k, c)
		}
	}
}
