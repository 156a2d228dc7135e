package scenarios

import "github.com/msgload/msgload/attack/message/msgspec"

// The scenario file, field by field. Every field is documented in README.md; the
// json tags are the YAML names (the decoder, the YAML encoder and the JSON Schema
// generator all read them).

// Scenario is one scenario file after loading: expanded, decoded, defaulted and
// checked. A file either describes one run (api, load, …) or holds Parts, each a
// complete scenario run side by side (the smoke scenario uses this for both APIs).
type Scenario struct {
	Name        string      `json:"name" jsonschema_description:"short name of the scenario; names the run"`
	Description string      `json:"description,omitempty" jsonschema_description:"free text shown by validate"`
	API         string      `json:"api,omitempty" jsonschema:"enum=messaging,enum=notify" jsonschema_description:"which API the scenario drives"`
	Target      Target      `json:"target,omitempty" jsonschema_description:"embedded (the built-in simulator) or the addresses of a real service"`
	Confirm     Hosts       `json:"confirm,omitempty" jsonschema_description:"hosts allowed as non-loopback targets (like --confirm-target): one host, \"a, b\" or a list"`
	Auth        Auth        `json:"auth,omitempty"`
	Clients     Clients     `json:"clients,omitempty" jsonschema_description:"number of integrations the load is spread across, or a list of their credentials"`
	Load        LoadSpec    `json:"load,omitempty"`
	Limit       Limit       `json:"limit,omitempty"`
	Message     Message     `json:"message,omitempty"`
	Retry       Retry       `json:"retry,omitempty"`
	Idempotency Idempotency `json:"idempotency,omitempty"`
	Delivery    Delivery    `json:"delivery,omitempty"`
	Sink        string      `json:"sink,omitempty" jsonschema_description:"embedded or the base URL of a standalone sink"`
	Sim         Sim         `json:"sim,omitempty"`
	Thresholds  []Threshold `json:"thresholds,omitempty" jsonschema_description:"expressions that must hold for the run to pass (evaluated by the reports); a mapping { expr, abortOnFail, delayAbortEval } also judges one live"`
	MaxMessages int64       `json:"maxMessages,omitempty" jsonschema:"minimum=0" jsonschema_description:"hard cap on messages really sent (like --max-messages); 0 means no cap"`
	Parts       []Scenario  `json:"parts,omitempty" jsonschema_description:"several complete scenarios run side by side (each with its own api); top-level name and thresholds apply to all"`

	// File is where the scenario came from ("scenarios/smoke.yaml" for a built-in).
	File string `json:"-"`
	// Creds are the resolved client credentials, one per client, in order.
	Creds []Cred `json:"-"`

	pos map[string]Pos // field path → position, for errors found after decoding
	dir string         // where relative paths in the file are resolved
}

// ResolvedMessage is the scenario's message spec with the paths in it (CSV
// recipients) resolved against the scenario file, as the body generator reads
// them (message.New).
func (s *Scenario) ResolvedMessage() Message {
	m := s.Message
	if m.Recipients != nil && m.Recipients.CSV != "" {
		r := *m.Recipients
		r.CSV = s.ResolvePath(r.CSV)
		m.Recipients = &r
	}
	return m
}

// Pos is a position in a scenario file.
type Pos struct{ Line, Col int }

// Target is "embedded" or the addresses of a real service.
type Target struct {
	Embedded bool   `json:"-"`
	BaseURL  string `json:"baseUrl,omitempty" jsonschema_description:"base URL of the API (messaging: {base_url}; notify: {notify_base_url})"`
	TokenURL string `json:"tokenUrl,omitempty" jsonschema_description:"token endpoint of the identity provider (notify only)"`
	// Metrics is the target's Prometheus metrics endpoint: the run samples
	// MemoryMetric there during the attack (rundir.TargetMemoryFile) and the
	// drift of a soak fits its slope (drift.memory_slope).
	Metrics      string `json:"metrics,omitempty" jsonschema_description:"the target's Prometheus metrics endpoint (text format): its memory is sampled during the attack for the drift's memory_slope"`
	MemoryMetric string `json:"memoryMetric,omitempty" jsonschema_description:"the metric read at metrics, the sum of its series (default process_resident_memory_bytes)"`
}

// DefaultMemoryMetric is the metric read at target.metrics when the scenario
// names none: the resident memory every Prometheus client library's process
// collector exports.
const DefaultMemoryMetric = "process_resident_memory_bytes"

// MemoryMetricName is the metric the run reads at target.metrics.
func (t Target) MemoryMetricName() string {
	if t.MemoryMetric != "" {
		return t.MemoryMetric
	}
	return DefaultMemoryMetric
}

