package harness

// The generator of the oracle test (oracle_test.go): one int64 seed gives one
// case — an API, a simulator configuration, a message chain, a load shape,
// retries, probes, externalIds and the target shape — small enough that 40
// cases run in a few minutes on two busy cores.
//
// A case is drawn in two steps. The base case (API, chain, profiles, load,
// faults, callbacks, limit, standalone) comes from the seed's first stream,
// drawn as it always was, so a seed of testdata/oracle/regressions.txt keeps
// its base case. A second stream then picks the case's shape (oShape…) and
// widens it over the rest of the scenario schema; a shape overrides what it
// is about:
//
//   - classic: the base case as drawn;
//   - slow: grace shorter than delivery (median 1.5–3× the grace), so most
//     latencies are censored and their percentiles lower bounds;
//   - poll: messaging with delivery via poll (embedded or standalone): the
//     figures come from the check_status attempts and no callback may reach
//     the sink;
//   - vkok-reorder: a chain through vkok, whose status records carry no
//     channel, with callbacks reordered and duplicated: a channel-less record
//     is placed by its own time (updatedAt) and the chain;
//   - sink-fault: standalone, the test's sink refuses a share of calls (a
//     code) or holds them past the simulator's callback timeout: the
//     service's next arrivals are delivery.redelivered, never duplicates;
//   - processed-then-500: processedThen500 / resetAfterProcessing with
//     retries, so a message can end under two txIds
//     (idempotency.duplicate_deliveries).
//
// Scenario fields the generator reaches: api; target (embedded, or a
// standalone simulator's baseUrl/tokenUrl); sink (embedded or a standalone
// URL); auth; clients (a count for both APIs embedded, a list for notify
// standalone); load profiles constant, steps, ramp and sine with requests
// (a count, or a cap that ends the run early); limit (rate, mode exceed);
// maxMessages (below the plan); message recipient, text templates
// ({{.Seq}}, {{words N}}, {{digits N}}), textBytes, textParts, fill (ascii,
// cyrillic, emoji), externalId (tagged and own: order-{{.Seq}}), scenario
// (sms, viber, push, whatsapp, vkok; failover ttl and condition_status),
// trackData, clientRequestId; retry (on 500/503/timeout/reset, max,
// backoff, jitter, timeout); idempotency probes and concurrent; delivery
// via sink and poll, grace, pollInterval; sim seed, rateLimit (sliding,
// fixed, token-bucket), faults (error500, error503, processedThen500,
// resetAfterProcessing, latency), callbacks (drop, duplicate, reorder,
// delay), profiles (median, p95, outcomes DELIVERED NOT_DELIVERED SEEN
// FAILED), notifyDelay, incomingShare. Outside the schema: the standalone
// simulator's notification outcomes, a share of delayed calls, and the
// standalone sink's faults.
//
// Not reached, and why: parts, several runs sharing a sink, replay
// (load.file, externalIds keep) and shards — the multi-run shapes, drawn by
// their own tests; limit mode respect (most random plans are refused by
// validate, and respect's own figures are tested in scenarios and attack);
// delivery via none (no delivery figure to check); recipients lists and CSV
// files, schedule, urlOptions, attachments, buttons, push fields, a
// message's own callback URL, sim.tokenLifetime (none of them changes a
// figure the oracle computes; short token lifetimes are tested in
// harness/remote_token_test.go); tgotp (its records are viber's to the
// figures; adding it to the base draw would change every regression seed's
// case); load.maxInFlight (a cap the small cases never reach).

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

	// Drawn from the second stream (the shape and the rest of the schema).
	Shape        string        `yaml:"shape"`
	Poll         time.Duration `yaml:"pollInterval,omitempty"` // delivery via poll at this interval
	SinkFault    *oSinkFault   `yaml:"sinkFault,omitempty"`    // standalone: the sink refuses or holds a share of calls
	CallbackWait time.Duration `yaml:"callbackTimeout,omitempty"`
	RetryReset   bool          `yaml:"retryReset,omitempty"` // retry on reset too
	Jitter       float64       `yaml:"jitter,omitempty"`
	Concurrent   int           `yaml:"concurrent,omitempty"` // idempotency.concurrent (with probes)
	MaxMessages  int           `yaml:"maxMessages,omitempty"`
	TextBytes    int           `yaml:"textBytes,omitempty"`
	TextParts    int           `yaml:"textParts,omitempty"`
	Fill         string        `yaml:"fill,omitempty"`
	Text         string        `yaml:"text,omitempty"`
	TrackData    bool          `yaml:"trackData,omitempty"` // extra trackData keys and a clientRequestId
	Incoming     float64       `yaml:"incomingShare,omitempty"`
	SimLatency   time.Duration `yaml:"simLatency,omitempty"`
}

