package harness

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/reports/render"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// TestLoadProfiles runs each load profile end to end for a few seconds and
// checks that the messages planned are the messages sent, over the planned
// time: steps with a pause (no load.duration of its own), a ramp down to
// zero, a sine wave.
func TestLoadProfiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three short attacks")
	}
	for _, tc := range []struct{ name, load string }{
		{"steps with a pause", "{ profile: steps, steps: [ {rate: 10/s, duration: 1s}, {rate: 0/s, duration: 1s}, {rate: 10/s, duration: 1s} ] }"},
		{"ramp to zero", "{ profile: ramp, from: 20/s, to: 0/s, duration: 3s }"},
		{"sine", "{ profile: sine, rate: 10/s, amplitude: 5/s, period: 2s, duration: 3s }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := "name: profile\napi: notify\ntarget: embedded\nclients: 2\nload: " + tc.load + "\ndelivery: { grace: 10s }\nthresholds: [ \"delivery.lost == 0\" ]\n"
			dir := t.TempDir()
			s, err := scenarios.Parse(filepath.Join(dir, "p.yaml"), dir, []byte(src), func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			plan := s.Plan()
			var stderr strings.Builder
			res, err := Run(context.Background(), Options{Scenario: s, Out: t.TempDir(), Stderr: &stderr})
			if err != nil {
				t.Fatal(err)
			}
			p := res.Parts[0]
			if p.Err != nil || p.Summary == nil {
				t.Fatalf("part: %v\n%s", p.Err, stderr.String())
			}
			skipUnlessPlanHeld(t, p.Summary) // the counts below need the plan held
			var first []time.Time
			rundir.ReadJSONL(filepath.Join(p.Dir, rundir.AttemptsFile), func(a rundir.Attempt) error {
				if a.Op == "send" && a.Attempt <= 1 {
					first = append(first, a.Intended)
				}
				return nil
			}, nil)
			// The plan rounds the integral of the rate; vegeta's pacer counts
			// hits due by the end: they may differ by the one on the edge.
			if n := int64(len(first)); n < plan.Messages-1 || n > plan.Messages+1 {
				t.Fatalf("%d messages sent, %d planned", n, plan.Messages)
			}
			span := first[len(first)-1].Sub(first[0])
			if span > plan.Duration || span < plan.Duration/2 {
				t.Errorf("messages planned over %v, want within the profile's %v", span, plan.Duration)
			}
			if !p.Summary.OK() {
				var b strings.Builder
				render.Terminal(&b, p.Summary)
				t.Errorf("run failed:\n%s", b.String())
			}
		})
	}
}
