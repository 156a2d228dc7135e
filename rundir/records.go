package rundir

import (
	"encoding/json"
	"math"
	"os"
	"time"
)

// API names used in every record and metric label.
const (
	APIMessaging = "messaging"
	APINotify    = "notify"
)

// The routes of the two APIs (their seeds) and of the sink, spelled once: the
// attacker sends to them, the simulator serves them, the harness points the
// services at the sink's.
const (
	RouteSend          = "/messaging/v1/send"
	RouteCheckStatus   = "/messaging/v1/check-status/" // followed by the txId
	RouteToken         = "/oauth/token"
	RouteNotifications = "/api/v1/notifications"
	RouteWebhooks      = "/api/v1/webhooks"
	RouteNotifyBase    = "/api/v1/" // every notify route starts with it
	// The sink's: messaging's status callbacks, its incoming messages, and
	// notify's webhooks.
	SinkCallback = "/callback"
	SinkIncoming = "/incoming"
	SinkWebhook  = "/webhook"
)

// Attempt outcomes, as DESIGN.md defines them for idempotency under faults:
// ok (a 2xx), fail (an answer that says nothing happened: 4xx, 5xx) and unknown
// (no answer: timeout, reset; the operation may or may not have happened).
const (
	OutcomeOK      = "ok"
	OutcomeFail    = "fail"
	OutcomeUnknown = "unknown"
)

// Idempotency probe kinds of Attempt.Probe besides sequential and
// concurrent (resends after the answer, with the same body).
const (
	// ProbeInFlight is a copy sent at once with the message's first send,
	// before its answer.
	ProbeInFlight = "in_flight"
	// ProbeChangedBody is a resend after the answer with the same externalId
	// and another text: another notificationId is its service's choice, not
	// a mismatch.
	ProbeChangedBody = "changed_body"
)

// Probed says whether the message with sequence seq is among a share p of
// the messages probed, spread evenly over the sequence (Meta.Probes): the
// attacker probes only those (and only once accepted), so a report knows
// that no probe of any other will come.
func Probed(seq int64, p float64) bool {
	return math.Floor(float64(seq)*p) > math.Floor(float64(seq-1)*p)
}

// Attempt is one HTTP request made by the attacker: one line of attempts.jsonl.
// Every retry and every idempotency probe is an attempt of its own; they share Seq
// (and ExternalID for notifications) with the first attempt of the message.
type Attempt struct {
	Seq             int64     `json:"seq"`                        // message sequence number in the run, from 1; 0 for auxiliary calls
	API             string    `json:"api"`                        // APIMessaging or APINotify
	Op              string    `json:"op"`                         // send, check_status, webhook, token
	Client          string    `json:"client"`                     // messaging login or notification client_id (never a secret)
	Attempt         int       `json:"attempt"`                    // 1 for the first try of Seq, 2… for retries
	Probe           string    `json:"probe,omitempty"`            // "" or the idempotency probe kind: sequential, concurrent, in_flight, changed_body
	Intended        time.Time `json:"intended"`                   // when the pacer (or the retry backoff) planned it
	Sent            time.Time `json:"sent"`                       // when it really left
	FirstSent       time.Time `json:"first_sent"`                 // Sent of attempt 1 of Seq: the start of delivery latency
	Code            int       `json:"code"`                       // HTTP status, 0 when no answer came
	Latency         float64   `json:"latency_s"`                  // seconds from Sent to the end of the answer
	BytesOut        int64     `json:"bytes_out"`                  //
	BytesIn         int64     `json:"bytes_in"`                   //
	Outcome         string    `json:"outcome"`                    // OutcomeOK, OutcomeFail, OutcomeUnknown
	Class           string    `json:"class"`                      // a Class… constant: Classify, or ClassBadAnswer (a 2xx send answer whose body is not the API's answer: outcome unknown, not an acceptance)
	Error           string    `json:"error,omitempty"`            // error text, when any (never used as a metric label)
	TxID            string    `json:"tx_id,omitempty"`            // messaging: txId of the answer
	State           string    `json:"state,omitempty"`            // messaging: state of the answer (ACCEPTED, FAILED, or a polled state)
	Channel         string    `json:"channel,omitempty"`          // messaging: first channel of the scenario, or a polled channel
	NotificationID  string    `json:"notification_id,omitempty"`  // notify: notificationId of the answer
	ExternalID      string    `json:"external_id,omitempty"`      // notify: externalId sent
	RetryAfter      string    `json:"retry_after,omitempty"`      // Retry-After header as received
	RateLimit       string    `json:"ratelimit,omitempty"`        // RateLimit header (IETF draft) as received
	RateLimitPolicy string    `json:"ratelimit_policy,omitempty"` // RateLimit-Policy header as received
	Mismatch        bool      `json:"mismatch,omitempty"`         // idempotency probe answered with another notificationId than the message's (messaging: another txId)
	Capped          bool      `json:"capped,omitempty"`           // a first attempt delayed by the attacker's cap on messages in flight (it was due while the cap was full)
	GaveUp          string    `json:"gave_up,omitempty"`          // the send wanted after (or instead of) this attempt was not made: retry_after_past_end, backoff_past_end, limit_past_end (it would have left after the run's end: load duration + grace), stopped (interrupted while waiting); not sent at all when Error starts "not sent:"
	ExpiresIn       float64   `json:"expires_in_s,omitempty"`     // token: the expires_in its answer announced, seconds (0: none announced); never the token itself
	Challenge       string    `json:"challenge,omitempty"`        // an answer 401 or 403: its WWW-Authenticate's scheme and error parameter only (Bearer error="invalid_token"), AuthNone when it had none
	Shape           string    `json:"shape,omitempty"`            // an answer 401 or 403: its body's shape, the top-level JSON keys sorted ({error,message,status}), or text, or empty; never a value of the body
}