// RedactedMetrics is target.metrics with any password in it redacted, as
// run.json records it.
func (t Target) RedactedMetrics() string { return redactURL(t.Metrics) }

// Auth holds the credentials. Secrets come from the environment (${VAR}).
type Auth struct {
	Login        string `json:"login,omitempty" jsonschema_description:"messaging: Basic auth login (a prefix when clients > 1)"`
	Password     string `json:"password,omitempty" jsonschema_description:"messaging: Basic auth password; use ${ENV}"`
	ClientID     string `json:"clientId,omitempty" jsonschema_description:"notify: client_id (a prefix when clients > 1: prefix-1 … prefix-N)"`
	ClientSecret string `json:"clientSecret,omitempty" jsonschema_description:"notify: client_secret shared by the clients; use ${ENV}"`
}

// Cred is one client's credentials: for notify ID/Secret are client_id and
// client_secret; for messaging they are the Basic auth login and password.
type Cred struct {
	ID       string `json:"clientId,omitempty" jsonschema_description:"notify client_id (or messaging login)"`
	Secret   string `json:"clientSecret,omitempty" jsonschema_description:"notify client_secret (or messaging password); use ${ENV}"`
	Login    string `json:"login,omitempty" jsonschema_description:"messaging login (same as clientId)"`
	Password string `json:"password,omitempty" jsonschema_description:"messaging password (same as clientSecret); use ${ENV}"`
}

// Clients is a count (`Clients: 3`) or a list of credentials.
// (Exported for its name: schema.json calls its definition so.)
type Clients struct {
	N    int    `json:"-"`
	List []Cred `json:"-"`
}

// LoadSpec is the traffic profile. Rates are totals, spread evenly across clients.
type LoadSpec struct {
	Profile   string   `json:"profile,omitempty" jsonschema:"enum=constant,enum=ramp,enum=steps,enum=sine,enum=replay" jsonschema_description:"shape of the planned rate (default constant)"`
	Rate      Rate     `json:"rate,omitempty" jsonschema_description:"constant: the rate; sine: the mean rate"`
	From      Rate     `json:"from,omitempty" jsonschema_description:"ramp: starting rate"`
	To        Rate     `json:"to,omitempty" jsonschema_description:"ramp: final rate"`
	Steps     []Step   `json:"steps,omitempty" jsonschema_description:"steps: rates held one after another"`
	Amplitude Rate     `json:"amplitude,omitempty" jsonschema_description:"sine: peak deviation from rate"`
	Period    Duration `json:"period,omitempty" jsonschema_description:"sine: period"`
	Duration  Duration `json:"duration,omitempty" jsonschema_description:"how long requests are sent"`
	Requests  int64    `json:"requests,omitempty" jsonschema:"minimum=0" jsonschema_description:"a total count of messages (constant: instead of duration; other profiles: a cap)"`
	File      string   `json:"file,omitempty" jsonschema_description:"replay: recording to replay"`
	Speed     float64  `json:"speed,omitempty" jsonschema_description:"replay: time scale (2 = twice as fast; default 1)"`
	// Format, ClientHeader and ExternalIDs say how a replay reads and sends the recording.
	Format       string `json:"format,omitempty" jsonschema:"enum=auto,enum=msgload,enum=har,enum=vegeta" jsonschema_description:"replay: format of the file (default auto: told from its first bytes)"`
	ClientHeader string `json:"clientHeader,omitempty" jsonschema_description:"replay: request header carrying the recorded client id (tried before Authorization and the body)"`
	ExternalIDs  string `json:"externalIds,omitempty" jsonschema:"enum=new,enum=keep" jsonschema_description:"replay: new (default) sends run-tagged externalIds the sink matches itself; keep sends the recorded ones (the report joins their webhooks by the notificationId answered)"`
	// MaxInFlight caps the messages in flight (attack.Options.MaxInFlight):
	// the defaults table fills 0 with rundir.DefaultMaxInFlight;
	// rundir.NoInFlightCap (-1) = no cap.
	MaxInFlight int `json:"maxInFlight,omitempty" jsonschema:"minimum=-1" jsonschema_description:"cap on messages in flight (from due to last answer, retries included); sends due at the cap wait and are counted in requests.capped; -1 = none"`
}

// Step is one step of a steps profile.
type Step struct {
	Rate     Rate     `json:"rate" jsonschema:"required"`
	Duration Duration `json:"duration" jsonschema:"required"`
}

