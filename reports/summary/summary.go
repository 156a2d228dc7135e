package summary

import "github.com/msgload/msgload/rundir"

// SchemaVersion is the version of the summary.json layout; it grows when a field
// changes meaning (adding fields does not change it). 2: `ok` is `verdict` ==
// "pass" (no longer only "every threshold held"), and a figure without data is
// null. parseSummary reads 1 and 2.
const SchemaVersion = 2

// Summary is summary.json: every figure of a run, documented in README.md. The
// `expr` tags are the names thresholds use (the same as the JSON names).
type Summary struct {
	Schema         int          `json:"schema" expr:"schema"`
	Kind           string       `json:"kind,omitempty" expr:"-"`  // kindPart; a whole run's summary.json is KindRun (whole.go)
	Passed         bool         `json:"ok" expr:"ok"`             // Verdict == "pass" (kept for older readers)
	Verdict        string       `json:"verdict" expr:"-"`         // pass, fail, incomplete or error (verdict.go)
	VerdictReasons []string     `json:"verdict_reasons" expr:"-"` // every reason for it, in plain sentences
	Reasons        []Reason     `json:"reasons" expr:"-"`         // the same reasons: whose each is, its verdict and what to do (verdict.go)
	Run            RunInfo      `json:"run" expr:"run"`
	Requests       Requests     `json:"requests" expr:"requests"`
	RateLimit      RateLimit    `json:"rate_limit" expr:"rate_limit"`
	Idempotency    Idempotency  `json:"idempotency" expr:"idempotency"`
	Delivery       Delivery     `json:"delivery" expr:"delivery"`
	Outcomes       Outcomes     `json:"outcomes" expr:"outcomes"`
	Incoming       Incoming     `json:"incoming" expr:"incoming"`
	Truth          *TruthReport `json:"truth,omitempty" expr:"truth"`
	Drift          *Drift       `json:"drift" expr:"drift"` // null in a run shorter than driftMinRun (drift.go)
	Thresholds     []Threshold  `json:"thresholds" expr:"-"`
	Warnings       []string     `json:"warnings,omitempty" expr:"-"`
	// Partial marks a checkpoint written while the run goes (reports.PartialJSON):
	// the figures so far, verdict incomplete; the run's end rewrites it whole.
	Partial bool `json:"partial,omitempty" expr:"-"`
	// LatencyResolution is the resolution of every latency figure, in
	// seconds: 1 µs (each value is ranked rounded to it; bounded.go).
	LatencyResolution float64 `json:"latency_resolution_s" expr:"-"`
}

