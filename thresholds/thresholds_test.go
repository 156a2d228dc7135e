package thresholds

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// env is a small environment in the shape of a summary: nested objects, a
// map of latency objects and a list.
type env struct {
	Delivery delivery         `json:"delivery" expr:"delivery"`
	Codes    map[string]int64 `json:"codes" expr:"codes"`
	Clients  []client         `json:"clients" expr:"clients"`
}

type delivery struct {
	Lost      int64              `json:"lost" expr:"lost"`
	Expected  int64              `json:"expected" expr:"expected"`
	Latency   latency            `json:"latency" expr:"latency"`
	ByChannel map[string]latency `json:"by_channel" expr:"by_channel"`
}

type latency struct {
	Count int64   `json:"count" expr:"count"`
	P95   float64 `json:"p95" expr:"p95"`
}

type client struct {
	ID   string `json:"client_id" expr:"client_id"`
	Sent int64  `json:"sent" expr:"sent"`
}

func TestRewriteLiterals(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"delivery.latency.p95 < 30s", "delivery.latency.p95 < 30"},          // seconds
		{"x < 250ms", "x < 0.25"},                                            // milliseconds
		{"x < 1m30s", "x < 90"},                                              // compound duration
		{"a / b < 1%", "a / b < 0.01"},                                       // percentage
		{"a < 0.5%", "a < 0.005"},                                            // fractional percentage
		{"10 % 3 == 1", "10 % 3 == 1"},                                       // modulo stays an operator
		{`run.scenario == "5s"`, `run.scenario == "5s"`},                     // strings untouched
		{`requests.codes["429"] > 0`, `requests.codes["429"] > 0`},           // map keys untouched
		{"delivery.latency.p95 < p99x", "delivery.latency.p95 < p99x"},       // digits inside names untouched
		{`rate_limit.clients[0].sent > 1`, `rate_limit.clients[0].sent > 1`}, // plain numbers untouched
		{"x < 1m", "x < 60"},                                                 // m is a minute, not a size
		{"x < 1ms", "x < 0.001"},                                             // ms a millisecond
		{"x < 1us + 1µs", "x < 1e-06 + 1e-06"},                               // microseconds, both spellings
		{"x < 1B", "x < 1"},                                                  // sizes: bytes
		{"x < 1kB + 1KB", "x < 1000 + 1000"},                                 // both spellings of 1000
		{"x < 1MB + 1GB", "x < 1e+06 + 1e+09"},                               // powers of 1000
		{"x < 1KiB + 1MiB", "x < 1024 + 1.048576e+06"},                       // powers of 1024
		{"x < 1GiB", "x < 1.073741824e+09"},                                  // 1024³
		{"x < 1.5MiB", "x < 1.572864e+06"},                                   // decimal size
		{"x < 1_000kB", "x < 1e+06"},                                         // underscores in a size
		{"drift.memory_slope < 1MB/10m", "drift.memory_slope < 1e+06/600"},   // bytes per second
		{"x1MB < 1", "x1MB < 1"},                                             // a unit glued to a name is no literal
		{`run.scenario == "1MB"`, `run.scenario == "1MB"`},                   // strings untouched
	} {
		got, err := rewriteLiterals(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"x < 1MX", `"1MX": not a number, a duration or a size`},
		{"x < 1Mb", `"1Mb": not a number, a duration or a size`},       // units are case-sensitive
		{"x < 1MB30s", `"1MB30s": not a number, a duration or a size`}, // a size is no compound
		{"x < 1.2.3MB", `"1.2.3MB": not a size`},
	} {
		if got, err := rewriteLiterals(tc.in); err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %q, %v; want the error %q", tc.in, got, err, tc.want)
		}
	}
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		lit  string
		want float64
	}{{"30s", 30}, {"250ms", 0.25}, {"1m30s", 90}, {"1%", 0.01}, {"1_000", 1000}, {"2.5", 2.5},
		{"1MB", 1e6}, {"1.5MiB", 1.5 * 1024 * 1024}, {"1_000kB", 1e6}, {"1GiB", 1 << 30}} {
		if got, err := Number(tc.lit); err != nil || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v", tc.lit, got, err, tc.want)
		}
	}
	for _, lit := range []string{"3x", "abc", `"5s"`, "1MX", "1Mb", "1mb", "1MB30s", "1m30MB"} {
		if got, err := Number(lit); err == nil {
			t.Errorf("%s: got %v, want an error", lit, got)
		}
	}
}