// AuthNone is Attempt.Challenge of a 401 or 403 answer without WWW-Authenticate.
const AuthNone = "none"

// Late is how much later than planned the attempt left.
func (a *Attempt) Late() time.Duration { return a.Sent.Sub(a.Intended) }

// Event kinds in events.jsonl.
const (
	KindCallback     = "callback"     // messaging status record, valid
	KindIncoming     = "incoming"     // messaging incoming message, valid
	KindWebhook      = "webhook"      // notification callback event, valid
	KindMalformed    = "malformed"    // a body that breaks the specification's schema; Reason says why
	KindUnauthorized = "unauthorized" // a call refused by the sink's authentication
)

// Event is one call received by the sink: one line of events.jsonl. Nothing that
// arrives is dropped: invalid bodies are kept as KindMalformed with a Reason.
type Event struct {
	Kind       string          `json:"kind"`
	Route      string          `json:"route"`             // /callback, /incoming, /webhook
	ReceivedAt time.Time       `json:"received_at"`       // RFC 3339 with nanoseconds
	API        string          `json:"api,omitempty"`     // APIMessaging or APINotify, from the route
	Payload    json.RawMessage `json:"payload,omitempty"` // the body as received, when it is JSON
	Raw        string          `json:"raw,omitempty"`     // the body as received, when it is not JSON
	Reason     string          `json:"reason,omitempty"`  // why it is malformed or unauthorized
	Corr       *Correlation    `json:"corr,omitempty"`    // what correlation found
	// Answered is the HTTP status the sink gave instead of its normal answer when
	// told to refuse a share of calls on purpose (to make the service retry); 0
	// means the normal answer (200 for a valid event).
	Answered int `json:"answered,omitempty"`
	// Delayed is how long, in seconds, the sink held its answer on purpose (a
	// delay fault): a service that timed out meanwhile retries, and that retry
	// is redelivered on request, not the service's duplicate.
	Delayed float64 `json:"delayed_s,omitempty"`
	// Sig is what the call's signature headers said, when it had any
	// (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature).
	Sig *Signature `json:"sig,omitempty"`
}

// SignatureStandardWebhooks is Signature.Scheme of Standard Webhooks v1
// signatures (a "v1,<base64 HMAC-SHA256>" in webhook-signature).
const SignatureStandardWebhooks = "standard-webhooks-v1"

