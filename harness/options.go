package harness

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/attack"
	"github.com/msgload/msgload/attack/message"
	"github.com/msgload/msgload/replay"
	"github.com/msgload/msgload/rundir"
	"github.com/msgload/msgload/scenarios"
	"github.com/msgload/msgload/sim"
)

// vegetaRate turns a scenario rate (a float count per window) into vegeta's
// integer Freq per Per without losing a fractional count: 2.5/s is 2500/1000s.
func vegetaRate(r scenarios.Rate) vegeta.Rate {
	if r.Per <= 0 || r.Count <= 0 {
		return vegeta.Rate{}
	}
	if r.Count == math.Trunc(r.Count) {
		return vegeta.Rate{Freq: int(r.Count), Per: r.Per}
	}
	return vegeta.Rate{Freq: int(math.Round(r.Count * 1000)), Per: r.Per * 1000}
}

// pacer builds the scenario's load profile.
func pacer(l scenarios.LoadSpec) (vegeta.Pacer, error) {
	switch l.Profile {
	case "constant":
		return attack.Constant(vegetaRate(l.Rate)), nil
	case "ramp":
		return attack.NewRamp(vegetaRate(l.From), vegetaRate(l.To), l.Duration.D), nil
	case "steps":
		st := make(attack.Steps, 0, len(l.Steps))
		for _, s := range l.Steps {
			st = append(st, attack.Step{Rate: vegetaRate(s.Rate), For: s.Duration.D})
		}
		return st, nil
	case "sine":
		return attack.Sine(vegetaRate(l.Rate), vegetaRate(l.Amplitude), l.Period.D), nil
	}
	return nil, fmt.Errorf("load.profile %q: unknown", l.Profile)
}

// load is what drives a part: when messages leave, how many, and their bodies.
type load struct {
	pacer     vegeta.Pacer
	profile   string
	requests  int64
	body      func(seq int64, client string, tag rundir.Tag) ([]byte, error)
	clientFor func(seq int64) string
	chain     []string
	extra     []attack.Extra        // requests besides the messages (a replay's other recorded requests)
	repeatOf  func(seq int64) int64 // a replay's recorded resends (attack.Options.RepeatOf)
	messages  int64                 // messages planned when not every hit is one (a replay's repeats); 0 = requests
	// replayed builds replay.json from the attempt log (load.profile replay only).
	replayed func(runID, attemptsPath string) (*replay.Report, error)
}

// scenarioLoad is the scenario's own load profile with generated messages.
func scenarioLoad(s *scenarios.Scenario, sinkURL string) (load, error) {
	if s.Load.Profile == "replay" {
		return replayLoad(s, sinkURL)
	}
	p, err := pacer(s.Load)
	if err != nil {
		return load{}, err
	}
	if s.API == rundir.APIMessaging && s.Message.Callback == "" && s.Delivery.Via != "poll" && s.Delivery.Via != "none" {
		s.Message.Callback = sinkURL + rundir.SinkCallback
	}
	gen, err := message.New(s.API, s.ResolvedMessage(), s.Sim.Seed)
	if err != nil {
		return load{}, fmt.Errorf("message generator: %w", err)
	}
	return load{
		pacer: p, profile: s.Load.Profile, requests: s.Load.Requests, chain: gen.Chain(),
		body: func(seq int64, client string, tag rundir.Tag) ([]byte, error) {
			b, _, err := gen.Body(seq, client, tag)
			return b, err
		},
	}, nil
}

// replayLoad replays the scenario's API from load.file at load.speed: the
// recorded sends as messages (recorded bodies, fresh correlation tags,
// externalIds new or kept as load.externalIds says, callbacks pointed at the
// sink, recorded clients mapped onto the scenario's), and the API's other
// recorded requests as the attack's extras, at their recorded times.
func replayLoad(s *scenarios.Scenario, sinkURL string) (load, error) {
	path := s.ResolvePath(s.Load.File)
	reqs, err := replay.LoadWith(path, s.Load.Format, replay.ReadOptions{ClientHeader: s.Load.ClientHeader})
	if err != nil {
		return load{}, fmt.Errorf("load.file: %w", err)
	}
	ids := make([]string, 0, len(s.Creds))
	for _, c := range s.Creds {
		ids = append(ids, c.ID)
	}
	speed := s.Load.Speed
	rw := replay.AttackRewrite{ExternalIDs: s.Load.ExternalIDs}
	if s.Delivery.Via != "poll" && s.Delivery.Via != "none" {
		rw.SinkURL = sinkURL
	}
	plan, err := replay.ForAttack(reqs, s.API, ids, rw, speed)
	if err != nil {
		return load{}, fmt.Errorf("load.file %s: %w", path, err)
	}
	return load{pacer: plan.Pacer, profile: "replay", requests: plan.Requests, body: plan.Body, clientFor: plan.ClientFor,
		extra: plan.Extra, repeatOf: plan.RepeatOf, messages: plan.Requests - int64(plan.Repeats),
		replayed: func(runID, attemptsPath string) (*replay.Report, error) {
			return plan.Report(runID, speed, attemptsPath)
		}}, nil
}