func TestRunAndLeft(t *testing.T) {
	e0 := env{Codes: map[string]int64{"429": 3}}
	e0.Delivery.Lost, e0.Delivery.Expected = 1, 200
	e0.Delivery.Latency = latency{Count: 5, P95: 12}
	for _, tc := range []struct {
		src     string
		ok      bool
		left    float64
		hasLeft bool
	}{
		{"delivery.latency.p95 < 30s", true, 12, true},
		{"delivery.latency.p95 < 500ms", false, 12, true},
		{"delivery.lost / delivery.expected < 1%", true, 0.005, true},
		{"delivery.latency.p95 < 1MB/10m", true, 12, true}, // a size per duration compiles
		{"1MB/10m > 1666", true, 1e6 / 600.0, true},        // 1 MB per 10 minutes in bytes per second
		{"delivery.expected >= 1kB", false, 200, true},
		{`codes["429"] > 0`, true, 3, true},
		{`codes["503"] == 0`, true, 0, true},                             // an absent key reads as zero
		{"delivery.expected > 0 && delivery.lost == 0", false, 0, false}, // not a comparison: no figure
	} {
		e, err := Compile(tc.src, env{})
		if err != nil {
			t.Errorf("%s: %v", tc.src, err)
			continue
		}
		if e.String() != tc.src {
			t.Errorf("String() = %q, want %q", e.String(), tc.src)
		}
		ok, err := e.Run(e0)
		if err != nil || ok != tc.ok {
			t.Errorf("%s: Run = %v, %v; want %v", tc.src, ok, err, tc.ok)
		}
		left, has := e.Left(e0)
		if has != tc.hasLeft || left != tc.left {
			t.Errorf("%s: Left = %v, %v; want %v, %v", tc.src, left, has, tc.left, tc.hasLeft)
		}
	}
}

// A mistyped name is explained in the environment's JSON names, whatever
// package the environment's type is in.
func TestExplain(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"delivery.lostt == 0", "no field lostt, did you mean lost? (it has: by_channel, expected, latency, lost)"},
		{"deliveryy.lost == 0", "unknown name deliveryy, did you mean delivery? (it has: clients, codes, delivery)"},
		{"clients[0].sentt > 1", "no field sentt, did you mean sent? (it has: client_id, sent)"},
		{"expectd == 0", "unknown name expectd, did you mean delivery.expected? (it has: clients, codes, delivery)"},
	} {
		err := check(tc.src, env{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "thresholds.") {
			t.Errorf("%s: %v; want it to say %q", tc.src, err, tc.want)
		}
	}
	for _, src := range []string{
		"delivery.latency.p95",      // not a yes or no
		"delivery.latency.p95 <",    // syntax
		"delivery.latency.p95 < 3x", // unknown unit
		`codes["429"] == "open`,     // unterminated string
	} {
		if err := check(src, env{}); err == nil {
			t.Errorf("%s: no error", src)
		}
	}
	if err := check("delivery.latency.p95 < 30s && delivery.lost == 0", env{}); err != nil {
		t.Errorf("a good threshold: %v", err)
	}
}

func TestPaths(t *testing.T) {
	e, err := Compile(`delivery.by_channel["sms"].p95 < 1s && clients[0].sent > 1 && delivery.lost == 0 && codes["429"] == 0`, env{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range e.Paths() {
		got = append(got, PathString(p))
	}
	for _, want := range []string{"delivery.by_channel.sms.p95", "clients[0].sent", "delivery.lost", `codes["429"]`} {
		if !slices.Contains(got, want) {
			t.Errorf("paths %q lack %s", got, want)
		}
	}
}

func TestComputedRead(t *testing.T) {
	latencyType := reflect.TypeFor[latency]()
	match := func(owner reflect.Type, field string) bool { return owner == latencyType && field == "p95" }
	for _, tc := range []struct{ src, want string }{
		{`delivery.by_channel["sms"].p95 < 1`, ""}, // a fixed path
		{`delivery.by_channel[clients[0].client_id].p95 < 1`, "delivery.by_channel[clients[0].client_id].p95"},
		{`delivery.by_channel[clients[0].client_id].count > 0`, ""}, // computed, but not a field match takes
	} {
		e, err := Compile(tc.src, env{})
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := e.ComputedRead(match); got != tc.want {
			t.Errorf("%s: ComputedRead = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// check says what is wrong with a threshold expression against env, or nil
// (callers use Compile, which says the same).
func check(src string, env any) error {
	_, err := compileBool(src, env)
	return err
}