// RunInfo is what run.json says about the run.
type RunInfo struct {
	ID          string  `json:"id" expr:"id"`
	Scenario    string  `json:"scenario" expr:"scenario"`
	Part        string  `json:"part,omitempty" expr:"-"` // the part's name in a run with parts (run.json part)
	API         string  `json:"api" expr:"api"`
	Target      string  `json:"target" expr:"target"`
	Version     string  `json:"version" expr:"version"`
	Commit      string  `json:"commit,omitempty" expr:"commit"`
	CommitTime  string  `json:"commit_time,omitempty" expr:"commit_time"`
	Host        string  `json:"host,omitempty" expr:"host"`
	Description string  `json:"description,omitempty" expr:"description"`
	Clients     int     `json:"clients" expr:"clients"`
	Profile     string  `json:"profile,omitempty" expr:"profile"`
	PlannedDur  float64 `json:"planned_duration_s" expr:"planned_duration"`
	Start       string  `json:"start,omitempty" expr:"start"`
	AttackEnd   string  `json:"attack_end,omitempty" expr:"attack_end"`
	End         string  `json:"end,omitempty" expr:"end"`
	Duration    float64 `json:"attack_duration_s" expr:"attack_duration"`
	Interrupted bool    `json:"interrupted" expr:"interrupted"`
	DeliveryVia string  `json:"delivery_via" expr:"delivery_via"`
	Grace       float64 `json:"grace_s" expr:"grace"`
	// Shard is set in the summary of one shard of a sharded run: its figures
	// are its share only; msgload report --merge makes the whole run's.
	Shard *rundir.Shard `json:"shard,omitempty" expr:"shard"`
	// Merged is set in the summary msgload report --merge built: how many
	// shards the run had and which were merged.
	Merged *rundir.Merged `json:"merged,omitempty" expr:"merged"`
	// Aborted: an abortOnFail threshold stopped the attack (run.json aborted).
	Aborted *rundir.Abort `json:"aborted,omitempty" expr:"-"`
	// DiskLow: the run's disk ran low and its sends were stopped (run.json
	// disk_low): the run is incomplete.
	DiskLow *rundir.DiskLow `json:"disk_low,omitempty" expr:"-"`
	// Failed: the attack stopped on a failure of msgload's own, and why
	// (run.json failed): the run is incomplete.
	Failed string `json:"failed,omitempty" expr:"-"`
	// SinkWriteErrors: the calls the embedded sink could not write during
	// the run (run.json sink_write_errors), answered 500 or 503.
	SinkWriteErrors int64 `json:"sink_write_errors,omitempty" expr:"-"`
	// SinkUnread: what the run could not read of its standalone sink — the
	// copy of its events, its count of write failures (run.json
	// sink_unread); the verdict says what that leaves unknown.
	SinkUnread *rundir.SinkUnread `json:"sink_unread,omitempty" expr:"-"`
}

// Percentiles are latencies in seconds, exact nearest-rank (hist.go). With
// Count 0 there is no data: the figures are 0 here and null in summary.json.
//
// A delivery latency counts every accepted message: Censored of the Count had
// no final status by the end of the wait, and rank after the others. A
// percentile whose rank falls among them is unknown: its field is 0 here
// (null in summary.json) and its _at_least field holds its lower bound
// (hist.censoredQuantile); max and mean are then lower bounds too.
type Percentiles struct {
	Count       int64    `json:"count" expr:"count"`
	Censored    int64    `json:"censored" expr:"censored"`
	P50         float64  `json:"p50" expr:"p50"`
	P50AtLeast  *float64 `json:"p50_at_least,omitempty" expr:"-"`
	P90         float64  `json:"p90" expr:"p90"`
	P90AtLeast  *float64 `json:"p90_at_least,omitempty" expr:"-"`
	P95         float64  `json:"p95" expr:"p95"`
	P95AtLeast  *float64 `json:"p95_at_least,omitempty" expr:"-"`
	P99         float64  `json:"p99" expr:"p99"`
	P99AtLeast  *float64 `json:"p99_at_least,omitempty" expr:"-"`
	Max         float64  `json:"max" expr:"max"`
	MaxAtLeast  *float64 `json:"max_at_least,omitempty" expr:"-"`
	Mean        float64  `json:"mean" expr:"mean"`
	MeanAtLeast *float64 `json:"mean_at_least,omitempty" expr:"-"`
	P95Slope    *float64 `json:"p95_slope,omitempty" expr:"p95_slope"` // the p95's drift, s per s (drift.go): requests.latency, delivery.latency of a soak
	// Spans, set only by the counting pass of a bounded analysis (a live
	// judgement: reports.AnalyzeSendsCounting), are where P50, P90, P95 and
	// P99 lie when that pass gives no value (NaN): the least and the most
	// the nearest-rank value can be, the bucket of the counts holding its
	// rank (1/1024 of the value wide). Never in summary.json.
	Spans *Spans `json:"-" expr:"-"`
}

// Spans are the [least, most] of P50, P90, P95 and P99, in seconds.
type Spans [4][2]float64