// attackOptions maps the part's scenario and its load onto the attacker, and
// says in a rundir.Meta what was planned.
func (r *partRun) attackOptions(ld load, baseURL, tokenURL, sinkURL string) (attack.Options, rundir.Meta, error) {
	s := r.s
	plan := s.Plan()
	if ld.profile == "replay" {
		plan.Messages = cmp.Or(ld.messages, ld.requests)
	}
	retry, err := attackRetry(s)
	if err != nil {
		return attack.Options{}, rundir.Meta{}, err
	}
	o := r.attackBase(ld, baseURL, tokenURL, retry)
	via := s.Delivery.Via
	if (via == "poll" || via == "sink" && r.o.PollToo) && s.API == rundir.APIMessaging {
		o.Poll = &attack.Poll{Interval: s.Delivery.PollInterval.D, Until: plan.Duration + s.Delivery.Grace.D}
	}
	if via == "sink" && s.API == rundir.APINotify {
		o.WebhookURL = sinkURL + rundir.SinkWebhook
	}
	meta := r.partMeta(ld, plan, o.Limit, o.MaxMessages)
	if sh := r.shard; sh != nil {
		r.shardOptions(sh, &o, &meta)
	}
	if via != "sink" {
		meta.Delivery.Grace = 0
	}
	return o, meta, nil
}

// attackRetry is the scenario's retry section for the attacker.
func attackRetry(s *scenarios.Scenario) (attack.Retry, error) {
	retry := attack.Retry{Max: s.Retry.Max, Backoff: s.Retry.Backoff.D, MaxWait: s.Retry.MaxBackoff.D, Jitter: s.Retry.Jitter.F}
	for _, on := range s.Retry.On {
		switch on {
		case "timeout", "reset":
			retry.OnTimeout = true
		default:
			code, err := strconv.Atoi(on)
			if err != nil {
				return attack.Retry{}, fmt.Errorf("retry.on: %q is neither an HTTP code nor timeout", on)
			}
			retry.On = append(retry.On, code)
		}
	}
	return retry, nil
}

// attackLimit is the scenario's limit for the attacker: exceed when no limit
// is known (nothing to respect).
func attackLimit(s *scenarios.Scenario) attack.Limit {
	limit := attack.Limit{Mode: s.Limit.Mode}
	if !s.Limit.Rate.IsZero() {
		limit.Requests, limit.Window = int(s.Limit.Rate.Count), s.Limit.Rate.Per
	} else {
		limit.Mode = attack.ModeExceed
	}
	return limit
}

// maxMessages is the scenario's maxMessages, or the run's --max-messages
// when it is lower.
func (r *partRun) maxMessages() int64 {
	maxMsgs := r.s.MaxMessages
	if m := r.o.MaxMessages; m > 0 && (maxMsgs == 0 || m < maxMsgs) {
		maxMsgs = m
	}
	return maxMsgs
}

// attackBase is the attacker's options from the scenario and the load,
// before delivery and sharding.
func (r *partRun) attackBase(ld load, baseURL, tokenURL string, retry attack.Retry) attack.Options {
	s := r.s
	clients := make([]attack.Client, 0, len(s.Creds))
	for _, c := range s.Creds {
		clients = append(clients, attack.Client{ID: c.ID, Secret: c.Secret})
	}
	o := attack.Options{
		API:              s.API,
		BaseURL:          baseURL,
		TokenURL:         tokenURL,
		Clients:          clients,
		Pacer:            ld.pacer,
		Duration:         s.Load.ProfileDuration(), // steps have no load.duration of their own
		Requests:         ld.requests,
		ClientFor:        ld.clientFor,
		MaxMessages:      r.maxMessages(),
		Body:             ld.body,
		Chain:            ld.chain,
		RunID:            r.id,
		Part:             r.part,
		Scenario:         s.Name,
		Limit:            attackLimit(s),
		Retry:            retry,
		Probes:           s.Idempotency.Probes.F,
		ProbeConcurrency: s.Idempotency.Concurrent,
		ProbeInFlight:    s.Idempotency.InFlight,
		ProbeChangedBody: s.Idempotency.ChangedBody,
		HoldToken:        r.o.HoldToken,
		Timeout:          s.Retry.Timeout.D,
		// The run ends delivery.grace after the load: no retry leaves, and no
		// wait (backoff, Retry-After, the respect limiter) lasts, past it. A
		// grace of 0 still ends it with the load (Grace 0 would mean no end).
		Grace:       max(s.Delivery.Grace.D, time.Nanosecond),
		MaxInFlight: s.Load.MaxInFlight,
		Extra:       ld.extra,
		RepeatOf:    ld.repeatOf,
	}
	if ld.profile == "replay" {
		o.Duration = 0 // the replay pacer ends by itself
	}
	return o
}

