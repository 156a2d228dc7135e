package sim

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/msgload/msgload/internal/httpserve"
	"github.com/msgload/msgload/internal/suggest"
	"github.com/msgload/msgload/internal/yamlguard"
	"github.com/msgload/msgload/rundir"
)

// Sentinel errors of configuration.
var (
	errConfig = errors.New("sim config")
)

// allChannels lists the channels of the messaging API in the seed's order; a
// channel's index is its compact id in the delivery engine.
var allChannels = rundir.Channels()

// Scopes of the notification API.
const (
	ScopeNotification = "SCOPE_notification"
	ScopeWebhook      = "SCOPE_webhook"
)

// Rate-limit algorithms.
const (
	AlgSliding     = "sliding"
	AlgFixed       = "fixed"
	AlgTokenBucket = "token-bucket"
)

// Config is every setting of the simulator. DefaultConfig gives the built-in
// accounts and clients; a YAML file read by LoadConfig replaces what it names.
type Config struct {
	Messaging messagingConfig `yaml:"messaging"`
	Notify    notifyConfig    `yaml:"notify"`
	RateLimit RateLimit       `yaml:"rateLimit"` // notification API, per client_id
	Faults    Faults          `yaml:"faults"`
	Callbacks Callbacks       `yaml:"callbacks"`
	// TruthCap bounds the ground truth kept in memory: at most this many
	// messages (in flight, and settled ones unless the truth is streamed to
	// truth.jsonl; four times as many callback records); beyond it the truth
	// is marked Truncated.
	TruthCap int `yaml:"truthCap"`
	// ListenAddr is where `msgload sim` listens: /sim/v1/truth and
	// /sim/v1/pending, served without a token, answer only to a loopback
	// Host or this address (a DNS-rebinding page sends its own name).
	ListenAddr string `yaml:"-"`
	// Seed seeds every random draw; 0 draws a seed from the clock.
	Seed uint64 `yaml:"seed"`
	// MaxBodyBytes bounds request bodies (413 is never used: 400, as the seed says).
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`

	// HTTPClient sends callbacks and webhooks; nil builds a keep-alive client.
	// Tests use it to receive callbacks without a network.
	HTTPClient *http.Client `yaml:"-"`
}

// messagingConfig configures the messaging API.
type messagingConfig struct {
	Accounts []Account `yaml:"accounts"`
	// Profiles are the delivery profiles per channel.
	Profiles map[string]channelProfile `yaml:"profiles"`
	// StatusRetention is how long check-status answers after the last change.
	StatusRetention time.Duration `yaml:"statusRetention"`
	// AuthQueryParam is the query parameter that may carry "Basic <base64>".
	AuthQueryParam string `yaml:"authQueryParam"`
	// IncomingShare is the share of delivered sms/viber/whatsapp messages that
	// get a subscriber reply posted to {partnerUrl}/incoming.
	IncomingShare float64 `yaml:"incomingShare"`
	// IncomingDelay is how long after delivery the reply comes.
	IncomingDelay Delay `yaml:"incomingDelay"`
	// ReplyOnShare is the share of replies that carry replyOn.
	ReplyOnShare float64 `yaml:"replyOnShare"`
	// ShortLinkDomain prefixes short links made by urlOptions.shortenUrl.
	ShortLinkDomain string `yaml:"shortLinkDomain"`
	// ExpiredCode is the error code of an EXPIRED status (seed: 245 or 300).
	ExpiredCode int `yaml:"expiredCode"`
	// Dedup is the answer to a send whose trackData repeats an earlier
	// send's of the same account: "" (default, the seed's: a new message),
	// DedupFirst (the first's txId, no second message) or DedupRefuse (409,
	// the seed's "sending a duplicate message is forbidden").
	Dedup string `yaml:"dedup"`
}

// Values of messagingConfig.Dedup, and the built-in notify client without
// the right to send.
const (
	DedupFirst    = "first"
	DedupRefuse   = "409"
	NoRightClient = "webhook-only"
)

// Account is one messaging login.
type Account struct {
	Login    string `yaml:"login"`
	Password string `yaml:"password"`
	// NoAPIRight makes valid credentials answer 403 forbidden.
	NoAPIRight bool     `yaml:"noApiRight"`
	Channels   []string `yaml:"channels"`
	// CallbackURL is the static callback address, used when a send has none.
	CallbackURL string `yaml:"callbackUrl"`
	// PartnerURL is the base of {partnerUrl}/incoming; empty: no incoming.
	PartnerURL string `yaml:"partnerUrl"`
	// AllowIPs lists allowed source addresses or CIDR ranges; empty allows all.
	AllowIPs []string `yaml:"allowIps"`
}

// channelProfile is how a channel delivers.
type channelProfile struct {
	Delay    Delay     `yaml:"delay"`
	Outcomes []Outcome `yaml:"outcomes"`
	// SeenShare is the share of DELIVERED messages that are then SEEN.
	SeenShare float64 `yaml:"seenShare"`
	SeenDelay Delay   `yaml:"seenDelay"`
}

// Outcome is one possible end of a delivery attempt, drawn with Weight.
type Outcome struct {
	State  string  `yaml:"state"` // DELIVERED, NOT_DELIVERED, FAILED (messaging) or a notification status
	Code   int     `yaml:"code"`  // delivery error code of the seed (0 when delivered)
	Weight float64 `yaml:"weight"`
}

// Delay is a delay distribution: fixed (Median), uniform (between Min and
// Max) or lognormal (Median and P95).
type Delay struct {
	Dist   string        `yaml:"dist"` // fixed, uniform, lognormal
	Median time.Duration `yaml:"median"`
	P95    time.Duration `yaml:"p95"`
	Min    time.Duration `yaml:"min"`
	Max    time.Duration `yaml:"max"`
}

// notifyConfig configures the notification API.
type notifyConfig struct {
	Clients       []Client      `yaml:"clients"`
	TokenLifetime time.Duration `yaml:"tokenLifetime"`
	// TokenExpiresIn is the expires_in a token answer announces (0, default:
	// TokenLifetime): another value makes the announced lifetime wrong, for
	// a characterisation to find.
	TokenExpiresIn time.Duration `yaml:"tokenExpiresIn"`
	// TokenRevokeOnIssue revokes a client's earlier tokens when it is issued
	// a new one (a still valid token is then refused 401 invalid_token);
	// default false: every token lives its lifetime. The seed says neither.
	TokenRevokeOnIssue bool `yaml:"tokenRevokeOnIssue"`
	// Delay and Outcomes draw the terminal status of a notification; the
	// statuses are ACCEPTED (answer) then one terminal of DELIVERED,
	// UNDELIVERED, FAILED.
	Delay    Delay     `yaml:"delay"`
	Outcomes []Outcome `yaml:"outcomes"`
	// IdempotencyRetention is how long an externalId is remembered.
	IdempotencyRetention time.Duration `yaml:"idempotencyRetention"`
	// IdempotencyMismatch is the answer to a known externalId with a different
	// body: "first" (the first result, default), "422" or "409".
	IdempotencyMismatch string `yaml:"idempotencyMismatch"`
	// IdempotencyProcessing is how long the first request of an externalId
	// holds it before its answer (0, default: at once): a duplicate that
	// comes meanwhile finds it in flight.
	IdempotencyProcessing time.Duration `yaml:"idempotencyProcessing"`
	// IdempotencyInFlight is the answer to a duplicate of a request still in
	// flight: "first" (it waits for the first and gets its result, default:
	// the seed's "the same value") or "409" (IETF Idempotency-Key draft-07).
	IdempotencyInFlight string `yaml:"idempotencyInFlight"`
}

// Client is one notification integration.
type Client struct {
	ID     string   `yaml:"id"`
	Secret string   `yaml:"secret"`
	Scopes []string `yaml:"scopes"`
	// WebhookURL is a webhook registered in advance (POST /api/v1/webhooks replaces it).
	WebhookURL string `yaml:"webhookUrl"`
}

// RateLimit is the per-client request limit of the notification API.
type RateLimit struct {
	Requests  int           `yaml:"requests"` // 0 disables the limit
	Window    time.Duration `yaml:"window"`
	Algorithm string        `yaml:"algorithm"` // sliding, fixed, token-bucket
	// RetryAfter sends Retry-After (seconds, rounded up) with every 429.
	RetryAfter bool `yaml:"retryAfter"`
	// Headers sends the IETF draft RateLimit and RateLimit-Policy fields.
	Headers bool `yaml:"headers"`
	// Messaging applies the same limit per login to the messaging API (off by default).
	Messaging bool `yaml:"messaging"`
	// CountFailures: a request answered with an injected failure (500, 503,
	// processed then 500 or reset) uses quota like any accepted one (the
	// default: the limiter decides before the failure). Off, the limiter still
	// decides it but does not count it.
	CountFailures bool `yaml:"countFailures"`
	// Count429: a refused request uses quota too (off by default): the sliding
	// log logs it, the bucket goes into debt by a token; a fixed window is
	// full until it ends either way.
	Count429 bool `yaml:"count429"`
}

// Faults are injected into API answers. Shares are 0..1 of requests.
type Faults struct {
	Error500 float64 `yaml:"error500"`
	Error503 float64 `yaml:"error503"`
	// ProcessedThen500: the operation happens, the answer is a 500.
	ProcessedThen500 float64 `yaml:"processedThen500"`
	// ProcessedThenReset: the operation happens, the connection is reset.
	ProcessedThenReset float64 `yaml:"processedThenReset"`
	// Latency is added to every API answer (LatencyShare of them; 0 means all).
	Latency      time.Duration `yaml:"latency"`
	LatencyShare float64       `yaml:"latencyShare"`
}

// Callbacks configures calls made by the simulator (status callbacks,
// incoming messages, webhooks).
type Callbacks struct {
	Drop      float64       `yaml:"drop"`      // share never sent
	Duplicate float64       `yaml:"duplicate"` // share sent twice
	Reorder   float64       `yaml:"reorder"`   // share held back by ReorderBy so a later one overtakes it
	ReorderBy time.Duration `yaml:"reorderBy"`
	Delay     float64       `yaml:"delay"` // share delayed by DelayBy
	DelayBy   time.Duration `yaml:"delayBy"`
	// Attempts is the number of tries when the receiver answers non-2xx or
	// times out; Backoff is the wait before the second, multiplied by
	// BackoffFactor after each try (2: doubling, the default; 1: a fixed
	// schedule) up to BackoffMax (0: no cap).
	Attempts      int           `yaml:"attempts"`
	Backoff       time.Duration `yaml:"backoff"`
	BackoffFactor float64       `yaml:"backoffFactor"`
	BackoffMax    time.Duration `yaml:"backoffMax"`
	// HonourRetryAfter: a non-2xx answer's Retry-After (seconds), when it
	// has one, is the wait before the next try instead of the backoff's.
	// The seeds do not say; off by default (the receiver's value ignored).
	HonourRetryAfter bool `yaml:"honourRetryAfter"`
	// GoneStops: a 410 Gone answer ends the call's tries (the receiver says
	// it will never take it); off, a 410 is retried as any non-2xx. The seeds
	// do not say; off by default.
	GoneStops bool          `yaml:"goneStops"`
	Timeout   time.Duration `yaml:"timeout"`
	// Senders bounds the callbacks in flight.
	Senders int `yaml:"senders"`
	// SigningSecret ("whsec_…") signs calls with Standard Webhooks headers.
	SigningSecret string `yaml:"signingSecret"`
}

// DefaultConfig returns the built-in accounts, clients and profiles: delays
// short enough that a test scenario ends in seconds.
func DefaultConfig() Config {
	quick := func(median, p95 time.Duration) Delay {
		return Delay{Dist: "lognormal", Median: median, P95: p95}
	}
	smsOut := []Outcome{
		{State: rundir.StateDelivered, Code: 0, Weight: 0.95},
		{State: rundir.StateNotDelivered, Code: 6, Weight: 0.02},
		{State: rundir.StateNotDelivered, Code: 1, Weight: 0.01},
		{State: rundir.StateNotDelivered, Code: 4, Weight: 0.01},
		{State: rundir.StateFailed, Code: 252, Weight: 0.01},
	}
	msgrOut := []Outcome{
		{State: rundir.StateDelivered, Code: 0, Weight: 0.93},
		{State: rundir.StateNotDelivered, Code: 501, Weight: 0.04},
		{State: rundir.StateNotDelivered, Code: 500, Weight: 0.02},
		{State: rundir.StateNotDelivered, Code: 1, Weight: 0.01},
	}
	cfg := Config{
		Messaging: messagingConfig{
			Accounts: []Account{
				{Login: "demo", Password: "demo", Channels: []string{rundir.ChannelSMS, rundir.ChannelViber, rundir.ChannelVKOK, rundir.ChannelPush}},
				{Login: "blocked", Password: "blocked", NoAPIRight: true, Channels: []string{rundir.ChannelSMS}},
			},
			Profiles: map[string]channelProfile{
				rundir.ChannelSMS:      {Delay: quick(300*time.Millisecond, 2*time.Second), Outcomes: smsOut},
				rundir.ChannelViber:    {Delay: quick(200*time.Millisecond, time.Second), Outcomes: msgrOut, SeenShare: 0.5, SeenDelay: quick(time.Second, 3*time.Second)},
				rundir.ChannelWhatsApp: {Delay: quick(200*time.Millisecond, time.Second), Outcomes: msgrOut, SeenShare: 0.6, SeenDelay: quick(time.Second, 3*time.Second)},
				rundir.ChannelVKOK:     {Delay: quick(250*time.Millisecond, 1500*time.Millisecond), Outcomes: msgrOut, SeenShare: 0.4, SeenDelay: quick(time.Second, 3*time.Second)},
				rundir.ChannelTGOTP:    {Delay: quick(150*time.Millisecond, 800*time.Millisecond), Outcomes: msgrOut, SeenShare: 0.7, SeenDelay: quick(500*time.Millisecond, 2*time.Second)},
				rundir.ChannelPush:     {Delay: quick(100*time.Millisecond, 600*time.Millisecond), Outcomes: msgrOut},
			},
			StatusRetention: 48 * time.Hour,
			AuthQueryParam:  "authorization",
			IncomingShare:   0.05,
			IncomingDelay:   quick(500*time.Millisecond, 2*time.Second),
			ReplyOnShare:    0.3,
			ShortLinkDomain: "https://s.sim.test",
			ExpiredCode:     245,
		},
		Notify: notifyConfig{
			TokenLifetime: time.Hour,
			Delay:         quick(300*time.Millisecond, 2*time.Second),
			Outcomes: []Outcome{
				{State: rundir.NotifyDelivered, Weight: 0.95},
				{State: rundir.NotifyUndelivered, Code: 6, Weight: 0.03},
				{State: rundir.NotifyFailed, Code: 1, Weight: 0.02},
			},
			IdempotencyRetention: 24 * time.Hour,
			IdempotencyMismatch:  "first",
			IdempotencyInFlight:  "first",
		},
		RateLimit: RateLimit{Requests: 100, Window: time.Minute, Algorithm: AlgSliding, RetryAfter: true, CountFailures: true},
		Callbacks: Callbacks{
			ReorderBy:     200 * time.Millisecond,
			DelayBy:       time.Second,
			Attempts:      3,
			Backoff:       100 * time.Millisecond,
			BackoffFactor: 2,
			Timeout:       5 * time.Second,
			Senders:       64,
		},
		TruthCap:     200_000,
		MaxBodyBytes: 1 << 20,
	}
	for i := 1; i <= 10; i++ {
		cfg.Notify.Clients = append(cfg.Notify.Clients, Client{ID: fmt.Sprintf("demo-%d", i), Secret: "demo", Scopes: []string{ScopeNotification, ScopeWebhook}})
	}
	cfg.Notify.Clients = append(cfg.Notify.Clients, Client{ID: "notify-only", Secret: "demo", Scopes: []string{ScopeNotification}})
	// valid credentials without the right to send: 403 (the messaging API's "blocked")
	cfg.Notify.Clients = append(cfg.Notify.Clients, Client{ID: NoRightClient, Secret: "demo", Scopes: []string{ScopeWebhook}})
	return cfg
}

// LoadConfig reads a YAML file over DefaultConfig: what the file names
// replaces the default (a list replaces the whole list). Errors name
// file:line:col.
func LoadConfig(path string) (Config, error) {
	// bytes read are counted, not the stat size: /dev/zero or a pipe stops at
	// the bound
	b, err := yamlguard.ReadFile(path, yamlguard.Default.MaxBytes)
	if errors.Is(err, yamlguard.ErrTooLarge) || errors.Is(err, yamlguard.ErrNotRegular) {
		return Config{}, fmt.Errorf("%w: %s: %w", errConfig, path, err)
	}
	if err != nil {
		return Config{}, fmt.Errorf("read sim config: %w", err)
	}
	return ParseConfig(path, b)
}

// ParseConfig is LoadConfig on bytes already read; name is used in errors.
func ParseConfig(name string, b []byte) (Config, error) {
	cfg := DefaultConfig()
	b = yamlguard.StripBOM(b)
	if strings.TrimSpace(string(b)) == "" {
		return cfg, nil
	}
	// bound the text before the YAML library sees it: its cost grows with
	// the square of the nesting (yamlguard.Default: 1 MiB, 32 levels,
	// 100 000 nodes)
	if ge := yamlguard.Check(b, yamlguard.Default); ge != nil {
		return Config{}, fmt.Errorf("%w: %s:%w", errConfig, name, ge)
	}
	// the YAML library reads invalid UTF-8 as U+FFFD: a login or a secret
	// with it would silently become another
	if bad := yamlguard.InvalidUTF8(b, 1); len(bad) > 0 {
		return Config{}, fmt.Errorf("%w: %s:%d:%d: not valid UTF-8", errConfig, name, bad[0].Line, bad[0].Col)
	}
	if err := safeUnmarshal(b, &cfg); err != nil {
		msg := yamlPos(err)
		return Config{}, fmt.Errorf("%w: %s:%s%s", errConfig, name, msg, keyHint(msg))
	}
	// A profiles map in the file replaces the whole map: channels it does not
	// name keep their built-in profile.
	for ch, p := range DefaultConfig().Messaging.Profiles {
		if _, ok := cfg.Messaging.Profiles[ch]; !ok {
			if cfg.Messaging.Profiles == nil {
				cfg.Messaging.Profiles = map[string]channelProfile{}
			}
			cfg.Messaging.Profiles[ch] = p
		}
	}
	if errs := cfg.Validate(); len(errs) > 0 {
		pos := positions(b)
		for i, e := range errs {
			errs[i] = fmt.Errorf("%s:%s%w", name, pos(e.Error()), e)
		}
		return Config{}, fmt.Errorf("%w: %w", errConfig, errors.Join(errs...))
	}
	return cfg, nil
}

// positions returns a function that finds "line:col: " of the field a
// Validate message names ("rateLimit.algorithm: …"), or of its nearest
// parent present in the file; " " when none is.
func positions(b []byte) func(msg string) string {
	file, err := safeParse(b)
	return func(msg string) string {
		if err != nil || file == nil {
			return " "
		}
		path, _, ok := strings.Cut(msg, ": ")
		if !ok {
			return " "
		}
		for path != "" {
			if p, perr := yaml.PathString("$." + path); perr == nil {
				if n, ferr := p.FilterFile(file); ferr == nil && n != nil {
					if tk := n.GetToken(); tk != nil && tk.Position != nil {
						return fmt.Sprintf("%d:%d: ", tk.Position.Line, tk.Position.Column)
					}
				}
			}
			i := strings.LastIndexAny(path, ".[")
			if i < 0 {
				break
			}
			path = path[:i]
		}
		return " "
	}
}

func safeParse(b []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("malformed YAML (%v)", r)
		}
	}()
	return parser.ParseBytes(b, 0)
}

// safeUnmarshal decodes strictly; the YAML library can panic on some
// malformed documents (found by FuzzParseConfig), which becomes an error.
func safeUnmarshal(b []byte, cfg *Config) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed YAML (%v)", r)
		}
	}()
	return yaml.UnmarshalWithOptions(b, cfg, yaml.Strict())
}

// yamlPos renders a goccy error as "line:col: message" (one line). Some of
// the library's errors panic when printed without a token: they say only
// "malformed YAML".
func yamlPos(err error) (out string) {
	defer func() {
		if r := recover(); r != nil {
			out = " malformed YAML"
		}
	}()
	var ye yaml.Error
	if errors.As(err, &ye) {
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Sprintf("%d:%d: %s", tk.Position.Line, tk.Position.Column, ye.GetMessage())
		}
		return " " + ye.GetMessage()
	}
	return " " + strings.ReplaceAll(err.Error(), "\n", " ")
}

// Validate returns every problem of cfg, each naming its field.
func (c *Config) Validate() []error {
	var p problems
	c.Messaging.validate(&p)
	c.Notify.validate(&p)
	c.RateLimit.validate(&p)
	c.Faults.validate(&p)
	c.Callbacks.validate(&p)
	if c.TruthCap < 0 {
		p.bad("truthCap: negative")
	}
	if c.MaxBodyBytes <= 0 {
		p.bad("maxBodyBytes: must be positive")
	}
	return p
}

// problems collects what Validate finds, in the order of the settings.
type problems []error

func (p *problems) bad(format string, a ...any) { *p = append(*p, fmt.Errorf(format, a...)) }

// share checks that v is a share between 0 and 1.
func (p *problems) share(name string, v float64) {
	if v < 0 || v > 1 {
		p.bad("%s: %v is not a share between 0 and 1", name, v)
	}
}

// validate checks the messaging API's accounts, channel profiles and shares.
func (m *messagingConfig) validate(p *problems) {
	logins := map[string]bool{}
	for i, a := range m.Accounts {
		at := fmt.Sprintf("messaging.accounts[%d]", i)
		if a.Login == "" {
			p.bad("%s.login: empty", at)
		}
		if logins[a.Login] {
			p.bad("%s.login: %q twice", at, a.Login)
		}
		logins[a.Login] = true
		for j, ch := range a.Channels {
			if !rundir.IsChannel(ch) {
				p.bad("%s.channels[%d]: unknown channel %q", at, j, ch)
			}
		}
		for j, ip := range a.AllowIPs {
			if _, err := parseAllow(ip); err != nil {
				p.bad("%s.allowIps[%d]: %v", at, j, err)
			}
		}
	}
	for ch, prof := range m.Profiles {
		name := "messaging.profiles." + ch
		if !rundir.IsChannel(ch) {
			p.bad("%s: unknown channel", name)
		}
		if err := prof.Delay.validate(); err != nil {
			p.bad("%s.delay: %v", name, err)
		}
		if err := prof.SeenDelay.validate(); err != nil {
			p.bad("%s.seenDelay: %v", name, err)
		}
		p.share(name+".seenShare", prof.SeenShare)
		if err := validOutcomes(prof.Outcomes, []string{rundir.StateDelivered, rundir.StateNotDelivered, rundir.StateFailed}); err != nil {
			p.bad("%s.outcomes: %v", name, err)
		}
	}
	p.share("messaging.incomingShare", m.IncomingShare)
	p.share("messaging.replyOnShare", m.ReplyOnShare)
	if m.AuthQueryParam == "" {
		p.bad("messaging.authQueryParam: empty")
	}
	if m.Dedup != "" && m.Dedup != DedupFirst && m.Dedup != DedupRefuse {
		p.bad("messaging.dedup: %q is not %s or %s", m.Dedup, DedupFirst, DedupRefuse)
	}
}

// validate checks the notification API's clients, token, delays and outcomes.
func (n *notifyConfig) validate(p *problems) {
	ids := map[string]bool{}
	for i, cl := range n.Clients {
		at := fmt.Sprintf("notify.clients[%d]", i)
		if cl.ID == "" {
			p.bad("%s.id: empty", at)
		}
		if ids[cl.ID] {
			p.bad("%s.id: %q twice", at, cl.ID)
		}
		ids[cl.ID] = true
	}
	if n.TokenLifetime <= 0 {
		p.bad("notify.tokenLifetime: must be positive")
	}
	if n.TokenExpiresIn < 0 {
		p.bad("notify.tokenExpiresIn: must not be negative")
	}
	if err := n.Delay.validate(); err != nil {
		p.bad("notify.delay: %v", err)
	}
	if err := validOutcomes(n.Outcomes, rundir.NotifyStates()); err != nil {
		p.bad("notify.outcomes: %v", err)
	}
	switch n.IdempotencyMismatch {
	case "first", "422", "409":
	default:
		p.bad("notify.idempotencyMismatch: %q is not first, 422 or 409", n.IdempotencyMismatch)
	}
	switch n.IdempotencyInFlight {
	case "", "first", "409": // "": first
	default:
		p.bad("notify.idempotencyInFlight: %q is not first or 409", n.IdempotencyInFlight)
	}
	if n.IdempotencyProcessing < 0 || n.IdempotencyRetention > 0 && n.IdempotencyProcessing >= n.IdempotencyRetention {
		p.bad("notify.idempotencyProcessing: from 0 to under idempotencyRetention")
	}
}

// validate checks the rate limit's size and algorithm.
func (rl *RateLimit) validate(p *problems) {
	if rl.Requests < 0 {
		p.bad("rateLimit.requests: negative")
	}
	if rl.Requests > 0 && rl.Window <= 0 {
		p.bad("rateLimit.window: must be positive")
	}
	switch rl.Algorithm {
	case AlgSliding, AlgFixed, AlgTokenBucket:
	default:
		p.bad("rateLimit.algorithm: %q is not sliding, fixed or token-bucket", rl.Algorithm)
	}
}

// validate checks the fault shares and the injected latency.
func (f *Faults) validate(p *problems) {
	p.share("faults.error500", f.Error500)
	p.share("faults.error503", f.Error503)
	p.share("faults.processedThen500", f.ProcessedThen500)
	p.share("faults.processedThenReset", f.ProcessedThenReset)
	p.share("faults.latencyShare", f.LatencyShare)
	// an answer must leave before the server's write timeout cuts it
	if maxLatency := httpserve.Default.Write - 10*time.Second; f.Latency < 0 || f.Latency > maxLatency {
		p.bad("faults.latency: 0 to %v (the server's write timeout is %v)", maxLatency, httpserve.Default.Write)
	}
	if f.Error500+f.Error503+f.ProcessedThen500+f.ProcessedThenReset > 1 {
		p.bad("faults: the shares add up to more than 1")
	}
}

// validate checks the callbacks' fault shares, attempts, senders and secret.
func (cb *Callbacks) validate(p *problems) {
	p.share("callbacks.drop", cb.Drop)
	p.share("callbacks.duplicate", cb.Duplicate)
	p.share("callbacks.reorder", cb.Reorder)
	p.share("callbacks.delay", cb.Delay)
	if cb.BackoffFactor < 1 || cb.BackoffMax < 0 {
		p.bad("callbacks.backoffFactor: at least 1 (1: a fixed schedule); backoffMax: not negative")
	}
	if cb.Attempts < 1 {
		p.bad("callbacks.attempts: at least 1")
	}
	if cb.Senders < 1 {
		p.bad("callbacks.senders: at least 1")
	}
	if cb.SigningSecret != "" {
		if _, err := newSigner(cb.SigningSecret); err != nil {
			p.bad("callbacks.signingSecret: %v", err)
		}
	}
}

func validOutcomes(os []Outcome, states []string) error {
	if len(os) == 0 {
		return errors.New("at least one outcome")
	}
	sum := 0.0
	for i, o := range os {
		ok := false
		for _, s := range states {
			ok = ok || o.State == s
		}
		if !ok {
			return fmt.Errorf("[%d].state: %q is not one of %s", i, o.State, strings.Join(states, ", "))
		}
		if o.Weight < 0 {
			return fmt.Errorf("[%d].weight: negative", i)
		}
		sum += o.Weight
	}
	if sum <= 0 {
		return errors.New("weights add up to 0")
	}
	return nil
}

func (d Delay) validate() error {
	switch d.Dist {
	case "", "fixed":
		if d.Median < 0 {
			return errors.New("median: negative")
		}
	case "uniform":
		if d.Min < 0 || d.Max < d.Min {
			return errors.New("want 0 <= min <= max")
		}
	case "lognormal":
		if d.Median <= 0 || d.P95 < d.Median {
			return errors.New("want 0 < median <= p95")
		}
	default:
		return fmt.Errorf("dist %q is not fixed, uniform or lognormal", d.Dist)
	}
	return nil
}

// parseAllow reads an IP or CIDR.
func parseAllow(s string) (*net.IPNet, error) {
	if !strings.Contains(s, "/") {
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, fmt.Errorf("%q is not an IP or CIDR", s)
		}
		bits := 32
		if ip.To4() == nil {
			bits = 128
		}
		return &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)}, nil
	}
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IP or CIDR", s)
	}
	return n, nil
}

// ParseRate reads a limit written in the one rate grammar (rundir.ParseRate:
// "100/1m", "100/m", "100/min", "5/s"...), whose count must here be a whole
// number of requests.
func ParseRate(s string) (requests int, window time.Duration, err error) {
	n, w, err := rundir.ParseRate(s)
	if err != nil {
		return 0, 0, fmt.Errorf("rate %q: %w", s, err)
	}
	// Whole, and small enough to be exact in a float64 and to fit an int.
	if n != math.Trunc(n) || n > 1<<53 {
		return 0, 0, fmt.Errorf("rate %q: %v is not a whole number of requests", s, n)
	}
	return int(n), w, nil
}

var unknownKey = regexp.MustCompile(`unknown field "([^"]*)"`)

// keyHint names, for an unknown key, the configuration fields it is nearest
// to, written in full ("accounts" → messaging.accounts): a key is as often
// put at the wrong level as misspelt.
// msg is yamlPos's rendering (some of the library's errors panic when
// printed directly).
func keyHint(msg string) string {
	m := unknownKey.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	near, _ := suggest.NearestPaths(m[1], configPaths, 3)
	if len(near) == 0 {
		return " (the fields are listed in sim/README.md)"
	}
	return " (did you mean " + strings.Join(near, " or ") + "?)"
}

// configPaths lists every field of Config by its YAML path ("[]" for a list
// element, "<channel>" for a profile), in order.
var configPaths = func() []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || name == "" || !f.IsExported() {
				continue
			}
			p := prefix + name
			out = append(out, p)
			ft := f.Type
			switch {
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), p+"[].")
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), p+".<channel>.")
			case ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath():
				walk(ft, p+".")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return out
}()
