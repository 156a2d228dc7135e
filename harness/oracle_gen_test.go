package harness

// The generator of the oracle test (oracle_test.go): one int64 seed gives one
// case — an API, a simulator configuration, a message chain, a load shape,
// retries, probes, externalIds and the target shape — small enough that 40
// cases run in a few minutes on two busy cores.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/sim"
)

// oCase is one generated case. Everything the run depends on is here, so the
// failure message can print it as YAML.
type oCase struct {
	Seed       int64            `yaml:"seed"`
	Simple     bool             `yaml:"simple,omitempty"` // single channel (or notify), no faults: should pass on any correct build
	API        string           `yaml:"api"`
	Standalone bool             `yaml:"standalone,omitempty"` // sim and sink started by the test, scenario points at their URLs
	Clients    int              `yaml:"clients"`
	Chain      []oItem          `yaml:"chain,omitempty"`    // messaging
	Profiles   map[string]oProf `yaml:"profiles,omitempty"` // messaging, per channel of the chain
	Notify     oDelay           `yaml:"notifyDelay,omitempty"`
	// NotifyOutcomes are the notification outcome shares (standalone only:
	// the scenario's sim: block has no field for them).
	NotifyOutcomes map[string]float64 `yaml:"notifyOutcomes,omitempty"`
	Load           oLoad              `yaml:"load"`
	Limit          *oLimit            `yaml:"limit,omitempty"` // notify: the simulator's limit (mode exceed)
	Faults         map[string]float64 `yaml:"faults,omitempty"`
	Callbacks      oCallbacks         `yaml:"callbacks,omitempty"`
	Retry          bool               `yaml:"retry,omitempty"` // retry on 500, 503, timeout (reset)
	Probes         float64            `yaml:"probes,omitempty"`
	OwnIDs         bool               `yaml:"ownExternalIds,omitempty"`
	Grace          time.Duration      `yaml:"grace"`
}

type oItem struct {
	Channel string `yaml:"channel"`
	Cond    string `yaml:"condition,omitempty"` // "" no failover; DELIVERED or SEEN
	TTL     int    `yaml:"ttl,omitempty"`
}

type oProf struct {
	Delay    oDelay             `yaml:"delay"`
	Outcomes map[string]float64 `yaml:"outcomes"`
}

type oDelay struct {
	Median time.Duration `yaml:"median,omitempty"`
	P95    time.Duration `yaml:"p95,omitempty"`
}

type oLoad struct {
	Profile  string  `yaml:"profile"` // constant or steps
	Rate     int     `yaml:"rate,omitempty"`
	Steps    []oStep `yaml:"steps,omitempty"`
	Requests int     `yaml:"requests"`
}

type oStep struct {
	Rate int           `yaml:"rate"` // per second
	For  time.Duration `yaml:"for"`
}

type oLimit struct {
	Requests  int           `yaml:"requests"`
	Window    time.Duration `yaml:"window"`
	Algorithm string        `yaml:"algorithm"`
}

type oCallbacks struct {
	Drop      float64       `yaml:"drop,omitempty"`
	Duplicate float64       `yaml:"duplicate,omitempty"`
	Reorder   float64       `yaml:"reorder,omitempty"`
	Delay     time.Duration `yaml:"delay,omitempty"`
	// DelayShare is the share of calls delayed (standalone only: the
	// scenario's callbacks.delay delays every call).
	DelayShare float64 `yaml:"delayShare,omitempty"`
}