// partMeta is the part's run.json: what was planned, under which limit.
func (r *partRun) partMeta(ld load, plan scenarios.Plan, limit attack.Limit, maxMsgs int64) rundir.Meta {
	s := r.s
	ids := make([]string, 0, len(s.Creds))
	for _, c := range s.Creds {
		ids = append(ids, c.ID)
	}
	target := "embedded"
	if !s.Target.Embedded {
		target = s.Target.BaseURL
	}
	meta := rundir.Meta{
		ID:          r.id,
		Part:        r.part,
		Scenario:    s.Name,
		API:         s.API,
		Target:      target,
		Version:     r.o.Version,
		Commit:      r.o.Commit,
		CommitTime:  r.o.CommitTime,
		Host:        cmp.Or(r.o.Host, rundir.Hostname()), // the machine that ran the attack
		Description: s.Description,
		Clients:     ids,
		MetricsAddr: r.metricsAddr,
		Chain:       ld.chain,
		Planned: rundir.Plan{
			Profile:  ld.profile,
			Rate:     plan.RatePerSecond,
			Requests: plan.Messages,
			Duration: rundir.Duration(plan.Duration),
			Counted:  s.Load.Requests > 0 && ld.profile != "replay",
		},
		Limit:      rundir.Limit{Requests: limit.Requests, Window: rundir.Duration(limit.Window), Mode: limit.Mode},
		Delivery:   rundir.Delivery{Via: s.Delivery.Via, Grace: rundir.Duration(s.Delivery.Grace.D)},
		Thresholds: s.ThresholdExprs(),
		Retry:      rundir.Retry{On: slices.Clone(s.Retry.On), Max: s.Retry.Max, Backoff: rundir.Duration(s.Retry.Backoff.D)},
		Probes:     s.Idempotency.Probes.F,
	}
	if s.Target.Metrics != "" {
		meta.TargetMemory = &rundir.MemorySource{URL: s.Target.RedactedMetrics(), Metric: s.Target.MemoryMetricName(), Every: rundir.Duration(cmp.Or(r.o.MemoryEvery, defaultMemoryEvery))}
	}
	if maxMsgs > 0 && meta.Planned.Requests > maxMsgs {
		// --max-messages is a deliberate cap, not a shortfall: the plan is what it lets go.
		meta.Planned.Requests = maxMsgs
	}
	meta.MaxInFlight = max(s.Load.MaxInFlight, 0) // rundir.NoInFlightCap: none, 0 in run.json
	meta.ScenarioDigest, meta.StartAt = r.digest, r.o.StartAt.UTC()
	return meta
}

// shardOptions narrows o and meta to the shard: the run's global sequences
// and the clients a single process would give them; the plan is this shard's
// share of the whole run's.
func (r *partRun) shardOptions(sh *rundir.Shard, o *attack.Options, meta *rundir.Meta) {
	all := make([]string, 0, len(r.whole.Creds))
	for _, c := range r.whole.Creds {
		all = append(all, c.ID)
	}
	o.Seq = sh.Seq
	o.ClientFor = func(seq int64) string { return all[(seq-1)%int64(len(all))] }
	o.Limit.Requests = shardLimit(*sh, o.Limit.Requests)
	whole := r.whole.Plan()
	meta.Planned.Requests = sh.Messages(whole.Messages)
	meta.Planned.Rate = whole.RatePerSecond * sh.Share()
	c := *sh
	meta.Shard = &c
	o.Shard = sh.String()
}

