package attack

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/msgload/msgload/rundir"
)

// Errors returned by Run.
var (
	errOptions     = errors.New("attack options")
	ErrMaxMessages = errors.New("max messages reached")
	errWebhook     = errors.New("register webhook")
)

// Limit modes.
const (
	modeRespect = "respect" // keep every client at or under the limit in any window; honour Retry-After
	ModeExceed  = "exceed"  // send as planned, whatever the limit
)

// Operations, as recorded in Attempt.Op and the operation label.
const (
	OpSend        = "send"
	opCheckStatus = "check_status"
	opWebhook     = "webhook"
	opToken       = "token"
	// OpOther is a replayed request that is neither a send, a status check,
	// a webhook registration nor a token call (Extra).
	OpOther = "replay_other"
)

// Probe kinds, as recorded in Attempt.Probe.
const (
	probeSequential = "sequential"
	probeConcurrent = "concurrent"
)

// DefaultMaxInFlight is the cap on messages in flight when
// Options.MaxInFlight is 0. At 100 ms per answer it allows 10,240 sends/s.
// A message in flight costs about 66 KiB of peak RSS (its goroutines,
// request, connection and buffers, with the collector's slack), so the cap
// holds the attacker under 96 MiB at any overload for bodies of a few hundred
// bytes (BenchmarkOverloadMemory; attack/README.md has the figures).
const DefaultMaxInFlight = rundir.DefaultMaxInFlight

// Client is one integration: a messaging login and password, or a
// notification client_id and secret. The secret never leaves this package.
type Client struct {
	ID     string
	Secret string
}

// Limit is the per-client rate limit of the service and how to treat it.
type Limit struct {
	Requests int           // requests allowed per client in any Window; 0 = no limit known
	Window   time.Duration // e.g. time.Minute
	Mode     string        // modeRespect or ModeExceed ("" = exceed)
}

// Retry is the retry policy: which answers are retried, how often and how long
// to wait. The same body (and externalId) is sent again.
type Retry struct {
	On        []int         // HTTP codes retried, e.g. 429, 500, 503
	OnTimeout bool          // retry when no answer came (timeout, reset)
	Max       int           // retries after the first attempt
	Backoff   time.Duration // wait before retry 1; doubled for each next one
	// MaxWait caps one backoff wait (0 = 30 s). It does not cut a
	// Retry-After: that is honoured in full as long as the retry still leaves
	// before the run's end (see Options.Grace); a retry that would leave after
	// it is given up (Attempt.GaveUp).
	MaxWait time.Duration
	// Jitter, 0..1: each backoff wait is multiplied by a random factor in
	// [1-Jitter, 1+Jitter]; a Retry-After wait d becomes a random wait in
	// [d, d·(1+Jitter)] (never shorter than the service asked; not past the
	// run's end when d itself is not).
	Jitter float64
}

// Poll is messaging delivery measured by polling check-status.
type Poll struct {
	Interval time.Duration // between two polls of a message
	Until    time.Duration // give up this long after the first send
}