// Requests covers every HTTP request the attacker made.
type Requests struct {
	Total        int64            `json:"total" expr:"total"`
	ByOp         map[string]int64 `json:"by_op" expr:"by_op"`
	Codes        map[string]int64 `json:"codes" expr:"codes"`
	Errors       map[string]int64 `json:"errors" expr:"errors"` // by class, ok excluded
	ErrorRate    float64          `json:"error_rate" expr:"error_rate"`
	Messages     int64            `json:"messages" expr:"messages"` // first attempts of sends
	Accepted     int64            `json:"accepted" expr:"accepted"` // messages with a 2xx on some attempt whose body was the API's answer (class ok)
	PlannedRate  float64          `json:"planned_rate" expr:"planned_rate"`
	AchievedRate float64          `json:"achieved_rate" expr:"achieved_rate"`
	PlannedCount int64            `json:"planned_messages" expr:"planned_messages"`
	PlanCounted  bool             `json:"plan_counted,omitempty" expr:"plan_counted"` // the plan is a count: every planned message is owed
	Latency      Percentiles      `json:"latency" expr:"latency"`
	// LatencyIntended runs from the intended send time (open model: includes the
	// attacker's own lag, so coordinated omission is visible).
	LatencyIntended Percentiles `json:"latency_intended" expr:"latency_intended"`
	Late            int64       `json:"late" expr:"late"` // attempts sent more than lateAfter behind plan
	LateAfter       float64     `json:"late_after_s" expr:"late_after"`
	SendLag         Percentiles `json:"send_lag" expr:"send_lag"`
	BadLines        int64       `json:"bad_lines" expr:"bad_lines"` // attempts.jsonl lines that did not decode
	// Duplicates counts attempts.jsonl lines that repeat an attempt already
	// read (the same seq, attempt, op, probe, client and send time): counted
	// once, and the verdict is error (a measurement reason).
	Duplicates int64 `json:"duplicate_lines,omitempty"`
	// GaveUp counts, by reason (Attempt.GaveUp), the sends the attacker did not
	// make: retry_after_past_end, backoff_past_end, limit_past_end (they would
	// have left after the run's end) and stopped (interrupted while waiting).
	GaveUp map[string]int64 `json:"gave_up,omitempty" expr:"gave_up"`
	// Capped counts the first attempts delayed by the attacker's cap on
	// messages in flight (due while MaxInFlight messages were in flight: the
	// target was too slow for the planned rate); they are late too.
	Capped      int64 `json:"capped,omitempty" expr:"capped"`
	MaxInFlight int   `json:"max_in_flight,omitempty" expr:"max_in_flight"` // the cap (from meta.json; 0 = none)

	// ErrorRateSlope is the error share's drift, a fraction per second (drift.go).
	ErrorRateSlope *float64 `json:"error_rate_slope,omitempty" expr:"error_rate_slope"`

	// Operations is the per-operation table: each operation's requests, ok,
	// 429 and other errors, mean and max latency (ops.go).
	Operations []OpFigure `json:"operations,omitempty" expr:"-"`
	// ErrorTable counts the requests that were not ok by operation, code,
	// class and message (digits aside), with the earliest one's text (ops.go).
	ErrorTable []ErrorRow `json:"error_table,omitempty" expr:"-"`
}

// RateLimit is what the run tells about the service's rate limit.
type RateLimit struct {
	Limit          int           `json:"limit" expr:"limit"`
	Window         float64       `json:"window_s" expr:"window"`
	Mode           string        `json:"mode" expr:"mode"`
	Clients        []ClientLimit `json:"clients" expr:"clients"`
	Rejected429    int64         `json:"rejected_429" expr:"rejected_429"`
	MaxAccepted    int           `json:"max_accepted_per_window" expr:"max_accepted_per_window"`
	ExcessAccepted int64         `json:"excess_accepted" expr:"excess_accepted"`
	// Findings429 is the number of 429s received in respect mode (each is a finding).
	Findings429 int64      `json:"findings_429" expr:"findings_429"`
	RetryAfter  RetryAfter `json:"retry_after" expr:"retry_after"`
	Headers     Headers    `json:"headers" expr:"headers"`
	Algorithm   Algorithm  `json:"algorithm" expr:"algorithm"`
}

