package harness

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgload/msgload/scenarios"
)

// TestAttackMetricsOnlyWhenServed: a run that serves /metrics nowhere
// (--metrics-addr "") gives the attack no metrics to observe — nobody can
// read them, and observing them costs CPU on every request — while a run
// that serves them has every attack metric registered.
func TestAttackMetricsOnlyWhenServed(t *testing.T) {
	src := `name: metrics
api: messaging
load: { rate: 5/s, requests: 5 }
delivery: { via: none }
`
	s, err := scenarios.Parse("metrics.yaml", t.TempDir(), []byte(src), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"", "127.0.0.1:0"} {
		reg := prometheus.NewRegistry()
		r := &partRun{o: &Options{}, s: s, id: "r1", dir: t.TempDir(), reg: reg, metricsAddr: addr}
		var cs closeStack
		_, ao, _, err := r.prepareAttack("http://target.invalid", "", "http://sink.invalid", &cs)
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.closeAll(); err != nil {
			t.Fatal(err)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case addr == "" && (ao.Metrics != nil || len(mfs) > 0):
			t.Errorf("metrics served nowhere: the attack got metrics (%v) and %d families were registered, want none", ao.Metrics != nil, len(mfs))
		case addr != "" && (ao.Metrics == nil || len(mfs) == 0):
			t.Errorf("metrics served at %s: the attack got metrics %v and %d families were registered, want its metrics", addr, ao.Metrics != nil, len(mfs))
		}
	}
}