// Limit is the service's rate limit per client and how the attack treats it.
type Limit struct {
	Rate Rate   `json:"rate,omitempty" jsonschema_description:"the limit per client (notify default 100/1m; messaging default none)"`
	Mode string `json:"mode,omitempty" jsonschema:"enum=respect,enum=exceed" jsonschema_description:"respect: stay at or under the limit (plans that cannot are refused); exceed: send the planned excess on purpose"`
}

// The message part of a scenario (what every request carries) is defined in
// package msgspec, so the body generator on the attack's hot path can take it
// without linking the loader (YAML, JSON Schema, the threshold language).
type (
	Message    = msgspec.Message
	recipients = msgspec.Recipients
	item       = msgspec.Item
	failover   = msgspec.Failover
	attachment = msgspec.Attachment
	button     = msgspec.Button
	schedule   = msgspec.Schedule
	urlOptions = msgspec.URLOptions
)

// Retry is the retry policy: same body and externalId on every attempt.
type Retry struct {
	On         []string `json:"on,omitempty" jsonschema_description:"HTTP codes (500, 503, 429) and timeout or reset that are retried (default [500, 503, timeout] when retry is absent)"`
	Max        int      `json:"max,omitempty" jsonschema:"minimum=0" jsonschema_description:"retries after the first attempt (default 3 when retry is absent, else 0)"`
	Backoff    Duration `json:"backoff,omitempty" jsonschema_description:"first wait; doubled each retry"`
	MaxBackoff Duration `json:"maxBackoff,omitempty" jsonschema_description:"cap on one backoff wait; a longer Retry-After is honoured in full while the retry still leaves before the run's end (load duration + delivery.grace)"`
	Jitter     Percent  `json:"jitter,omitempty" jsonschema_description:"random share added or removed from each backoff wait; only added to a Retry-After wait (default 20% when not written; 0 turns it off)"`
	Timeout    Duration `json:"timeout,omitempty" jsonschema_description:"per-request timeout (default 10s; an attempt may get up to 1 %, at most 10 ms, more)"`
}

// Idempotency probes resend a share of notifications with the same externalId.
type Idempotency struct {
	Probes      Percent `json:"probes,omitempty" jsonschema_description:"share of messages resent with the same externalId"`
	Concurrent  int     `json:"concurrent,omitempty" jsonschema:"minimum=0" jsonschema_description:"copies sent at once for a probed message; besides its sequential resend (default 2)"`
	InFlight    int     `json:"inFlight,omitempty" jsonschema:"minimum=0" jsonschema_description:"copies sent at once with a probed message's first send, before its answer (default 0)"`
	ChangedBody bool    `json:"changedBody,omitempty" jsonschema_description:"a probed message is also resent with another text under its externalId; the answer is recorded, not compared"`
}

// Delivery says how delivery is measured.
type Delivery struct {
	Via          string   `json:"via,omitempty" jsonschema:"enum=sink,enum=poll,enum=none" jsonschema_description:"sink (callbacks, default), poll (messaging check-status) or none"`
	Grace        Duration `json:"grace,omitempty" jsonschema_description:"how long to wait for callbacks after the last send (default 30s)"`
	PollInterval Duration `json:"pollInterval,omitempty" jsonschema_description:"poll: time between reads of one message (default 1s)"`
}

// Sim holds simulator settings used when the target is embedded.
type Sim struct {
	RateLimit     SimRateLimit       `json:"rateLimit,omitempty"`
	Faults        SimFaults          `json:"faults,omitempty"`
	Callbacks     SimCallbacks       `json:"callbacks,omitempty"`
	Profiles      map[string]Profile `json:"profiles,omitempty" jsonschema_description:"per channel (sms, viber, …): delivery delays and outcomes"`
	NotifyDelay   Delay              `json:"notifyDelay,omitempty" jsonschema_description:"notify: delay to the terminal status"`
	IncomingShare Percent            `json:"incomingShare,omitempty" jsonschema_description:"messaging: share of messages answered by the subscriber"`
	TokenLifetime Duration           `json:"tokenLifetime,omitempty" jsonschema_description:"notify: lifetime of issued tokens"`
	// TokenExpiresIn and MessagingDedup are knobs a characterisation recovers.
	TokenExpiresIn Duration       `json:"tokenExpiresIn,omitempty" jsonschema_description:"notify: the expires_in a token answer announces (default: tokenLifetime; another value makes the announced lifetime wrong)"`
	MessagingDedup string         `json:"messagingDedup,omitempty" jsonschema:"enum=first,enum=409" jsonschema_description:"messaging: a send repeating an earlier one's trackData from the same account is answered with the first's txId and not sent again (first), or refused 409 (the seed's duplicate code); default: every send is a new message"`
	Idempotency    SimIdempotency `json:"idempotency,omitempty"`
	Seed           int64          `json:"seed,omitempty" jsonschema_description:"random seed of the simulator and the message generator (default 1)"`
}