// ClientLimit is the rate-limit view of one client.
type ClientLimit struct {
	ClientID       string  `json:"client_id" expr:"client_id"`
	Sent           int64   `json:"sent" expr:"sent"`
	Accepted       int64   `json:"accepted" expr:"accepted"`
	Rejected429    int64   `json:"rejected_429" expr:"rejected_429"`
	MaxAccepted    int     `json:"max_accepted_per_window" expr:"max_accepted_per_window"`
	ExcessAccepted int64   `json:"excess_accepted" expr:"excess_accepted"`
	First429At     string  `json:"first_429_at,omitempty" expr:"first_429_at"`
	First429AfterS float64 `json:"first_429_after_s,omitempty" expr:"first_429_after"`
}

// RetryAfter tells whether 429 answers carried a right Retry-After.
type RetryAfter struct {
	Present  int64 `json:"present" expr:"present"`     // 429s with the header
	Missing  int64 `json:"missing" expr:"missing"`     // 429s without it
	Invalid  int64 `json:"invalid" expr:"invalid"`     // present but neither seconds nor an HTTP date
	TooShort int64 `json:"too_short" expr:"too_short"` // the client's next request at or after it was refused again
	TooLong  int64 `json:"too_long" expr:"too_long"`   // the client had a request accepted before it expired
	Correct  int64 `json:"correct" expr:"correct"`     // present, valid, neither too short nor too long
}

// Headers counts the IETF draft rateLimit fields seen and checks the policy
// the service announced against the limit it was seen to enforce.
type Headers struct {
	RateLimit       int64   `json:"ratelimit" expr:"ratelimit"`
	RateLimitPolicy int64   `json:"ratelimit_policy" expr:"ratelimit_policy"`
	PolicyLimit     int     `json:"policy_limit,omitempty" expr:"policy_limit"`     // q of the first rateLimit-Policy
	PolicyWindow    float64 `json:"policy_window_s,omitempty" expr:"policy_window"` // w of the first rateLimit-Policy
	PolicyAgrees    bool    `json:"policy_agrees" expr:"policy_agrees"`             // see README
	PolicyVerdict   string  `json:"policy_verdict,omitempty" expr:"policy_verdict"` // why it agrees or not
}

// Algorithm is the verdict on which limiter the service behaves like.
type Algorithm struct {
	Verdict  string   `json:"verdict" expr:"verdict"` // sliding window, fixed window, token bucket, cannot tell, not exercised
	Limit    float64  `json:"estimated_limit" expr:"estimated_limit"`
	Capacity float64  `json:"estimated_capacity,omitempty" expr:"estimated_capacity"` // token bucket: burst size
	Evidence []string `json:"evidence" expr:"evidence"`
	// Contradictions per candidate model: decisions (accept or 429) the model would not have made.
	Contradictions map[string]int64 `json:"contradictions,omitempty" expr:"contradictions"`
	Decisions      int64            `json:"decisions" expr:"decisions"`
	// Window is the window of estimated_limit in seconds, read off the answers
	// (token bucket: the time to refill the burst).
	Window float64 `json:"estimated_window_s" expr:"estimated_window"`
	// DiffersFromScenario: the limit or window the service enforced is not run.json's.
	DiffersFromScenario bool `json:"differs_from_scenario" expr:"differs_from_scenario"`
	// FailuresUseQuota: whether failed answers (5xx, none) used quota, by the
	// fit: "yes", "no", "cannot tell"; absent when none came or nothing was fitted.
	FailuresUseQuota string `json:"failures_use_quota,omitempty" expr:"failures_use_quota"`
	// RefusalsUseQuota: whether 429 answers used quota, likewise.
	RefusalsUseQuota string `json:"refusals_use_quota,omitempty" expr:"refusals_use_quota"`
}