// Shapes of a case (oCase.Shape).
const (
	oShapeClassic   = "classic"
	oShapeSlow      = "slow"
	oShapePoll      = "poll"
	oShapeVkok      = "vkok-reorder"
	oShapeSinkFault = "sink-fault"
	oShapeP500      = "processed-then-500"
)

// oSinkFault is the standalone sink's fault (sink.Options.Fault).
type oSinkFault struct {
	Share float64       `yaml:"share"`
	Code  int           `yaml:"code,omitempty"`
	Delay time.Duration `yaml:"delay,omitempty"`
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
	Profile   string        `yaml:"profile"` // constant, steps, ramp or sine
	Rate      int           `yaml:"rate,omitempty"`
	Steps     []oStep       `yaml:"steps,omitempty"`
	From      int           `yaml:"from,omitempty"` // ramp
	To        int           `yaml:"to,omitempty"`
	Amplitude int           `yaml:"amplitude,omitempty"`
	Period    time.Duration `yaml:"period,omitempty"`
	Duration  time.Duration `yaml:"duration,omitempty"` // ramp, sine
	Requests  int           `yaml:"requests"`           // constant: the count; otherwise a cap
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

// genCase draws the case of seed: the base draw, then its shape and the
// rest of the schema (widen).
func genCase(seed int64) oCase {
	c := genBase(seed)
	c.widen(rand.New(rand.NewPCG(uint64(seed), 0x73686170657321)))
	return c
}

// genBase is the base draw of seed, without its shape and widening:
// TestOracleMulti builds its runs from it, since its own checks (every call
// of a part lost, a stopped shard's calls) judge callbacks, not polls.
func genBase(seed int64) oCase {
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
	case "ramp":
		fmt.Fprintf(&b, "load: { profile: ramp, from: %s, to: %s, duration: %s, requests: %d }\n", rateSpec(c.Load.From), rateSpec(c.Load.To), c.Load.Duration, c.Load.Requests)
	case "sine":
		fmt.Fprintf(&b, "load: { profile: sine, rate: %s, amplitude: %s, period: %s, duration: %s, requests: %d }\n",
			rateSpec(c.Load.Rate), rateSpec(c.Load.Amplitude), c.Load.Period, c.Load.Duration, c.Load.Requests)
	}
	if c.MaxMessages > 0 {
		fmt.Fprintf(&b, "maxMessages: %d\n", c.MaxMessages)
	}
	if c.Limit != nil {
		fmt.Fprintf(&b, "limit: { rate: %d/%s, mode: exceed }\n", c.Limit.Requests, c.Limit.Window)
	} else {
		b.WriteString("limit: { rate: 100000/1m, mode: exceed }\n")
	}
	text := c.Text
	if text == "" {
		text = "oracle {{.Seq}}"
	}
	fmt.Fprintf(&b, "message:\n  recipient: \"+7999{0000000-0009999}\"\n  text: %q\n", text)
	if c.TextBytes > 0 {
		fmt.Fprintf(&b, "  textBytes: %d\n", c.TextBytes)
	}
	if c.TextParts > 0 {
		fmt.Fprintf(&b, "  textParts: %d\n", c.TextParts)
	}
	if c.Fill != "" {
		fmt.Fprintf(&b, "  fill: %s\n", c.Fill)
	}
	if c.TrackData {
		b.WriteString("  trackData: { order: \"o-{{.Seq}}\", source: oracle }\n  clientRequestId: \"req-{{.Seq}}-{{digits 6}}\"\n")
	}
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
		on := "500, 503, timeout"
		if c.RetryReset {
			on += ", reset"
		}
		fmt.Fprintf(&b, "retry: { on: [%s], max: 2, backoff: 50ms, jitter: %g, timeout: 5s }\n", on, c.Jitter)
	} else {
		b.WriteString("retry: { max: 0, timeout: 5s }\n")
	}
	if c.Probes > 0 {
		if c.Concurrent > 0 {
			fmt.Fprintf(&b, "idempotency: { probes: %g, concurrent: %d }\n", c.Probes, c.Concurrent)
		} else {
			fmt.Fprintf(&b, "idempotency: { probes: %g }\n", c.Probes)
		}
	}
	if c.Poll > 0 {
		fmt.Fprintf(&b, "delivery: { via: poll, pollInterval: %s, grace: %s }\n", c.Poll, c.Grace)
	} else {
		fmt.Fprintf(&b, "delivery: { via: sink, grace: %s }\n", c.Grace)
	}
	if !c.Standalone {
		b.WriteString("sim:\n  seed: " + fmt.Sprint(c.Seed&0x7fffffff|1) + "\n")
		if c.Limit != nil {
			fmt.Fprintf(&b, "  rateLimit: { rate: %d/%s, algorithm: %s }\n", c.Limit.Requests, c.Limit.Window, c.Limit.Algorithm)
		}
		if len(c.Faults) > 0 || c.SimLatency > 0 {
			b.WriteString("  faults: {")
			b.WriteString(joinShares(c.Faults))
			if c.SimLatency > 0 {
				if joinShares(c.Faults) != "" {
					b.WriteString(",")
				}
				fmt.Fprintf(&b, " latency: %s", c.SimLatency)
			}
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
			fmt.Fprintf(&b, "  incomingShare: %g\n  profiles:\n", c.Incoming)
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
	if c.CallbackWait > 0 {
		cfg.Callbacks.Timeout = c.CallbackWait
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

// widen draws, from the case's second stream r, its shape (oShape…) and the
// fields of the schema the base draw leaves out (see the top of this file).
func (c *oCase) widen(r *rand.Rand) {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	share := func(lo, hi float64) float64 { return float64(int((lo+(hi-lo)*r.Float64())*100+0.5)) / 100 }
	dur := func(lo, hi time.Duration) time.Duration {
		ms := lo.Milliseconds() + r.Int64N(hi.Milliseconds()-lo.Milliseconds()+1)
		return time.Duration(ms) * time.Millisecond
	}
	shapes := []string{oShapeClassic, oShapeClassic, oShapeClassic, oShapeSlow, oShapeSlow, oShapeSinkFault, oShapeSinkFault, oShapeP500, oShapeP500}
	if c.API == rundir.APIMessaging {
		shapes = append(shapes, oShapePoll, oShapePoll, oShapeVkok, oShapeVkok)
	}
	c.Shape = shapes[r.IntN(len(shapes))]
	if c.Shape != oShapeClassic {
		c.Simple = false
	}
	switch c.Shape {
	case oShapeSlow:
		c.slow(r)
	case oShapePoll:
		c.Poll = dur(100*time.Millisecond, 300*time.Millisecond)
		c.Callbacks = oCallbacks{} // no callback is made
		c.Grace = 4 * time.Second
	case oShapeVkok:
		c.vkok(r)
	case oShapeSinkFault:
		c.Standalone = true
		c.Callbacks.Drop = 0
		c.Grace = 6 * time.Second
		if r.IntN(2) == 0 {
			c.SinkFault = &oSinkFault{Share: share(0.1, 0.4), Code: []int{500, 503, 429}[r.IntN(3)]}
		} else {
			// Held past the simulator's callback timeout: it gives up on
			// the call (the sink logged it) and sends it again.
			c.CallbackWait = 300 * time.Millisecond
			c.SinkFault = &oSinkFault{Share: share(0.1, 0.3), Delay: dur(450*time.Millisecond, 700*time.Millisecond)}
		}
		if c.Callbacks.Delay > 0 && c.Callbacks.DelayShare == 0 {
			c.Callbacks.DelayShare = share(0.2, 1)
		}
	case oShapeP500:
		c.processedThen500(r, share)
	}
	// The rest of the schema, on any shape.
	n := c.Load.Requests
	if !c.Simple && r.IntN(10) < 4 {
		if r.IntN(2) == 0 {
			c.Load = oLoad{Profile: "ramp", From: 5 + r.IntN(16), To: 20 + r.IntN(41), Duration: dur(time.Second, 2500*time.Millisecond), Requests: n}
		} else {
			rate := 15 + r.IntN(21)
			c.Load = oLoad{Profile: "sine", Rate: rate, Amplitude: 1 + r.IntN(rate), Period: dur(500*time.Millisecond, 2*time.Second), Duration: dur(time.Second, 3*time.Second), Requests: n}
		}
	}
	if c.API == rundir.APIMessaging && !c.Standalone && r.IntN(3) == 0 {
		c.Clients = 2 + r.IntN(2)
	}
	switch k := r.IntN(20); {
	case k < 4:
		c.TextBytes, c.Fill = 20+r.IntN(380), pick("ascii", "cyrillic", "emoji")
	case k < 7:
		c.TextParts, c.Fill = 1+r.IntN(3), pick("ascii", "cyrillic", "emoji")
	case k < 12:
		c.Text = "oracle {{.Seq}} {{words 3}} {{digits 4}}"
	}
	if r.IntN(7) == 0 {
		c.MaxMessages = max(3, n*(50+r.IntN(41))/100)
	}
	if c.API == rundir.APIMessaging {
		if !c.Standalone && r.IntN(4) == 0 {
			c.Incoming = share(0.1, 0.5)
		}
		c.TrackData = r.IntN(5) == 0
	}
	if !c.Standalone && r.IntN(7) == 0 {
		c.SimLatency = dur(5*time.Millisecond, 30*time.Millisecond)
	}
	if c.Probes > 0 && r.IntN(2) == 0 {
		c.Concurrent = 1 + r.IntN(3)
	}
	if c.Retry && r.IntN(3) == 0 {
		c.Jitter = share(0.1, 0.3)
	}
}

// slow makes delivery slower than the grace: most messages have no final
// status by the deadline, so their latencies are censored.
func (c *oCase) slow(r *rand.Rand) {
	c.Grace = time.Duration(1000+r.IntN(1001)) * time.Millisecond
	slower := func() oDelay {
		m := time.Duration(float64(c.Grace) * (1.5 + 1.5*r.Float64())).Round(time.Millisecond)
		return oDelay{Median: m, P95: time.Duration(float64(m) * 1.3).Round(time.Millisecond)}
	}
	for ch, p := range c.Profiles {
		p.Delay = slower()
		c.Profiles[ch] = p
	}
	if c.API == rundir.APINotify {
		c.Notify = slower()
	}
	c.Load.Requests = min(c.Load.Requests, 30)
	c.Callbacks.Delay, c.Callbacks.DelayShare = 0, 0
}

// vkok makes the chain go through vkok, whose status records carry no
// channel, with callbacks reordered and duplicated (and, one case in three,
// retries after processed-then-500): a record without a channel must be
// placed by its own time, not its arrival.
func (c *oCase) vkok(r *rand.Rand) {
	first := []string{rundir.ChannelSMS, rundir.ChannelPush, rundir.ChannelViber}[r.IntN(3)]
	fast := func() oDelay {
		m := time.Duration(20+r.IntN(100)) * time.Millisecond
		return oDelay{Median: m, P95: m * 3}
	}
	out := func(seen bool) map[string]float64 {
		o := map[string]float64{rundir.StateNotDelivered: float64(r.IntN(20)) / 100, rundir.StateFailed: float64(r.IntN(10)) / 100}
		left := 1 - o[rundir.StateNotDelivered] - o[rundir.StateFailed]
		if seen {
			o[rundir.StateSeen] = float64(int(left*50*r.Float64())) / 100
			left -= o[rundir.StateSeen]
		}
		o[rundir.StateDelivered] = float64(int(left*100+0.5)) / 100
		return o
	}
	// sms and push are never SEEN: under a SEEN condition they wait for the
	// ttl and EXPIRE, while vkok's records overtake the EXPIRED ones.
	cond := rundir.StateSeen
	if first == rundir.ChannelViber && r.IntN(2) == 0 {
		cond = rundir.StateDelivered
	}
	c.Chain = []oItem{{Channel: first, Cond: cond, TTL: 1}, {Channel: rundir.ChannelVKOK}}
	c.Profiles = map[string]oProf{first: {Delay: fast(), Outcomes: out(first == rundir.ChannelViber)}, rundir.ChannelVKOK: {Delay: fast(), Outcomes: out(true)}}
	if r.IntN(3) == 0 {
		last := rundir.ChannelSMS
		if first == rundir.ChannelSMS {
			last = rundir.ChannelPush
		}
		c.Chain[1].Cond, c.Chain[1].TTL = []string{rundir.StateDelivered, rundir.StateSeen}[r.IntN(2)], 1
		c.Chain = append(c.Chain, oItem{Channel: last})
		c.Profiles[last] = oProf{Delay: fast(), Outcomes: out(false)}
	}
	c.Callbacks = oCallbacks{Reorder: float64(30+r.IntN(31)) / 100, Duplicate: float64(10+r.IntN(21)) / 100}
	c.Standalone = r.IntN(4) == 0
	c.Grace = 6 * time.Second
	if r.IntN(4) == 0 {
		// vkok's records read by polls: the answer names no channel either,
		// and a poll may read the send's ACCEPTED before any status.
		c.Poll, c.Callbacks = time.Duration(50+r.IntN(200))*time.Millisecond, oCallbacks{}
		// Without vkok's FAILED and EXPIRED: read by a poll that missed the
		// first item's EXPIRED, a FAILED or EXPIRED without a channel cannot
		// be told from the first item's (the seed lets any channel omit it),
		// so the report keeps it there and the message is lost while it
		// ended (its truth comparison says so; reported, not drawn).
		c.Chain = c.Chain[:2]
		c.Chain[1].Cond, c.Chain[1].TTL = "", 0
		o := c.Profiles[rundir.ChannelVKOK].Outcomes
		o[rundir.StateNotDelivered] += o[rundir.StateFailed]
		delete(o, rundir.StateFailed)
		for ch := range c.Profiles {
			if chainIndex(c.Chain, ch) < 0 {
				delete(c.Profiles, ch)
			}
		}
	}
	if !c.Standalone && r.IntN(4) == 0 {
		c.Callbacks.Drop = float64(r.IntN(11)) / 100
	}
	if r.IntN(3) == 0 {
		c.Faults = map[string]float64{"processedThen500": float64(10+r.IntN(16)) / 100}
		c.Retry = true
	}
}

// processedThen500 has a share of sends processed and answered 500, or
// reset after processing, always retried: a message can end under two
// txIds (messaging), which idempotency.duplicate_deliveries counts.
func (c *oCase) processedThen500(r *rand.Rand, share func(lo, hi float64) float64) {
	if c.Faults == nil {
		c.Faults = map[string]float64{}
	}
	c.Faults["processedThen500"] = share(0.1, 0.3)
	if r.IntN(2) == 0 {
		c.Faults["resetAfterProcessing"] = share(0.05, 0.15)
		c.RetryReset = true
	}
	c.Retry = true
	if c.Grace > 8*time.Second && !c.Standalone {
		c.Grace = 8 * time.Second
	}
}
