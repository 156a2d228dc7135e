package harness

import (
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
)

// inputs are what the harness hands the attacker, the simulator and run.json
// for the fields the scenarios' defaults table fills.
type inputs struct {
	profile       string        // the load's profile (run.json planned.profile)
	via           string        // run.json delivery.via
	pollEvery     time.Duration // the attacker's poll interval (via poll)
	inFlight      int           // attack.Options.MaxInFlight
	inFlightMeta  int           // run.json max_in_flight
	simSeed       uint64        // the embedded simulator's seed
	profileFailed bool          // the harness refused the profile
}

// harnessInputs maps s as a part's run does: its load, the attack options and
// run.json, the simulator's configuration.
func harnessInputs(t *testing.T, s *scenarios.Scenario) inputs {
	t.Helper()
	var in inputs
	ld, err := scenarioLoad(s, "http://sink.invalid")
	if err != nil {
		in.profileFailed = true
		return in
	}
	r := &partRun{o: &Options{}, s: s, id: "r1"}
	o, meta, err := r.attackOptions(ld, "http://target.invalid", "", "http://sink.invalid")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := simConfig(s, "http://sink.invalid")
	if err != nil {
		t.Fatal(err)
	}
	in = inputs{profile: meta.Planned.Profile, via: meta.Delivery.Via, inFlight: o.MaxInFlight, inFlightMeta: meta.MaxInFlight, simSeed: cfg.Seed}
	if o.Poll != nil {
		in.pollEvery = o.Poll.Interval
	}
	return in
}

// TestHarnessAppliesNoDefaults: the scenarios' table is the one place a
// default is applied. A scenario leaving every defaulted field out reaches
// the attacker, the simulator and run.json with the table's values as Parse
// set them; and a field the table did not fill (a scenario built in code)
// reaches them unfilled: the harness puts no default of its own back.
func TestHarnessAppliesNoDefaults(t *testing.T) {
	src := `name: defaults
api: messaging
load: { rate: 5/s, requests: 5 }
delivery: { via: poll }
`
	s, err := scenarios.Parse("defaults.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if s.Load.MaxInFlight != rundir.DefaultMaxInFlight {
		t.Fatalf("load.maxInFlight %d after Parse, want the table's %d", s.Load.MaxInFlight, rundir.DefaultMaxInFlight)
	}
	want := inputs{profile: s.Load.Profile, via: s.Delivery.Via, pollEvery: s.Delivery.PollInterval.D,
		inFlight: s.Load.MaxInFlight, inFlightMeta: s.Load.MaxInFlight, simSeed: uint64(s.Sim.Seed)}
	if got := harnessInputs(t, s); got != want {
		t.Errorf("defaulted scenario: the harness got %+v, the scenario says %+v", got, want)
	}

	blank := []struct {
		field string
		unset func(s *scenarios.Scenario)
		check func(in inputs) bool // true: the harness left the field unfilled
	}{
		{"load.profile", func(s *scenarios.Scenario) { s.Load.Profile = "" }, func(in inputs) bool { return in.profileFailed || in.profile == "" }},
		{"delivery.via", func(s *scenarios.Scenario) { s.Delivery.Via = "" }, func(in inputs) bool { return in.via == "" && in.pollEvery == 0 }},
		{"delivery.pollInterval", func(s *scenarios.Scenario) { s.Delivery.PollInterval.D = 0 }, func(in inputs) bool { return in.pollEvery == 0 }},
		{"load.maxInFlight", func(s *scenarios.Scenario) { s.Load.MaxInFlight = 0 }, func(in inputs) bool { return in.inFlight == 0 && in.inFlightMeta == 0 }},
		{"sim.seed", func(s *scenarios.Scenario) { s.Sim.Seed = 0 }, func(in inputs) bool { return in.simSeed == 0 }},
	}
	for _, b := range blank {
		s, err := scenarios.Parse("defaults.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		b.unset(s)
		if got := harnessInputs(t, s); !b.check(got) {
			t.Errorf("%s left unset: the harness filled it in (%+v)", b.field, got)
		}
	}
}