// Idempotency covers retries, probes and what they revealed.
type Idempotency struct {
	Probes     int64 `json:"probes" expr:"probes"`
	Retries    int64 `json:"retries" expr:"retries"`
	Mismatches int64 `json:"mismatches" expr:"mismatches"`
	// Compared counts the accepted answers compared with their message's
	// first id: resends (probes, copies, retries) answered 2xx with an id.
	// With none, mismatches has no data: nothing was compared.
	Compared            int64 `json:"compared" expr:"compared"`
	DuplicateDeliveries int64 `json:"duplicate_deliveries" expr:"duplicate_deliveries"` // messages that ended under a second id: delivered twice; null when delivery was not measured
	// IDCollisions counts accepted messages answered with an id (txId,
	// notificationId) the service had already given another message.
	IDCollisions int64 `json:"id_collisions" expr:"id_collisions"`
	// Measured: delivery was measured, so DuplicateDeliveries has data
	// (null in summary.json otherwise: the callbacks that came by chance
	// during a run that waited for none are no count).
	Measured bool `json:"-" expr:"-"`
}

// Delivery covers what happened to accepted messages after the send.
type Delivery struct {
	Via          string      `json:"via" expr:"via"`
	Measured     bool        `json:"measured" expr:"measured"` // false for delivery: none; the counts are then null
	Expected     int64       `json:"expected" expr:"expected"`
	Received     int64       `json:"received" expr:"received"`
	Lost         int64       `json:"lost" expr:"lost"`
	Late         int64       `json:"late" expr:"late"`
	Duplicates   int64       `json:"duplicates" expr:"duplicates"`
	Unmatched    int64       `json:"unmatched" expr:"unmatched"`
	Malformed    int64       `json:"malformed" expr:"malformed"`
	Unauthorized int64       `json:"unauthorized" expr:"unauthorized"`
	Unconfirmed  int64       `json:"unconfirmed" expr:"unconfirmed"`               // delivered although no attempt got a 2xx (the answer was lost)
	BeforeSend   int64       `json:"before_send" expr:"before_send"`               // ended before their first send: a wrong join or clocks apart (verdict error; their latency counts as 0)
	Refused      int64       `json:"refused_on_purpose" expr:"refused_on_purpose"` // calls the sink refused on purpose (fault injection): the sink's refusals
	Redelivered  int64       `json:"redelivered" expr:"redelivered"`               // redelivered on request: the service's arrivals again, accepted, of calls the sink refused or held on purpose; not duplicates
	RetryDelay   Percentiles `json:"retry_delay" expr:"retry_delay"`               // refused or held call to its retry
	Events       int64       `json:"events" expr:"events"`
	BadLines     int64       `json:"bad_lines" expr:"bad_lines"`
	Deadline     string      `json:"deadline,omitempty" expr:"deadline"`
	Latency      Percentiles `json:"latency" expr:"latency"`
	// LatencyDelivered is the latency of the messages whose final status
	// came (late ones too) alone: survivors only, shown labelled as such and
	// never judged (no threshold reads it).
	LatencyDelivered Percentiles            `json:"latency_delivered" expr:"-"`
	ByChannel        map[string]Percentiles `json:"by_channel" expr:"by_channel"`
	ByState          map[string]Percentiles `json:"by_state" expr:"by_state"`
	Failover         Failover               `json:"failover" expr:"failover"`
	// LostSeqs are the sequence numbers (attempts.jsonl seq) of the first
	// maxListed lost messages, late ones included; LateSeqs of the first late
	// ones: the smallest, whatever the order read (contracts.go).
	LostSeqs []int64 `json:"lost_seqs,omitempty" expr:"-"`
	LateSeqs []int64 `json:"late_seqs,omitempty" expr:"-"`
}

