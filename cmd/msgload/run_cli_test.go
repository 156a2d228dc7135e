package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msgload/msgload/rundir"
)

// TestRunMetricsAddr: a busy --metrics-addr is bad input before anything starts
// (no fallback to another port, which Prometheus would not scrape); port 0
// takes a free one, and the address in use is in the final lines and run.json.
func TestRunMetricsAddr(t *testing.T) {
	scen := writeScenario(t, strings.Replace(quickNotify, "%s", "requests.total > 0", 1))

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	out := t.TempDir()
	code, stdout, stderr := runProgram(t, nil, nil, "run", "--out", out, "--metrics-addr", busy.Addr().String(), scen)
	if code != exitBadInput || !strings.Contains(stderr, busy.Addr().String()) || !strings.Contains(stderr, "address already in use") {
		t.Errorf("busy address: exit %d, stderr %q; want 2 naming the address", code, stderr)
	}
	// The error names the flag and its variable, the two ways to change it.
	if !strings.Contains(stderr, "--metrics-addr") || !strings.Contains(stderr, "MSGLOAD_RUN_METRICS_ADDR") {
		t.Errorf("busy address: %q names neither --metrics-addr nor MSGLOAD_RUN_METRICS_ADDR", stderr)
	}
	if strings.Contains(stderr+stdout, "instead") {
		t.Errorf("busy address fell back to another port:\n%s", stderr)
	}
	if runs, _ := os.ReadDir(out); len(runs) != 0 {
		t.Errorf("a busy metrics address left a run directory: %v", runs)
	}

	code, stdout, stderr = runProgram(t, nil, nil, "run", "--out", out, "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "0s", scen)
	skipIfPlanNotHeld(t, code, out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`(?m)^metrics: http://(127\.0\.0\.1:\d+)/metrics .*\nrun directory: (.+)$`).FindStringSubmatch(stdout)
	if m == nil || strings.HasSuffix(m[1], ":0") {
		t.Fatalf("final lines do not name the metrics address in use:\n%s", stdout)
	}
	var meta rundir.Meta
	b, err := os.ReadFile(filepath.Join(m[2], rundir.MetaFile))
	if err != nil || json.Unmarshal(b, &meta) != nil {
		t.Fatalf("run.json: %v", err)
	}
	if meta.MetricsAddr != m[1] {
		t.Errorf("run.json metrics_addr %q, final lines %q", meta.MetricsAddr, m[1])
	}
}

// TestRunQuiet: --quiet (or its variable) shows no progress line and no
// summary, only the final lines; without it the progress line has one count
// of the planned messages.
func TestRunQuiet(t *testing.T) {
	scen := writeScenario(t, strings.Replace(quickNotify, "%s", "requests.total > 0", 1))
	tests := []struct {
		name  string
		env   map[string]string
		args  []string
		quiet bool
	}{
		// The flag, after the scenario.
		{"flag", nil, []string{scen, "--quiet"}, true},
		// The variable.
		{"variable", map[string]string{"MSGLOAD_RUN_QUIET": "true"}, []string{scen}, true},
		// Neither: progress on stderr and the summary on stdout.
		{"neither", nil, []string{scen}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "--out", t.TempDir(), "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "0s"}, tt.args...)
			code, stdout, stderr := runProgram(t, tt.env, nil, args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			final := regexp.MustCompile(`^metrics: http://127\.0\.0\.1:\d+/metrics .*\nrun directory: \S+\nquick: PASS — \S+/report\.html\n$`)
			if tt.quiet {
				if stderr != "" || !final.MatchString(stdout) {
					t.Errorf("--quiet: stderr %q, stdout %q; want the final lines only", stderr, stdout)
				}
				return
			}
			if !regexp.MustCompile(`(?m)^(attack|grace|report) +sent 10/10 .* ETA \S+$`).MatchString(stderr) {
				t.Errorf("no progress line with one count of the planned:\n%s", stderr)
			}
			if len(stdout) < 200 {
				t.Errorf("no summary:\n%s", stdout)
			}
		})
	}
}

// TestRunMetricsDefaultBusy: `make run` with the default metrics port held by
// another process (a run lingering on it) still runs: the default, and only
// the default, falls back to a free port, with a loud line on stderr naming
// both; an address the user set, by the flag or its variable, stays strict.
// The default is injected (defaultMetricsAddr) so the test holds whichever
// port it got, never 9464 itself.
func TestRunMetricsDefaultBusy(t *testing.T) {
	scen := writeScenario(t, strings.Replace(quickNotify, "%s", "requests.total > 0", 1))
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	defer func(d string) { defaultMetricsAddr = d }(defaultMetricsAddr)
	defaultMetricsAddr = busy.Addr().String()

	out := t.TempDir()
	code, stdout, stderr := runProgram(t, nil, nil, "run", "--out", out, "--metrics-linger", "0s", "--quiet", scen)
	skipIfPlanNotHeld(t, code, out)
	if code != exitOK {
		t.Fatalf("default address busy: exit %d\n%s\n%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`(?m)^metrics: http://(127\.0\.0\.1:\d+)/metrics `).FindStringSubmatch(stdout)
	if m == nil || m[1] == busy.Addr().String() {
		t.Fatalf("final lines do not name another metrics address:\n%s", stdout)
	}
	if !strings.Contains(stderr, "WARNING") || !strings.Contains(stderr, busy.Addr().String()) || !strings.Contains(stderr, m[1]) {
		t.Errorf("no loud line naming the busy default %s and the port used %s:\n%s", busy.Addr(), m[1], stderr)
	}

	env := map[string]string{"MSGLOAD_RUN_METRICS_ADDR": busy.Addr().String()}
	code, _, stderr = runProgram(t, env, nil, "run", "--out", t.TempDir(), scen)
	if code != exitBadInput || !strings.Contains(stderr, "address already in use") || !strings.Contains(stderr, "MSGLOAD_RUN_METRICS_ADDR") {
		t.Errorf("busy address set by the variable: exit %d, %q; want 2 naming the variable", code, stderr)
	}
}
