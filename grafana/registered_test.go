package grafana

import (
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/harness"
	"github.com/msgload/msgload/sim"
	"github.com/msgload/msgload/sink"
)

// describing records the name of every metric registered through it, from the
// collectors' descriptions: a vector with no series yet is registered but not
// gathered, so gathering alone would miss it.
type describing struct {
	prometheus.Registerer
	names map[string]bool
}

var fqNameRE = regexp.MustCompile(`fqName: "([^"]+)"`)

func (d *describing) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	for desc := range ch {
		if m := fqNameRE.FindStringSubmatch(desc.String()); m != nil {
			d.names[m[1]] = true
		}
	}
	return d.Registerer.Register(c)
}

func (d *describing) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := d.Register(c); err != nil {
			panic(err)
		}
	}
}

// registeredMetrics builds the simulator, the sink and the attacker's metrics
// on their own registries and returns every metric name they register, with
// its type where the contract gives one (histograms add their suffixes).
func registeredMetrics(t *testing.T) (names map[string]bool, regs []*prometheus.Registry) {
	t.Helper()
	names = map[string]bool{}
	for _, build := range []func(prometheus.Registerer) error{
		func(r prometheus.Registerer) error {
			s, err := sim.New(sim.DefaultConfig(), r)
			if err == nil {
				t.Cleanup(func() { _ = s.Close() })
			}
			return err
		},
		func(r prometheus.Registerer) error {
			s, err := sink.New(sink.Options{LogPath: filepath.Join(t.TempDir(), "events.jsonl")}, r)
			if err == nil {
				t.Cleanup(func() { _ = s.Close() })
			}
			return err
		},
		func(r prometheus.Registerer) error { _, err := attack.NewMetrics(r, 20); return err },
		func(r prometheus.Registerer) error { return harness.DiskMetrics(r, t.TempDir(), 256<<20, nil) },
	} {
		reg := prometheus.NewRegistry()
		if err := build(&describing{Registerer: reg, names: names}); err != nil {
			t.Fatal(err)
		}
		regs = append(regs, reg)
	}
	return names, regs
}

// TestDashboardsUseRegisteredMetrics checks every dashboard query against
// the metrics sim, sink and attack really register, and that every metric of
// the contract is registered by one of them (a rename breaks the boards).
func TestDashboardsUseRegisteredMetrics(t *testing.T) {
	names, regs := registeredMetrics(t)
	types := map[string]string{}
	for n := range names {
		types[n] = contractMetrics[n] // "" for a metric beyond the contract: no suffixes allowed
	}
	var missing []string
	for n := range contractMetrics {
		if !names[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	for _, n := range missing {
		t.Errorf("contract metric %s is registered by none of sim, sink, attack, harness", n)
	}
	ds, err := loadDashboards(Files)
	if err != nil {
		t.Fatal(err)
	}
	allowed := seriesNames(types)
	for _, d := range ds {
		for _, e := range checkDashboard(d, allowed) {
			t.Errorf("%s: %s", d.UID, e)
		}
	}
	// What promtool check metrics runs, on each registry as built.
	for i, reg := range regs {
		problems, err := testutil.GatherAndLint(reg)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("registry %d: %s: %s", i, p.Metric, p.Text)
		}
	}
}