// Signature is a call's signature as the sink read it.
type Signature struct {
	Scheme string `json:"scheme"` // SignatureStandardWebhooks
	// Skew is received_at less webhook-timestamp, seconds: the sender's
	// clock against the sink's plus the call's way (negative: from the
	// sink's future).
	Skew float64 `json:"skew_s"`
	// Verified is yes or no when the sink has the secret to check it, else
	// empty.
	Verified string `json:"verified,omitempty"`
	// Problem says why the headers do not parse (never their values); the
	// other fields are then empty.
	Problem string `json:"problem,omitempty"`
}

// ServiceID is the id the service gave the message an event is about, the one
// an event joins its send by when it carries no tag of the run: the txId of a
// messaging callback, the notificationId of a webhook (read from its body: a
// sink keyed a webhook by its externalId before), "" when it has none. Never
// the externalId: the seed makes it unique only per client.
func (e *Event) ServiceID() string {
	switch e.Kind {
	case KindCallback:
		if e.Corr != nil {
			return e.Corr.Key
		}
	case KindWebhook:
		var w struct {
			NotificationID string `json:"notificationId"`
		}
		if json.Unmarshal(e.Payload, &w) == nil {
			return w.NotificationID
		}
	}
	return ""
}

// Correlation is what the sink could tell about an event from its tag alone.
type Correlation struct {
	Key          string    `json:"key,omitempty"`           // txId (messaging); notify: the tagged externalId, else the notificationId (an older sink: the externalId)
	Run          string    `json:"run,omitempty"`           // run id from the tag
	Part         string    `json:"part,omitempty"`          // part from the tag (a run with parts)
	Seq          int64     `json:"seq,omitempty"`           // sequence from the tag
	FirstSent    time.Time `json:"first_sent,omitzero"`     // first-attempt send time from the tag
	State        string    `json:"state,omitempty"`         // state or status of the event
	Channel      string    `json:"channel,omitempty"`       //
	Terminal     bool      `json:"terminal,omitempty"`      // a final state for the message
	Matched      bool      `json:"matched"`                 // the tag was found and belongs to a send
	Duplicate    bool      `json:"duplicate,omitempty"`     // not the first arrival of this (key, state), nor a redelivery the sink asked for
	Redelivered  bool      `json:"redelivered,omitempty"`   // a second arrival of a call the sink refused or held on purpose (Event.Answered, Event.Delayed): redelivered on request, not a duplicate
	Latency      float64   `json:"latency_s,omitempty"`     // ReceivedAt - FirstSent, seconds, first arrivals only
	FailoverStep bool      `json:"failover_step,omitempty"` // the channel changed against the previous event of this message
	OutgoingTxID string    `json:"outgoing_tx_id,omitempty"`
}