// Options is everything one attack needs. The harness fills it from a scenario.
type Options struct {
	API      string // rundir.APIMessaging or rundir.APINotify
	BaseURL  string // API base URL, e.g. http://127.0.0.1:8080
	TokenURL string // notify: token endpoint of the identity provider
	Clients  []Client

	Pacer    vegeta.Pacer  // when requests leave
	Duration time.Duration // 0 = until Requests
	Requests int64         // messages to send (first attempts); 0 = until Duration
	// Grace is how long the run goes on after the load ends (the harness's
	// grace period for callbacks): the run ends Duration + Grace after the
	// attack's start, or Grace after the pacer stops when that is sooner (a
	// request count, a replay). No send leaves after the run's end: a retry
	// whose backoff or Retry-After would end later, or a send the respect
	// limiter could let go only later, is given up at once (Attempt.GaveUp,
	// Progress.GaveUp). 0 = no end known: waits end only by ctx or abort.
	Grace time.Duration
	// MaxMessages is a hard cap on messages really sent (first attempts), a
	// safety for paid traffic; 0 = no cap.
	MaxMessages int64

	// Body returns the request body of message seq for client, carrying tag
	// (externalId for notify, trackData for messaging). It is called once per
	// message; retries and probes resend the same bytes.
	Body  func(seq int64, client string, tag rundir.Tag) ([]byte, error)
	Chain []string // messaging: the scenario's channels in order (carried in the tag)
	// ClientFor, when set, names the client of message seq (one of Clients'
	// ids; a replay keeps the recorded mapping); nil = round robin by seq.
	ClientFor func(seq int64) string
	// RepeatOf, when set, says that hit seq of the pacer is no message of its
	// own but a resend of the earlier message RepeatOf(seq) (a replay's
	// recorded resend of one externalId): it leaves at its own planned time
	// with that message's client and body, as its next attempt. 0 (or nil) =
	// a message. A repeat is counted as a retry, never as a message sent or
	// accepted, and is not probed or polled.
	RepeatOf func(seq int64) int64

	// Seq, when set, maps the k-th message of this attack (k from 1) to its
	// sequence in the run, increasing in k (a shard of a sharded run keeps
	// the run's global sequences); nil = k. MaxMessages caps the sequence.
	Seq func(k int64) int64

	RunID string
	// Part names the part of a run with parts in every message's tag
	// (rundir.Tag.Part), so that the parts of one run, which number their
	// messages from 1 each, never count each other's events; "" for a run
	// without parts.
	Part     string
	Scenario string // for msgload_run_info
	// Shard, for msgload_run_info's shard label: "I/N" of shard I of a
	// sharded run (rundir.Shard.String), "" otherwise. Every shard shares the
	// run id, so the dashboards show a sharded run as one run, broken down by
	// this label.
	Shard string

	Limit            Limit
	Retry            Retry
	Probes           float64 // share of messages (0..1) resent with the same body (notify: the same externalId; messaging, which has no key, to see what a retried send costs)
	ProbeConcurrency int     // concurrent resends of a probed message (besides the sequential one); 0 = 2
	ProbeInFlight    int     // copies of a probed message sent at once with its first send, before its answer
	ProbeChangedBody bool    // a probed message is resent once more with another text (same externalId)
	Poll             *Poll   // messaging: poll check-status after an accepted send
	// HoldToken, for notify, keeps each client's token until the service
	// refuses it: no early refresh before its expiry (a characterisation's
	// token probe sends with it at growing ages to find its real lifetime).
	// A refusal still drops it, and the send is retried once with a new one.
	HoldToken bool

	// WebhookURL, for notify, is registered for every client with
	// POST /api/v1/webhooks before the load starts.
	WebhookURL string

	// Extra are requests besides the messages (a replay's recorded status
	// checks, webhook registrations and other calls), each sent once at its
	// planned time. They are not messages: seq 0, not counted in Sent.
	Extra []Extra

	Timeout time.Duration // per HTTP request, plus at most 1 % (10 ms at most: deadlines); 0 = 30 s
	// MaxInFlight caps the messages in flight: a message holds a slot from
	// the moment it is due until its last attempt is over (retries and their
	// waits included; probes and polls, which follow an acceptance, hold
	// none). At the cap the pacer waits for a slot, as vegeta's max workers
	// make it wait for a worker: the sends due meanwhile leave late and are
	// counted as capped (Attempt.Capped, Progress.Capped,
	// msgload_capped_sends_total). It bounds the attacker's memory when the
	// target slows down: the open model's backlog no longer grows without
	// end. 0 = DefaultMaxInFlight; negative = no cap.
	MaxInFlight int
	Workers     uint64 // vegeta's initial workers; 0 = vegeta's default
	MaxWorkers  uint64 // vegeta's max workers; 0 = MaxInFlight + 64 (unbounded without a cap)
	Connections int    // idle connections kept per host; 0 = 10000
	// LateAfter is how much later than planned a first attempt may leave
	// before it counts as late; 0 = 10 ms.
	LateAfter time.Duration

	// Transport carries every request; nil = a new http.Transport (tests pass
	// an in-process one to run on fake time).
	Transport http.RoundTripper

	Out      Recorder  // receives every attempt; nil = none
	Metrics  *Metrics  // nil = no metrics
	Progress *Progress // live counters for a progress display; nil = internal
}