// SimRateLimit is the simulator's limit per client.
// (Exported for its name: schema.json calls its definition so.)
type SimRateLimit struct {
	Rate          Rate   `json:"rate,omitempty" jsonschema_description:"default: limit.rate"`
	Algorithm     string `json:"algorithm,omitempty" jsonschema:"enum=fixed,enum=sliding,enum=token-bucket" jsonschema_description:"default sliding (the simulator's default)"`
	CountFailures *bool  `json:"countFailures,omitempty" jsonschema_description:"whether a request answered with an injected failure (500, 503, processed then 500 or reset) uses quota (default true: the limiter decides before the failure)"`
	Count429      bool   `json:"count429,omitempty" jsonschema_description:"a refused request uses quota too (default false): the sliding log logs it, the token bucket goes into debt"`
}

// SimIdempotency is how the simulator keeps a notification's externalId.
// (Exported for its name: schema.json calls its definition so.)
type SimIdempotency struct {
	Window      Duration `json:"window,omitempty" jsonschema_description:"notify: how long an externalId is remembered (default 24h)"`
	ChangedBody string   `json:"changedBody,omitempty" jsonschema:"enum=first,enum=422,enum=409" jsonschema_description:"notify: the answer to a known externalId with another body: first (the first result, default), 422 or 409"`
	InFlight    string   `json:"inFlight,omitempty" jsonschema:"enum=first,enum=409" jsonschema_description:"notify: the answer to a duplicate while the first is in flight: first (it waits for the first's result, default) or 409"`
	Processing  Duration `json:"processing,omitempty" jsonschema_description:"notify: how long the first request of an externalId holds it before its answer (default 0)"`
}

// SimFaults are injected failures (shares of requests).
// (Exported for its name: schema.json calls its definition so.)
type SimFaults struct {
	Error500             Percent  `json:"error500,omitempty"`
	Error503             Percent  `json:"error503,omitempty"`
	ProcessedThen500     Percent  `json:"processedThen500,omitempty" jsonschema_description:"processed, then answered 500"`
	ResetAfterProcessing Percent  `json:"resetAfterProcessing,omitempty" jsonschema_description:"processed, then the connection is reset"`
	Latency              Duration `json:"latency,omitempty" jsonschema_description:"added to every answer"`
}

// SimCallbacks disturb callbacks (shares of callbacks).
// (Exported for its name: schema.json calls its definition so.)
type SimCallbacks struct {
	Drop      Percent  `json:"drop,omitempty"`
	Duplicate Percent  `json:"duplicate,omitempty"`
	Reorder   Percent  `json:"reorder,omitempty"`
	Delay     Duration `json:"delay,omitempty"`
	// The retry schedule of a call the receiver refuses (default the
	// simulator's: 3 attempts, 100ms doubling, Retry-After ignored).
	Attempts         int      `json:"attempts,omitempty" jsonschema_description:"tries of a call the receiver refuses or does not answer (default 3)"`
	Backoff          Duration `json:"backoff,omitempty" jsonschema_description:"wait before the second try (default 100ms)"`
	BackoffFactor    float64  `json:"backoffFactor,omitempty" jsonschema_description:"the wait is multiplied by it after each try (default 2; 1: a fixed schedule)"`
	BackoffMax       Duration `json:"backoffMax,omitempty" jsonschema_description:"the longest wait (default none)"`
	HonourRetryAfter bool     `json:"honourRetryAfter,omitempty" jsonschema_description:"wait what a refusal's Retry-After says instead of the backoff (default false)"`
	GoneStops        bool     `json:"goneStops,omitempty" jsonschema_description:"a 410 Gone ends the tries of a call (default false: retried as any refusal)"`
	Timeout          Duration `json:"timeout,omitempty" jsonschema_description:"how long a call waits for the receiver's answer before it counts as failed (default 5s)"`
}

// Profile is one channel's delivery behaviour in the simulator.
type Profile struct {
	Median   Duration           `json:"median,omitempty"`
	P95      Duration           `json:"p95,omitempty"`
	Outcomes map[string]Percent `json:"outcomes,omitempty" jsonschema_description:"state → share: DELIVERED, NOT_DELIVERED, SEEN, FAILED (EXPIRED is not drawn: it comes from a failover ttl)"`
}

// Delay is a delay distribution.
type Delay struct {
	Median Duration `json:"median,omitempty"`
	P95    Duration `json:"p95,omitempty"`
}
