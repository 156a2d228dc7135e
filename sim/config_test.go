package sim

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgload/msgload/rundir"
)

func TestDefaultConfig(t *testing.T) {
	cfg := DefaultConfig()
	if errs := cfg.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	// The built-in accounts and clients of the issue.
	demo := cfg.Messaging.Accounts[0]
	if demo.Login != "demo" || demo.Password != "demo" || strings.Join(demo.Channels, ",") != "sms,viber,vkok,push" {
		t.Errorf("demo account %+v", demo)
	}
	if b := cfg.Messaging.Accounts[1]; b.Login != "blocked" || !b.NoAPIRight {
		t.Errorf("blocked account %+v", b)
	}
	if len(cfg.Notify.Clients) != 12 || cfg.Notify.Clients[9].ID != "demo-10" || cfg.Notify.Clients[10].ID != "notify-only" ||
		len(cfg.Notify.Clients[10].Scopes) != 1 || len(cfg.Notify.Clients[0].Scopes) != 2 ||
		cfg.Notify.Clients[11].ID != NoRightClient || slices.Contains(cfg.Notify.Clients[11].Scopes, ScopeNotification) {
		t.Errorf("clients %+v", cfg.Notify.Clients)
	}
	if cfg.RateLimit.Requests != 100 || cfg.RateLimit.Window != time.Minute || cfg.RateLimit.Algorithm != AlgSliding || !cfg.RateLimit.RetryAfter || cfg.RateLimit.Headers {
		t.Errorf("rate limit %+v", cfg.RateLimit)
	}
	if cfg.Messaging.StatusRetention != 48*time.Hour {
		t.Errorf("retention %v", cfg.Messaging.StatusRetention)
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string // substring; "" means valid
		check   func(Config) bool
	}{
		// An empty file keeps the defaults.
		{"empty", "", "", func(c Config) bool { return len(c.Notify.Clients) == 12 }},
		// A list replaces the whole default list; durations read as Go durations.
		{"replace accounts", "messaging:\n  accounts:\n    - login: a\n      password: b\n      channels: [sms]\n  statusRetention: 90m\n", "",
			func(c Config) bool {
				return len(c.Messaging.Accounts) == 1 && c.Messaging.Accounts[0].Login == "a" && c.Messaging.StatusRetention == 90*time.Minute &&
					len(c.Notify.Clients) == 12
			}},
		// A profile named replaces that channel's; the others keep theirs.
		{"one profile", "messaging:\n  profiles:\n    sms:\n      outcomes: [{state: FAILED, code: 252, weight: 1}]\n", "",
			func(c Config) bool {
				return len(c.Messaging.Profiles) == 6 && c.Messaging.Profiles["sms"].Outcomes[0].State == rundir.StateFailed &&
					c.Messaging.Profiles["viber"].SeenShare == DefaultConfig().Messaging.Profiles["viber"].SeenShare
			}},
		// Rate limit and algorithm.
		{"rate limit", "rateLimit:\n  requests: 10\n  window: 1s\n  algorithm: fixed\n", "",
			func(c Config) bool {
				return c.RateLimit.Requests == 10 && c.RateLimit.Window == time.Second && c.RateLimit.RetryAfter
			}},
		// An unknown field is refused with its line and column.
		{"unknown field", "rateLimit:\n  request: 10\n", "sim.yaml:2:3: unknown field \"request\" (did you mean rateLimit.requests?)", nil},
		// A key at the wrong level is named at its right place.
		{"wrong level", "accounts:\n  - login: x\n", "sim.yaml:1:1: unknown field \"accounts\" (did you mean messaging.accounts?)", nil},
		{"misspelt in a list", "messaging:\n  accounts:\n    - login: x\n      pasword: y\n", "(did you mean messaging.accounts[].password?)", nil},
		{"far from all", "zzzzzzzzzzzz: 1\n", "sim.yaml:1:1: unknown field \"zzzzzzzzzzzz\" (the fields are listed in sim/README.md)", nil},
		// A wrong type is refused with its position.
		{"bad type", "truthCap: many\n", "sim.yaml:1:", nil},
		// Semantic problems are all named.
		// Semantic problems name file:line:col of the field and the field, all at once.
		{"bad values", "rateLimit:\n  algorithm: leaky\nfaults:\n  error500: 2\n", "sim.yaml:2:14: rateLimit.algorithm", nil},
		{"second of two", "rateLimit:\n  algorithm: leaky\nfaults:\n  error500: 2\n", "sim.yaml:4:13: faults.error500: 2 is not a share", nil},
		{"bad share", "faults:\n  error503: -0.1\n", "sim.yaml:2:13: faults.error503", nil},
		{"unknown channel", "messaging:\n  accounts:\n    - login: a\n      channels: [fax]\n", "sim.yaml:4:18: messaging.accounts[0].channels[0]", nil},
		{"bad cidr", "messaging:\n  accounts:\n    - login: a\n      allowIps: [10.0.0.0/99]\n", "sim.yaml:4:18: messaging.accounts[0].allowIps[0]", nil},
		{"bad secret", "callbacks:\n  signingSecret: 'whsec_%%%'\n", "sim.yaml:2:18: callbacks.signingSecret", nil},
		{"zero window", "rateLimit:\n  requests: 5\n  window: 0s\n", "sim.yaml:3:11: rateLimit.window", nil},
		// A problem of a whole section points at the section.
		{"shares sum", "faults:\n  error500: 0.6\n  error503: 0.6\n", "sim.yaml:2:11: faults: the shares add up", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("sim.yaml", []byte(tt.yaml))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !tt.check(cfg) {
					t.Fatalf("config %+v", cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, errConfig) {
				t.Fatalf("want error containing %q, got %v", tt.wantErr, err)
			}
		})
	}
}

func TestLoadConfigFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sim.yaml")
	if err := os.WriteFile(p, []byte("seed: 42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(p)
	if err != nil || cfg.Seed != 42 {
		t.Fatalf("%v %d", err, cfg.Seed)
	}
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		w    time.Duration
		fail bool
	}{
		{"100/1m", 100, time.Minute, false}, // the seed's limit
		{"100/m", 100, time.Minute, false},  // bare unit means one
		{"5/10s", 5, 10 * time.Second, false},
		{"0/1m", 0, time.Minute, false},         // 0 disables
		{"100", 0, 0, true},                     // no window
		{"x/1m", 0, 0, true},                    // not a number
		{"-1/1m", 0, 0, true},                   // negative
		{"10/0s", 0, 0, true},                   // empty window
		{"10/fortnight", 0, 0, true},            // not a duration
		{"100/min", 100, time.Minute, false},    // the one grammar: scenarios' unit names too
		{"20/sec", 20, time.Second, false},      //
		{"10/.5m", 10, 30 * time.Second, false}, // a fraction of a minute, not 1.5m
		{"2.5/s", 0, 0, true},                   // a number of requests is whole
		{"1e20/1m", 0, 0, true},                 // and fits
	}
	for _, tt := range tests {
		n, w, err := ParseRate(tt.in)
		if (err != nil) != tt.fail || n != tt.n || w != tt.w {
			t.Errorf("ParseRate(%q) = %d, %v, %v", tt.in, n, w, err)
		}
	}
}
