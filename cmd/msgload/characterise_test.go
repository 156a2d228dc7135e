package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// msgload characterise: --dry-run prints the plan within the budget and
// sends nothing (no directory is made); a bad expect: is bad input at its
// line and column; compare of two characterisations names the rule that
// changed and exits 1.
func TestCharacteriseCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("name: c\napi: notify\ntarget: embedded\nclients: 2\nexpect:\n  rate_limit.isolated: yes\n"), 0o644)
	os.WriteFile(bad, []byte("name: c\napi: notify\nexpect:\n  rate_limit.isolated: maybe\n"), 0o644)
	var contracts []string
	for i, contract := range []string{`{"findings":[{"rule":"rate_limit.algorithm","value":"sliding window"}]}`, `{"findings":[{"rule":"rate_limit.algorithm","value":"fixed window"}]}`} {
		d := filepath.Join(dir, []string{"base", "new"}[i])
		os.Mkdir(d, 0o755)
		os.WriteFile(filepath.Join(d, "contract.json"), []byte(contract), 0o644)
		contracts = append(contracts, d)
	}
	out := filepath.Join(dir, "runs")
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"characterise", good, "--dry-run", "--budget", "300", "--out", out}, 0, "", "probes, at most 300 of the budget's 300 requests"},
		{[]string{"characterise", bad, "--dry-run"}, 2, "", bad + ":4:24: expect.rate_limit.isolated: want yes or no"},
		{[]string{"characterise", good, "--dry-run", "--budget", "10"}, 2, "", "give a larger budget"},
		{append([]string{"compare"}, contracts...), 1, "rate_limit.algorithm               sliding window → fixed window", "the contract changed in 1 rules"},
	} {
		var o, e bytes.Buffer
		g := &globalState{stdout: &o, stderr: &e, getenv: func(string) string { return "" },
			signals: func() (<-chan os.Signal, func()) { return make(chan os.Signal), func() {} }}
		code := g.run(context.Background(), append([]string{"msgload"}, tc.args...))
		if code != tc.code || !strings.Contains(o.String(), tc.stdout) || !strings.Contains(e.String(), tc.stderr) {
			t.Errorf("%q: exit %d, want %d\nstdout: %s\nstderr: %s", tc.args, code, tc.code, o.String(), e.String())
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--dry-run made %s: %v", out, err)
	}
}