// genCase draws the case of seed.
func genCase(seed int64) oCase {
	r := rand.New(rand.NewPCG(uint64(seed), 0x6f7261636c65))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	share := func(max float64) float64 { return float64(r.IntN(int(max*100)+1)) / 100 }
	dur := func(lo, hi time.Duration) time.Duration {
		ms := lo.Milliseconds() + r.Int64N(hi.Milliseconds()-lo.Milliseconds()+1)
		return time.Duration(ms) * time.Millisecond
	}
	delay := func() oDelay {
		m := dur(20*time.Millisecond, 300*time.Millisecond)
		p := time.Duration(float64(m) * (1.2 + 2.5*r.Float64())).Round(time.Millisecond)
		return oDelay{Median: m, P95: p}
	}
	c := oCase{Seed: seed, Clients: 1, Grace: 15 * time.Second}
	c.Simple = r.IntN(4) == 0
	c.API = rundir.APIMessaging
	if r.IntN(2) == 0 {
		c.API = rundir.APINotify
	}
	// Load: at most 60 messages in at most 3 s.
	n := 5 + r.IntN(56)
	if c.Simple || r.IntN(2) == 0 {
		rate := 10 + r.IntN(31)
		for n > 3*rate {
			rate++
		}
		c.Load = oLoad{Profile: "constant", Rate: rate, Requests: n}
	} else {
		// bursts: fast, slow, fast
		c.Load = oLoad{Profile: "steps", Requests: n, Steps: []oStep{
			{Rate: 30 + r.IntN(31), For: dur(300*time.Millisecond, 700*time.Millisecond)},
			{Rate: 1 + r.IntN(5), For: dur(300*time.Millisecond, 1000*time.Millisecond)},
			{Rate: 30 + r.IntN(31), For: dur(300*time.Millisecond, 1000*time.Millisecond)},
		}}
	}
	if c.API == rundir.APIMessaging {
		c.Profiles = map[string]oProf{}
		length := 1
		if !c.Simple {
			length = 1 + r.IntN(3)
		}
		chans := []string{rundir.ChannelSMS, rundir.ChannelViber, rundir.ChannelPush, rundir.ChannelWhatsApp}
		r.Shuffle(len(chans), func(i, j int) { chans[i], chans[j] = chans[j], chans[i] })
		if c.Simple {
			chans[0] = pick(rundir.ChannelSMS, rundir.ChannelViber)
		}
		for i := range length {
			it := oItem{Channel: chans[i]}
			if i < length-1 && r.IntN(8) > 0 {
				it.Cond = pick(rundir.StateDelivered, rundir.StateDelivered, rundir.StateSeen)
				it.TTL = 1 + r.IntN(2)
				if r.IntN(15) == 0 {
					it.TTL = 0
				}
			}
			c.Chain = append(c.Chain, it)
			p := oProf{Delay: delay(), Outcomes: map[string]float64{}}
			left := 1.0
			for _, st := range []string{rundir.StateNotDelivered, rundir.StateFailed} {
				if !c.Simple || r.IntN(3) == 0 {
					s := share(0.25)
					p.Outcomes[st] = s
					left -= s
				}
			}
			if it.Channel == rundir.ChannelViber || it.Channel == rundir.ChannelWhatsApp {
				s := share(left * 0.8)
				p.Outcomes[rundir.StateSeen] = s
				left -= s
			}
			p.Outcomes[rundir.StateDelivered] = float64(int(left*100+0.5)) / 100
			c.Profiles[it.Channel] = p
		}
	} else {
		c.Notify = delay()
		c.Clients = 1 + r.IntN(3)
		if !c.Simple {
			c.OwnIDs = r.IntN(3) == 0
			if r.IntN(2) == 0 {
				c.Probes = share(0.3)
			}
			if r.IntN(5) < 2 {
				c.Limit = &oLimit{Requests: 5 + r.IntN(26), Window: []time.Duration{2 * time.Second, 3 * time.Second, 5 * time.Second, 10 * time.Second}[r.IntN(4)],
					Algorithm: pick(sim.AlgSliding, sim.AlgFixed, sim.AlgTokenBucket)}
			}
		}
	}
	if !c.Simple {
		if r.IntN(2) == 0 {
			c.Faults = map[string]float64{}
			for _, f := range []string{"error500", "error503", "processedThen500", "resetAfterProcessing"} {
				if r.IntN(2) == 0 {
					c.Faults[f] = share(0.1)
				}
			}
			c.Retry = r.IntN(3) > 0
		}
		if r.IntN(2) == 0 {
			if r.IntN(2) == 0 {
				c.Callbacks.Drop = share(0.15)
			}
			if r.IntN(2) == 0 {
				c.Callbacks.Duplicate = share(0.15)
			}
			if r.IntN(2) == 0 {
				c.Callbacks.Reorder = share(0.2)
			}
			if r.IntN(3) == 0 {
				c.Callbacks.Delay = dur(50*time.Millisecond, 1500*time.Millisecond)
			}
		}
		c.Standalone = r.IntN(5) == 0
		if c.Standalone {
			c.Callbacks.Drop = 0 // a standalone run waits its whole grace for a dropped callback
			c.Grace = 8 * time.Second
			// What a scenario's sim: block cannot set, the test's own
			// simulator can: notification outcomes, a share of delayed calls.
			if c.API == rundir.APINotify && r.IntN(2) == 0 {
				u, f := share(0.3), share(0.2)
				c.NotifyOutcomes = map[string]float64{rundir.NotifyUndelivered: u, rundir.NotifyFailed: f, rundir.NotifyDelivered: 1 - u - f}
			}
			if c.Callbacks.Delay > 0 {
				c.Callbacks.DelayShare = 0.2 + share(0.8)
			}
		}
	}
	return c
}