// simConfig is the embedded simulator for a part: the built-in accounts and
// clients, every client of the scenario known to it, callbacks and incoming
// messages to the sink, and the scenario's sim: settings.
func simConfig(s *scenarios.Scenario, sinkURL string) (sim.Config, error) {
	cfg := sim.DefaultConfig()
	ss := s.Sim
	cfg.Seed = uint64(ss.Seed)
	// Rate limit: sim.rateLimit.rate, else the scenario's limit, else the default.
	rl := ss.RateLimit.Rate
	if rl.IsZero() {
		rl = s.Limit.Rate
	}
	if !rl.IsZero() {
		cfg.RateLimit.Requests, cfg.RateLimit.Window = int(rl.Count), rl.Per
	}
	if ss.RateLimit.Algorithm != "" {
		cfg.RateLimit.Algorithm = ss.RateLimit.Algorithm
	}
	if ss.RateLimit.CountFailures != nil {
		cfg.RateLimit.CountFailures = *ss.RateLimit.CountFailures
	}
	cfg.RateLimit.Count429 = ss.RateLimit.Count429
	cfg.Faults = sim.Faults{
		Error500:           ss.Faults.Error500.F,
		Error503:           ss.Faults.Error503.F,
		ProcessedThen500:   ss.Faults.ProcessedThen500.F,
		ProcessedThenReset: ss.Faults.ResetAfterProcessing.F,
		Latency:            ss.Faults.Latency.D,
	}
	cfg.Callbacks.Drop = ss.Callbacks.Drop.F
	cfg.Callbacks.Duplicate = ss.Callbacks.Duplicate.F
	cfg.Callbacks.Reorder = ss.Callbacks.Reorder.F
	if d := ss.Callbacks.Delay.D; d > 0 {
		cfg.Callbacks.Delay, cfg.Callbacks.DelayBy = 1, d
	}
	simRetries(&cfg.Callbacks, ss.Callbacks)
	for ch, p := range ss.Profiles {
		cp := cfg.Messaging.Profiles[ch]
		if !p.Median.IsZero() {
			cp.Delay = lognormal(p.Median.D, p.P95.D)
		}
		if len(p.Outcomes) > 0 {
			outs, seen, err := outcomes(ch, p.Outcomes)
			if err != nil {
				return sim.Config{}, err
			}
			cp.Outcomes = outs
			if seen >= 0 {
				cp.SeenShare = seen
			}
		}
		cfg.Messaging.Profiles[ch] = cp
	}
	if !ss.NotifyDelay.Median.IsZero() {
		cfg.Notify.Delay = lognormal(ss.NotifyDelay.Median.D, ss.NotifyDelay.P95.D)
	}
	if !ss.IncomingShare.IsZero() {
		cfg.Messaging.IncomingShare = ss.IncomingShare.F
	}
	if d := ss.TokenLifetime.D; d > 0 {
		cfg.Notify.TokenLifetime = d
	}
	cfg.Notify.TokenExpiresIn = ss.TokenExpiresIn.D
	cfg.Messaging.Dedup = ss.MessagingDedup
	simIdempotency(&cfg, ss.Idempotency)

	addClients(&cfg, s)
	pointAccounts(&cfg, s, sinkURL)
	if errs := cfg.Validate(); len(errs) > 0 {
		return sim.Config{}, fmt.Errorf("%s: sim settings: %w", s.Name, errsJoin(errs))
	}
	return cfg, nil
}

// simIdempotency sets the simulator's externalId keeping from
// sim.idempotency (each field unset keeps the simulator's default).
func simIdempotency(cfg *sim.Config, id scenarios.SimIdempotency) {
	if d := id.Window.D; d > 0 {
		cfg.Notify.IdempotencyRetention = d
	}
	if id.ChangedBody != "" {
		cfg.Notify.IdempotencyMismatch = id.ChangedBody
	}
	if id.InFlight != "" {
		cfg.Notify.IdempotencyInFlight = id.InFlight
	}
	cfg.Notify.IdempotencyProcessing = id.Processing.D
}

// addClients makes every client of the scenario known to the simulator: a
// notify client with both scopes, a messaging account with the usual channels.
func addClients(cfg *sim.Config, s *scenarios.Scenario) {
	if s.API == rundir.APINotify {
		known := map[string]bool{}
		for _, c := range cfg.Notify.Clients {
			known[c.ID] = true
		}
		for _, c := range s.Creds {
			if !known[c.ID] {
				cfg.Notify.Clients = append(cfg.Notify.Clients, sim.Client{ID: c.ID, Secret: c.Secret, Scopes: []string{sim.ScopeNotification, sim.ScopeWebhook}})
			}
		}
	} else {
		known := map[string]bool{}
		for _, a := range cfg.Messaging.Accounts {
			known[a.Login] = true
		}
		for _, c := range s.Creds {
			if !known[c.ID] {
				cfg.Messaging.Accounts = append(cfg.Messaging.Accounts, sim.Account{Login: c.ID, Password: c.Secret,
					Channels: []string{rundir.ChannelSMS, rundir.ChannelViber, rundir.ChannelVKOK, rundir.ChannelPush}})
			}
		}
	}
}