// Failover describes cascades: how many messages reached each channel and the
// time each step took.
type Failover struct {
	Messages int64          `json:"messages" expr:"messages"` // messages with at least one step
	Funnel   []FunnelStage  `json:"funnel" expr:"funnel"`
	Steps    []FailoverStep `json:"steps" expr:"steps"`
}

// FunnelStage is one channel of the cascade.
type FunnelStage struct {
	Channel  string `json:"channel" expr:"channel"`
	Reached  int64  `json:"reached" expr:"reached"`   // messages with an event on this channel
	Terminal int64  `json:"terminal" expr:"terminal"` // messages whose final state came on it
}

// FailoverStep is one move from a channel to the next, with the time from the
// message's first send (or its previous step) to the first event showing it.
type FailoverStep struct {
	From  string      `json:"from" expr:"from"`
	To    string      `json:"to" expr:"to"`
	Count int64       `json:"count" expr:"count"`
	Time  Percentiles `json:"time" expr:"time"`
}

// Incoming covers messages subscribers sent back.
type Incoming struct {
	Received     int64       `json:"received" expr:"received"`
	Replies      int64       `json:"replies" expr:"replies"` // incoming that quote a message of this run
	ReplyLatency Percentiles `json:"reply_latency" expr:"reply_latency"`
}

// Threshold is one expression of the scenario and its verdict.
type Threshold struct {
	Expr  string  `json:"expr"`
	Value float64 `json:"value"` // the left side of the comparison (or 1/0 for a bare condition); null with noData
	OK    bool    `json:"ok"`
	Error string  `json:"error,omitempty"`
	// noData lists the figures the expression reads that have no data (a
	// latency with count 0, delivery not measured): the threshold fails.
	NoData []string `json:"no_data,omitempty"`
	// SimLagOnly: it fails only on the messages the embedded simulator
	// made late by falling behind (reports/simlag.go): not the service's.
	// Working state of the verdict, not in summary.json.
	SimLagOnly bool `json:"-"`
	// SinkLogOnly: it fails on delivery figures while the sink's log is in
	// doubt and messages have no final status (reports/storage.go): their
	// callbacks may be among the calls the sink did not log, so the failure
	// is not known to be the service's. Working state, not in summary.json.
	SinkLogOnly bool `json:"-"`
}

