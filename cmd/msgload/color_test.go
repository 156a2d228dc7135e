package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestColor: the verdict is coloured only when stdout is a terminal and
// NO_COLOR is unset (https://no-color.org) and TERM is not dumb; the decision
// is made in cmd/ from the injected process state.
func TestColor(t *testing.T) {
	dir := copySample(t)
	verdictLine := regexp.MustCompile(`(?m)^run \S+ \(.*\): (.*)$`)
	tests := []struct {
		name  string
		tty   bool
		env   map[string]string
		color bool
	}{
		// A terminal: colour.
		{"terminal", true, nil, true},
		// Not a terminal (a pipe, a file, CI logs): none.
		{"pipe", false, nil, false},
		// NO_COLOR set to anything: none.
		{"NO_COLOR", true, map[string]string{"NO_COLOR": "1"}, false},
		// A dumb terminal: none.
		{"dumb", true, map[string]string{"TERM": "dumb"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			g := &globalState{stdout: &stdout, stderr: io.Discard, getenv: func(k string) string { return tt.env[k] },
				signals: func() (<-chan os.Signal, func()) { return make(chan os.Signal), func() {} },
				tty:     func(w io.Writer) bool { return tt.tty && w == io.Writer(&stdout) }}
			g.run(context.Background(), []string{"msgload", "report", dir})
			m := verdictLine.FindStringSubmatch(stdout.String())
			if m == nil {
				t.Fatalf("no verdict line:\n%s", stdout.String())
			}
			colored := regexp.MustCompile(`^\x1b\[1m\x1b\[3[123]m(PASS|FAIL|ERROR|INCOMPLETE)\x1b\[0m$`).MatchString(m[1])
			if colored != tt.color {
				t.Errorf("verdict %q coloured %v, want %v", m[1], colored, tt.color)
			}
			if !tt.color && strings.Contains(stdout.String(), "\x1b[") {
				t.Errorf("an escape without colour:\n%q", stdout.String())
			}
		})
	}
}