// Meta describes a run: what was planned and when it ran. It is written at the
// start of a run and rewritten at its end, so a report can be built from the run
// directory alone.
type Meta struct {
	ID          string    `json:"id"`
	Part        string    `json:"part,omitempty"` // the part's name in the tags of a run with parts (rundir.Tag.Part); "" for a run without parts
	Scenario    string    `json:"scenario"`
	API         string    `json:"api"`
	Target      string    `json:"target"`                 // "embedded" or the API base URL
	Description string    `json:"description,omitempty"`  // the scenario's description
	Version     string    `json:"version"`                // msgload's module version ("(devel)" for a build from a work tree)
	Commit      string    `json:"commit,omitempty"`       // the VCS revision msgload was built from (vcs.revision), "+dirty" when modified
	CommitTime  string    `json:"commit_time,omitempty"`  // vcs.time of that revision
	Host        string    `json:"host,omitempty"`         // the machine that ran the attack
	MetricsAddr string    `json:"metrics_addr,omitempty"` // host:port the run served /metrics on (Prometheus scrapes it); absent when none
	Start       time.Time `json:"start"`
	AttackEnd   time.Time `json:"attack_end,omitzero"`
	End         time.Time `json:"end,omitzero"`
	Interrupted bool      `json:"interrupted,omitempty"`
	Clients     []string  `json:"clients"`
	Planned     Plan      `json:"planned"`
	Limit       Limit     `json:"limit"`
	Delivery    Delivery  `json:"delivery"`
	Thresholds  []string  `json:"thresholds,omitempty"`
	Retry       Retry     `json:"retry"`
	Probes      float64   `json:"idempotency_probes,omitempty"` // share of messages probed, 0..1
	Chain       []string  `json:"chain,omitempty"`              // messaging: the scenario's channels in order (the failover chain)
	MaxInFlight int       `json:"max_in_flight,omitempty"`      // the attacker's cap on messages in flight; 0 = none
	// Shard is set in the run directory of one shard of a sharded run
	// (msgload run --shard I/N): which messages it sent. Planned is its share.
	Shard *Shard `json:"shard,omitempty"`
	// Merged is set in the run directory msgload report --merge built from
	// the shards' directories.
	Merged *Merged `json:"merged,omitempty"`
	// StartAt is the instant the run was told to begin (msgload run
	// --start-at), when it was: every shard of one run has the same.
	StartAt time.Time `json:"start_at,omitzero"`
	// LateStart is how many seconds after StartAt this process began, when
	// it began more than a second late (a pod scheduled or pulled late): its
	// shard did not start with the others.
	LateStart float64 `json:"late_start_s,omitempty"`
	// BarrierMissing lists the shards whose ready markers were not in the
	// start barrier (msgload run --barrier) when this one began: they did not
	// start with it.
	BarrierMissing []int `json:"barrier_missing,omitempty"`
	// ScenarioDigest is ScenarioDigest of the run's scenario.yaml (the
	// resolved scenario, secrets redacted): shards of one run have the same,
	// so the merge tells two runs that reused one run id apart.
	ScenarioDigest string `json:"scenario_digest,omitempty"`
	// Aborted is set when an abortOnFail threshold, judged live, stopped
	// the attack (the run ends fail, reports say by which and when).
	Aborted *Abort `json:"aborted,omitempty"`
	// DiskLow is set when the run's sends were stopped because its
	// directory's disk had less free than the reserve the run keeps: the run
	// is incomplete, for the environment's reason.
	DiskLow *DiskLow `json:"disk_low,omitempty"`
	// Failed is why the attack stopped on a failure of msgload's own before
	// its plan was sent — an attempt it could not record (a failing disk),
	// a message body it could not build — when it had sent some: what was
	// sent is waited for and reported, and the run is incomplete, never
	// pass. Empty: no such failure.
	Failed string `json:"failed,omitempty"`
	// SinkWriteErrors are the calls the run's sink could not write to its
	// log during the run (a full or failing disk, stalled storage): it
	// answered them 500 or 503, so the sender may have retried them — or
	// not, and their messages read as lost for a reason of the environment's.
	// A standalone sink's is its count's growth over the run's window (the
	// calls of other runs it served then included).
	SinkWriteErrors int64 `json:"sink_write_errors,omitempty"`
	// SinkUnread says what the run could not read of a standalone sink:
	// the events missing from its copy read as never sent, and an unread
	// count of write failures is unknown, not 0. nil: all was read (an
	// embedded sink's always is).
	SinkUnread *SinkUnread `json:"sink_unread,omitempty"`
	// TargetMemory is where the run sampled its target's memory
	// (TargetMemoryFile); nil when the scenario names no target.metrics.
	TargetMemory *MemorySource `json:"target_memory,omitempty"`
}

// MemorySource is where and how a run sampled its target's memory: a
// Prometheus metrics endpoint (its URL with any password redacted), the
// metric read there (the sum of its series) and how often.
type MemorySource struct {
	URL    string   `json:"url"`
	Metric string   `json:"metric"`
	Every  Duration `json:"every"`
}

// MemorySample is one look at the target's memory: Bytes as the metric said
// it, or Error when the endpoint could not be read or did not have it (a
// sample missing, never 0 bytes).
type MemorySample struct {
	At    time.Time `json:"at"`
	Bytes *float64  `json:"bytes,omitempty"`
	Error string    `json:"error,omitempty"`
}

