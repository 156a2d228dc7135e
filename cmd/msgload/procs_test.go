package main

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/msgload/msgload/scenarios"
)

func TestSpareProc(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	none := func(string) string { return "" }
	for range 2 { // asked twice, still one spare
		if got := spareProc(none, true); got != defaultProcs+1 || runtime.GOMAXPROCS(0) != defaultProcs+1 {
			t.Errorf("spareProc(spare) = %d, GOMAXPROCS %d; want %d", got, runtime.GOMAXPROCS(0), defaultProcs+1)
		}
	}
	if got := spareProc(none, false); got != defaultProcs || runtime.GOMAXPROCS(0) != defaultProcs {
		t.Errorf("spareProc(no spare) = %d, GOMAXPROCS %d; want the default %d", got, runtime.GOMAXPROCS(0), defaultProcs)
	}
	// A GOMAXPROCS the user set is left alone.
	env := func(k string) string {
		if k == "GOMAXPROCS" {
			return "1"
		}
		return ""
	}
	runtime.GOMAXPROCS(before)
	for _, spare := range []bool{true, false} {
		if got := spareProc(env, spare); got != before || runtime.GOMAXPROCS(0) != before {
			t.Errorf("with GOMAXPROCS set: spareProc(%v) = %d, GOMAXPROCS %d; want %d untouched", spare, got, runtime.GOMAXPROCS(0), before)
		}
	}
}

func TestTakesCallbacks(t *testing.T) {
	via := func(v string) scenarios.Scenario { return scenarios.Scenario{Delivery: scenarios.Delivery{Via: v}} }
	for _, tc := range []struct {
		name string
		s    scenarios.Scenario
		want bool
	}{
		{"default", via(""), true},
		{"sink", via("sink"), true},
		{"none", via("none"), false},
		{"poll", via("poll"), false},
		{"parts without callbacks", scenarios.Scenario{Parts: []scenarios.Scenario{via("none"), via("poll")}}, false},
		{"a part with callbacks", scenarios.Scenario{Parts: []scenarios.Scenario{via("none"), via("sink")}}, true},
	} {
		if got := takesCallbacks(&tc.s); got != tc.want {
			t.Errorf("%s: takesCallbacks = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestProcsByCommand: `msgload run` of a scenario without callbacks asks
// for no spare P (it would cost the attack CPU for nothing); another command
// keeps it.
func TestProcsByCommand(t *testing.T) {
	scen := writeScenario(t, `name: nocallbacks
api: messaging
target: embedded
load: { rate: 20/s, requests: 2 }
message: { recipient: "+79990000001", text: "x" }
delivery: { via: none }
`)
	for _, tc := range []struct {
		args []string
		want []bool
	}{
		{[]string{"run", "--out", t.TempDir(), "--metrics-addr", "", "--quiet", scen}, []bool{false}},
		{[]string{"validate", scen}, []bool{true}},
	} {
		var asked []bool
		var stdout, stderr bytes.Buffer
		g := &globalState{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" },
			signals: func() (<-chan os.Signal, func()) { return make(chan os.Signal), func() {} },
			procs:   func(spare bool) { asked = append(asked, spare) }}
		g.run(context.Background(), append([]string{"msgload"}, tc.args...))
		if !slices.Equal(asked, tc.want) {
			t.Errorf("msgload %s: spare P asked %v, want %v\n%s", tc.args[0], asked, tc.want, stderr.String())
		}
	}
}