// rateSpec writes n per second as a scenario rate.
func rateSpec(n int) string { return fmt.Sprintf("%d/s", n) }

// scenarioYAML is the scenario file of c; simURL and sinkURL are the
// standalone simulator and sink ("" when embedded).
func (c oCase) scenarioYAML(simURL, sinkURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: oracle-%d\napi: %s\n", c.Seed, c.API)
	if c.Standalone {
		if c.API == rundir.APINotify {
			fmt.Fprintf(&b, "target: { baseUrl: %q, tokenUrl: %q }\n", simURL, simURL+"/oauth/token")
		} else {
			fmt.Fprintf(&b, "target: { baseUrl: %q }\n", simURL)
		}
		fmt.Fprintf(&b, "sink: %q\n", sinkURL)
		if c.API == rundir.APINotify {
			b.WriteString("clients:\n")
			for i := range c.Clients {
				fmt.Fprintf(&b, "  - { clientId: demo-%d, clientSecret: demo }\n", i+1)
			}
		} else {
			b.WriteString("auth: { login: demo, password: demo }\n")
		}
	} else {
		b.WriteString("target: embedded\n")
		fmt.Fprintf(&b, "clients: %d\n", c.Clients)
	}
	switch c.Load.Profile {
	case "constant":
		fmt.Fprintf(&b, "load: { rate: %s, requests: %d }\n", rateSpec(c.Load.Rate), c.Load.Requests)
	case "steps":
		b.WriteString("load:\n  profile: steps\n  steps:\n")
		for _, s := range c.Load.Steps {
			fmt.Fprintf(&b, "    - { rate: %s, duration: %s }\n", rateSpec(s.Rate), s.For)
		}
		fmt.Fprintf(&b, "  requests: %d\n", c.Load.Requests)
	}
	if c.Limit != nil {
		fmt.Fprintf(&b, "limit: { rate: %d/%s, mode: exceed }\n", c.Limit.Requests, c.Limit.Window)
	} else {
		b.WriteString("limit: { rate: 100000/1m, mode: exceed }\n")
	}
	b.WriteString("message:\n  recipient: \"+7999{0000000-0009999}\"\n  text: \"oracle {{.Seq}}\"\n")
	if c.OwnIDs {
		b.WriteString("  externalId: \"order-{{.Seq}}\"\n")
	}
	if c.API == rundir.APIMessaging {
		b.WriteString("  scenario:\n")
		for _, it := range c.Chain {
			fmt.Fprintf(&b, "    - { channel: %s, sender: oracle", it.Channel)
			if it.Cond != "" {
				fmt.Fprintf(&b, ", failover: { ttl: %d, condition_status: %s }", it.TTL, it.Cond)
			}
			b.WriteString(" }\n")
		}
	}
	if c.Retry {
		b.WriteString("retry: { on: [500, 503, timeout], max: 2, backoff: 50ms, jitter: 0, timeout: 5s }\n")
	} else {
		b.WriteString("retry: { max: 0, timeout: 5s }\n")
	}
	if c.Probes > 0 {
		fmt.Fprintf(&b, "idempotency: { probes: %g }\n", c.Probes)
	}
	fmt.Fprintf(&b, "delivery: { via: sink, grace: %s }\n", c.Grace)
	if !c.Standalone {
		b.WriteString("sim:\n  seed: " + fmt.Sprint(c.Seed&0x7fffffff|1) + "\n")
		if c.Limit != nil {
			fmt.Fprintf(&b, "  rateLimit: { rate: %d/%s, algorithm: %s }\n", c.Limit.Requests, c.Limit.Window, c.Limit.Algorithm)
		}
		if len(c.Faults) > 0 {
			b.WriteString("  faults: {")
			b.WriteString(joinShares(c.Faults))
			b.WriteString(" }\n")
		}
		cb := map[string]float64{"drop": c.Callbacks.Drop, "duplicate": c.Callbacks.Duplicate, "reorder": c.Callbacks.Reorder}
		if s := joinShares(cb); s != "" || c.Callbacks.Delay > 0 {
			b.WriteString("  callbacks: {" + s)
			if c.Callbacks.Delay > 0 {
				if s != "" {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, " delay: %s", c.Callbacks.Delay)
			}
			b.WriteString(" }\n")
		}
		if c.API == rundir.APINotify {
			fmt.Fprintf(&b, "  notifyDelay: { median: %s, p95: %s }\n", c.Notify.Median, c.Notify.P95)
		} else {
			b.WriteString("  incomingShare: 0\n  profiles:\n")
			for _, it := range c.Chain {
				p := c.Profiles[it.Channel]
				fmt.Fprintf(&b, "    %s: { median: %s, p95: %s, outcomes: {%s } }\n", it.Channel, p.Delay.Median, p.Delay.P95, joinShares(p.Outcomes))
			}
		}
	}
	return b.String()
}