// pointAccounts enables the channels the scenario names for its accounts
// and points their callbacks and incoming messages at the sink.
func pointAccounts(cfg *sim.Config, s *scenarios.Scenario, sinkURL string) {
	// Channels the scenario names are enabled for its accounts, so that a
	// whatsapp or tgotp scenario runs against the embedded simulator.
	for i := range cfg.Messaging.Accounts {
		a := &cfg.Messaging.Accounts[i]
		if a.NoAPIRight {
			continue
		}
		for _, it := range s.Message.Scenario {
			if !slices.Contains(a.Channels, it.Channel) {
				a.Channels = append(a.Channels, it.Channel)
			}
		}
		// Poll means poll: an account delivering by poll has no callback
		// address (a message's own callbackUrl, when the scenario asks for
		// callbacks too, still gets them), so the poll figures are polls'.
		if pollsOnly(s) {
			a.CallbackURL = ""
		} else {
			a.CallbackURL = sinkURL + rundir.SinkCallback
		}
		a.PartnerURL = sinkURL
	}
}

// pollsOnly reports whether the scenario measures delivery by polling
// (delivery.via: poll): its simulator is given no callback address.
func pollsOnly(s *scenarios.Scenario) bool { return s.Delivery.Via == "poll" }

func lognormal(median, p95 time.Duration) sim.Delay {
	if p95 <= median {
		return sim.Delay{Dist: "fixed", Median: median}
	}
	return sim.Delay{Dist: "lognormal", Median: median, P95: p95}
}

// outcomes turns the scenario's state → share map into the simulator's draw.
// Shares are of all messages: a SEEN message was DELIVERED first, so the
// delivered draw weighs DELIVERED+SEEN and the seen share returned is
// SEEN/(DELIVERED+SEEN) (-1 when SEEN is not named). NOT_DELIVERED and FAILED
// carry the seed's error codes.
func outcomes(ch string, m map[string]scenarios.Percent) ([]sim.Outcome, float64, error) {
	seen := -1.0
	var out []sim.Outcome
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, state := range keys {
		share := m[state].F
		switch state {
		case rundir.StateDelivered:
			out = append(out, sim.Outcome{State: state, Weight: share + m[rundir.StateSeen].F})
		case rundir.StateNotDelivered:
			code := 6 // sms: subscriber unavailable
			if ch != rundir.ChannelSMS {
				code = 501 // messengers: not a user of the messenger
			}
			out = append(out, sim.Outcome{State: state, Code: code, Weight: share})
		case rundir.StateFailed:
			out = append(out, sim.Outcome{State: state, Code: 252, Weight: share})
		case rundir.StateSeen:
			if d := m[rundir.StateDelivered].F + share; d > 0 {
				seen = share / d
			} else {
				seen = 0
			}
			if _, ok := m[rundir.StateDelivered]; !ok {
				out = append(out, sim.Outcome{State: rundir.StateDelivered, Weight: share})
			}
		default:
			// scenarios refuses it at validate: a scenario built in code
			return nil, 0, fmt.Errorf("sim.profiles.%s.outcomes.%s: the simulator draws %s; EXPIRED comes from failover ttl", ch, state, strings.Join(rundir.DrawnStates(), ", "))
		}
	}
	return out, seen, nil
}

func errsJoin(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return fmt.Errorf("%w (and %d more)", errs[0], len(errs)-1)
}

// simRetries sets the simulator's retry schedule of its calls from what the
// scenario's sim.callbacks says (the rest keeps the simulator's defaults).
func simRetries(cb *sim.Callbacks, sc scenarios.SimCallbacks) {
	if sc.Attempts > 0 {
		cb.Attempts = sc.Attempts
	}
	if d := sc.Backoff.D; d > 0 {
		cb.Backoff = d
	}
	if sc.BackoffFactor >= 1 {
		cb.BackoffFactor = sc.BackoffFactor
	}
	cb.BackoffMax = sc.BackoffMax.D
	cb.HonourRetryAfter = sc.HonourRetryAfter
	cb.GoneStops = sc.GoneStops
	if d := sc.Timeout.D; d > 0 {
		cb.Timeout = d
	}
}