// TruthReport puts the measured figures beside the embedded simulator's ground
// truth, judged by the same rules (reports/README.md, "Ground truth").
type TruthReport struct {
	// Agrees is false when a measured figure differs from the truth beyond
	// the tolerance (counts: at all); null when the truth was not compared.
	Agrees        *bool    `json:"agrees" expr:"agrees"`
	Disagreements []string `json:"disagreements,omitempty" expr:"disagreements"`
	// DeliveryNotCompared is why the delivery figures were not compared
	// with the truth: the sink's log is known or may be incomplete
	// (run.sink_write_errors, run.sink_unread), so a difference would be
	// the environment's, not a msgload bug. The other figures still are.
	DeliveryNotCompared string `json:"delivery_not_compared,omitempty" expr:"delivery_not_compared"`
	Algorithm           string `json:"algorithm" expr:"algorithm"`
	Truncated           bool   `json:"truncated" expr:"truncated"`
	Messages            int64  `json:"messages" expr:"messages"`
	// TrueLatency runs from the first attempt's send to the start of the
	// simulator's first call of a record that ends the message;
	// TrueLatencyUpper to that call's answer. The measured latency must lie
	// between them, give or take the tolerance.
	TrueLatency           Percentiles   `json:"true_latency" expr:"true_latency"`
	TrueLatencyUpper      Percentiles   `json:"true_latency_upper" expr:"true_latency_upper"`
	MeasuredLatency       Percentiles   `json:"measured_latency" expr:"measured_latency"`               // delivery.latency, repeated for the side-by-side
	ExpectedLost          int64         `json:"expected_lost" expr:"expected_lost"`                     // accepted messages no record ending them surely reached the sink by the deadline
	ExpectedLostMin       int64         `json:"expected_lost_min" expr:"expected_lost_min"`             // the same if every unanswered call reached it, and every call started by the deadline reached it by then
	MeasuredLost          int64         `json:"measured_lost" expr:"measured_lost"`                     //
	ExpectedDuplicates    int64         `json:"expected_duplicates" expr:"expected_duplicates"`         // second arrivals of a (id, channel, state) after a 2xx
	ExpectedDuplicatesMax int64         `json:"expected_duplicates_max" expr:"expected_duplicates_max"` // the same if every unanswered call reached the sink
	ExpectedReceived      int64         `json:"expected_received" expr:"expected_received"`             // accepted messages with an ending record that surely arrived
	ExpectedReceivedMax   int64         `json:"expected_received_max" expr:"expected_received_max"`     // the same if every unanswered call arrived
	Unanswered            int64         `json:"unanswered" expr:"unanswered"`                           // calls that got no answer: the sink may or may not have logged them
	MeasuredDuplicates    int64         `json:"measured_duplicates" expr:"measured_duplicates"`         //
	ExpectedReaccepted    int64         `json:"expected_reaccepted" expr:"expected_reaccepted"`         // messages the simulator accepted under more than one id
	FailoverSteps         []TruthStep   `json:"failover_steps" expr:"failover_steps"`                   // per step, messages whose arrivals show it
	CallbacksDropped      int64         `json:"callbacks_dropped" expr:"callbacks_dropped"`             //
	CallbacksFailed       int64         `json:"callbacks_failed" expr:"callbacks_failed"`               //
	CallbacksDup          int64         `json:"callbacks_duplicated" expr:"callbacks_duplicated"`       //
	DuplicateSends        int64         `json:"duplicate_sends" expr:"duplicate_sends"`                 // messages sent downstream more than once
	Windows               []TruthWindow `json:"windows" expr:"windows"`
	WindowMismatches      int64         `json:"window_mismatches" expr:"window_mismatches"` // informative: the attacker counts by send time
	// SimLag is how far the simulator itself fell behind the delays it drew
	// (a busy machine), and the messages late or lost only because of it:
	// the environment's, not the service's (simlag.go). Null when the truth
	// records no due times (older runs, polls).
	SimLag *SimLag `json:"sim_lag" expr:"sim_lag"`

	// ExpectedDuplicateDeliveries counts the messages that the simulator's
	// calls which surely arrived end under two ids (notify: with two terminal
	// statuses); …Max the same counting the unanswered calls;
	// MeasuredDuplicateDeliveries is idempotency.duplicate_deliveries.
	ExpectedDuplicateDeliveries    int64 `json:"expected_duplicate_deliveries" expr:"expected_duplicate_deliveries"`
	ExpectedDuplicateDeliveriesMax int64 `json:"expected_duplicate_deliveries_max" expr:"expected_duplicate_deliveries_max"`
	MeasuredDuplicateDeliveries    int64 `json:"measured_duplicate_deliveries" expr:"measured_duplicate_deliveries"`
}

// TruthStep is one failover step, true and measured.
type TruthStep struct {
	From     string `json:"from" expr:"from"`
	To       string `json:"to" expr:"to"`
	True     int64  `json:"true" expr:"true"`         // messages whose calls that surely arrived show the step
	TrueMax  int64  `json:"true_max" expr:"true_max"` // the same counting unanswered calls
	Measured int64  `json:"measured" expr:"measured"`
}

// TruthWindow is one limiter window, true and measured.
type TruthWindow struct {
	Client           string `json:"client" expr:"client"`
	Start            string `json:"start" expr:"start"`
	Accepted         int    `json:"accepted" expr:"accepted"`
	Refused          int    `json:"refused" expr:"refused"`
	MeasuredAccepted int    `json:"measured_accepted" expr:"measured_accepted"`
	MeasuredRefused  int    `json:"measured_refused" expr:"measured_refused"`
}