// joinShares writes the non-zero shares of m as " k: v, k: v" in key order.
func joinShares(m map[string]float64) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf(" %s: %g", k, m[k]))
	}
	return strings.Join(parts, ",")
}

// simConfig is the standalone simulator of c, built here (not by the
// harness's mapping of the scenario's sim: block).
func (c oCase) simConfig() sim.Config {
	cfg := sim.DefaultConfig()
	cfg.Seed = uint64(c.Seed&0x7fffffff | 1)
	cfg.Messaging.IncomingShare = 0
	for i := range cfg.Messaging.Accounts {
		a := &cfg.Messaging.Accounts[i]
		if !a.NoAPIRight && !slices.Contains(a.Channels, rundir.ChannelWhatsApp) {
			a.Channels = append(a.Channels, rundir.ChannelWhatsApp)
		}
	}
	lognormal := func(d oDelay) sim.Delay { return sim.Delay{Dist: "lognormal", Median: d.Median, P95: d.P95} }
	for ch, p := range c.Profiles {
		cp := cfg.Messaging.Profiles[ch]
		cp.Delay = lognormal(p.Delay)
		cp.Outcomes = nil
		delivered := p.Outcomes[rundir.StateDelivered] + p.Outcomes[rundir.StateSeen]
		if delivered > 0 {
			cp.Outcomes = append(cp.Outcomes, sim.Outcome{State: rundir.StateDelivered, Weight: delivered})
		}
		if w := p.Outcomes[rundir.StateNotDelivered]; w > 0 {
			cp.Outcomes = append(cp.Outcomes, sim.Outcome{State: rundir.StateNotDelivered, Code: 6, Weight: w})
		}
		if w := p.Outcomes[rundir.StateFailed]; w > 0 {
			cp.Outcomes = append(cp.Outcomes, sim.Outcome{State: rundir.StateFailed, Code: 252, Weight: w})
		}
		cp.SeenShare = 0
		if delivered > 0 {
			cp.SeenShare = p.Outcomes[rundir.StateSeen] / delivered
		}
		cfg.Messaging.Profiles[ch] = cp
	}
	if c.Notify.Median > 0 {
		cfg.Notify.Delay = lognormal(c.Notify)
	}
	if c.Limit != nil {
		cfg.RateLimit.Requests, cfg.RateLimit.Window, cfg.RateLimit.Algorithm = c.Limit.Requests, c.Limit.Window, c.Limit.Algorithm
	} else {
		cfg.RateLimit.Requests, cfg.RateLimit.Window = 100000, time.Minute
	}
	cfg.Faults.Error500 = c.Faults["error500"]
	cfg.Faults.Error503 = c.Faults["error503"]
	cfg.Faults.ProcessedThen500 = c.Faults["processedThen500"]
	cfg.Faults.ProcessedThenReset = c.Faults["resetAfterProcessing"]
	cfg.Callbacks.Drop = c.Callbacks.Drop
	cfg.Callbacks.Duplicate = c.Callbacks.Duplicate
	cfg.Callbacks.Reorder = c.Callbacks.Reorder
	if c.Callbacks.Delay > 0 {
		cfg.Callbacks.Delay, cfg.Callbacks.DelayBy = 1, c.Callbacks.Delay
		if c.Callbacks.DelayShare > 0 {
			cfg.Callbacks.Delay = c.Callbacks.DelayShare
		}
	}
	if len(c.NotifyOutcomes) > 0 {
		cfg.Notify.Outcomes = nil
		for _, st := range []string{rundir.NotifyDelivered, rundir.NotifyUndelivered, rundir.NotifyFailed} {
			if w := c.NotifyOutcomes[st]; w > 0 {
				code := 0
				if st != rundir.NotifyDelivered {
					code = 6
				}
				cfg.Notify.Outcomes = append(cfg.Notify.Outcomes, sim.Outcome{State: st, Code: code, Weight: w})
			}
		}
	}
	return cfg
}