// Abort is what stopped a run's attack early: an abortOnFail threshold that
// failed when judged live.
type Abort struct {
	Threshold string    `json:"threshold"`      // the expression as written
	Part      string    `json:"part,omitempty"` // the part whose threshold it was, in a run with parts
	At        time.Time `json:"at"`             // when the live evaluation found it failing
	Value     float64   `json:"value"`          // its figure then (the left side of the comparison)
	// Final: it could no longer pass (a count that only grows, over its
	// bound); otherwise it failed at an evaluation after its delayAbortEval.
	Final bool `json:"final"`
}

// Merged says which shards a merged run directory was built from.
type Merged struct {
	Shards  int      `json:"shards"`            // shards of the run (N)
	Indexes []int    `json:"indexes"`           // the shards merged, in order
	Missing []int    `json:"missing,omitempty"` // shards of the run not merged: the run is incomplete
	By      string   `json:"by"`                // how the run was partitioned: clients or sequence
	Dirs    []string `json:"dirs"`              // the shard directories, as given
	// SinkLogs are the sink logs whose events replaced the shards' copies
	// (msgload report --merge --sink-log), when any.
	SinkLogs []string `json:"sink_logs,omitempty"`
	// Problems are what the merge found wrong with the shards it was given
	// (a shard killed or interrupted, a raw file missing or empty, a plan
	// that is not the others'): each makes the merged verdict at least as bad
	// as its Verdict, whatever the merged figures say.
	Problems []MergeProblem `json:"problems,omitempty"`
}

// MergeProblem is one thing wrong with a shard given to the merge.
type MergeProblem struct {
	Shard   int    `json:"shard"`   // the shard's index
	Verdict string `json:"verdict"` // the verdict it makes the run at best: incomplete or error
	Whose   string `json:"whose"`   // environment (the shard could not finish) or measurement (its files are not a whole record of one run)
	Reason  string `json:"reason"`  // what is wrong, for people
}

// Plan is what the pacer was asked to do.
type Plan struct {
	Profile  string   `json:"profile"`  // constant, ramp, steps, sine, replay
	Rate     float64  `json:"rate"`     // mean planned requests per second, all clients
	Requests int64    `json:"requests"` // messages planned (first attempts)
	Duration Duration `json:"duration"`
	// Counted: the plan is a count (load.requests): every one of Requests is
	// sent, late if it must, and one fewer is a shortfall (a duration plan's
	// Requests is its rate's integral, rounded).
	Counted bool `json:"counted,omitempty"`
}

// Limit is the rate limit the scenario expects of the service, per client.
type Limit struct {
	Requests int      `json:"requests"` // e.g. 100
	Window   Duration `json:"window"`   // e.g. 1m
	Mode     string   `json:"mode"`     // respect or exceed
}

// Delivery is how delivery was measured.
type Delivery struct {
	Via   string   `json:"via"`   // sink or poll
	Grace Duration `json:"grace"` // how long the run waited for terminal statuses
}

// Retry is the retry policy the attacker used.
type Retry struct {
	On      []string `json:"on,omitempty"` // codes and "timeout"
	Max     int      `json:"max"`
	Backoff Duration `json:"backoff"`
}

// Hostname is the name of this machine for run.json's host ("" when it cannot
// be told).
func Hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

// DefaultMaxInFlight is load.maxInFlight when the scenario sets none (the
// scenarios' defaults table; attack.DefaultMaxInFlight for callers of the
// attacker that set no cap): the report tells a cap the scenario lowered
// from the default one when it says whose limit held the load back. At
// 100 ms an answer it allows 10,240 sends a second.
const DefaultMaxInFlight = 1024

// NoInFlightCap is load.maxInFlight (and attack.Options.MaxInFlight) for no
// cap on messages in flight; run.json's max_in_flight is then 0.
const NoInFlightCap = -1

// SinkUnread is what the run could not read of its standalone sink
// (Meta.SinkUnread), each field why ("" when it was read).
type SinkUnread struct {
	// Events: the copy of the sink's events (GET /v1/events) did not
	// finish; events.jsonl holds what was copied before.
	Events string `json:"events,omitempty"`
	// WriteErrors: the sink's count of calls it could not write (GET
	// /v1/stats) was not read at the run's start or end, or went down (the
	// sink restarted): sink_write_errors is unknown.
	WriteErrors string `json:"write_errors,omitempty"`
}