// Extra is one request besides the messages, sent At after the attack's start
// (the pacer's zero, so a replay's extras keep their place among its sends)
// with the client's credentials, and recorded as an attempt of Op with seq 0.
// No retry, no probe: it is sent as it was recorded.
type Extra struct {
	At     time.Duration
	Op     string      // opCheckStatus, opWebhook or OpOther
	Client string      // one of Clients' ids; "" = the first client
	Method string      // GET, POST, …
	Path   string      // absolute path, with "?query" when any; appended to BaseURL
	Header http.Header // sent as given (credentials are the client's, added)
	Body   []byte
}

func (o *Options) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch o.API {
	case rundir.APIMessaging, rundir.APINotify:
	default:
		bad("api %q: want %q or %q", o.API, rundir.APIMessaging, rundir.APINotify)
	}
	if u, err := url.Parse(o.BaseURL); err != nil || u.Scheme == "" || u.Host == "" {
		bad("base URL %q: want an absolute http(s) URL", o.BaseURL)
	}
	if o.API == rundir.APINotify {
		if u, err := url.Parse(o.TokenURL); err != nil || u.Scheme == "" || u.Host == "" {
			bad("token URL %q: want an absolute http(s) URL", o.TokenURL)
		}
	}
	if len(o.Clients) == 0 {
		bad("no clients")
	}
	seen := map[string]bool{}
	for i, c := range o.Clients {
		if c.ID == "" {
			bad("client %d: empty id", i+1)
		}
		if seen[c.ID] {
			bad("client %q: listed twice", c.ID)
		}
		seen[c.ID] = true
	}
	if o.Pacer == nil {
		bad("no pacer")
	}
	if o.Duration <= 0 && o.Requests <= 0 {
		bad("neither a duration nor a request count: the attack would never end")
	}
	if o.Duration < 0 || o.Requests < 0 || o.MaxMessages < 0 {
		bad("negative duration, request count or message cap")
	}
	if o.Body == nil {
		bad("no body function")
	}
	if !rundir.ValidRunID(o.RunID) {
		bad("run id %q: want 1 to 64 of [A-Za-z0-9_-]", o.RunID)
	}
	if o.Part != "" && !rundir.ValidRunID(o.Part) {
		bad("part %q: want 1 to 64 of [A-Za-z0-9_-]", o.Part)
	}
	switch o.Limit.Mode {
	case "", ModeExceed:
	case modeRespect:
		if o.Limit.Requests <= 0 || o.Limit.Window <= 0 {
			bad("limit mode respect needs a positive request count and window")
		}
	default:
		bad("limit mode %q: want %q or %q", o.Limit.Mode, modeRespect, ModeExceed)
	}
	if o.Retry.Max < 0 || o.Retry.Backoff < 0 || o.Retry.Jitter < 0 || o.Retry.Jitter > 1 {
		bad("retry: max, backoff must not be negative and jitter must be in [0, 1]")
	}
	if o.Probes < 0 || o.Probes > 1 || math.IsNaN(o.Probes) {
		bad("probes %g: want a share in [0, 1]", o.Probes)
	}
	if o.Probes > 0 && o.API != rundir.APINotify && (o.ProbeInFlight > 0 || o.ProbeChangedBody) {
		bad("copies in flight and a changed body are for the notify API (externalId); a messaging send is only resent")
	}
	if o.Poll != nil {
		if o.API != rundir.APIMessaging {
			bad("polling is for the messaging API")
		}
		if o.Poll.Interval <= 0 || o.Poll.Until <= 0 {
			bad("poll: interval and until must be positive")
		}
	}
	for i, x := range o.Extra {
		switch x.Op {
		case opCheckStatus, opWebhook, OpOther:
		default:
			bad("extra request %d: op %q: want %s, %s or %s", i+1, x.Op, opCheckStatus, opWebhook, OpOther)
		}
		if x.Method == "" || !strings.HasPrefix(x.Path, "/") || x.At < 0 {
			bad("extra request %d: want a method, an absolute path and a time not before the start", i+1)
		}
		if x.Client != "" && !seen[x.Client] {
			bad("extra request %d: client %q is not among the clients", i+1, x.Client)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", errOptions, errors.Join(errs...))
}
