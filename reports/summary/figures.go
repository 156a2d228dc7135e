package summary

import (
	"encoding/json"
	"time"
)

// The summary.json objects whose type was declared beside the analysis that
// fills them (outcomes.go, drift.go, ops.go, verdict.go of package reports):
// here with the rest of the contract. Fields tagged `json:"-"` are the
// analysis' working state, never written.

// Outcomes says what became of each message the run sent, one count per
// ending (reports/README.md, "outcomes"): every message sent is either not
// accepted (gave up after retries among them) or accepted, and an accepted one
// ended delivered, not delivered, failed, expired, with another final status,
// or has no final status by the deadline (delivery.lost).
type Outcomes struct {
	Messages      int64            `json:"messages" expr:"messages"`               // messages sent (first attempts)
	Accepted      int64            `json:"accepted" expr:"accepted"`               // a 2xx on some attempt
	NotAccepted   int64            `json:"not_accepted" expr:"not_accepted"`       // no attempt got a 2xx
	GaveUp        int64            `json:"gave_up" expr:"gave_up"`                 // of those: the last attempt failed retryably with no retry left
	Refused       map[string]int64 `json:"not_accepted_by" expr:"not_accepted_by"` // the others, by the answer to their last attempt: 429, 4xx, 5xx, no answer
	Delivered     int64            `json:"delivered" expr:"delivered"`             // ended DELIVERED or SEEN by the deadline
	NotDelivered  int64            `json:"not_delivered" expr:"not_delivered"`     // ended NOT_DELIVERED (messaging) or UNDELIVERED (notify)
	Failed        int64            `json:"failed" expr:"failed"`                   // ended FAILED
	Expired       int64            `json:"expired" expr:"expired"`                 // ended EXPIRED
	OtherFinal    int64            `json:"other_final" expr:"other_final"`         // ended with a final status of another name
	NoFinalStatus int64            `json:"no_final_status" expr:"no_final_status"` // accepted, no final status by the deadline: delivery.lost
	ByState       map[string]int64 `json:"by_state" expr:"by_state"`               // accepted messages that ended by the deadline, by final status
	RetryMax      int              `json:"retry_max" expr:"retry_max"`             // retries the policy allowed per message (run.json retry.max)

	Measured bool `json:"-" expr:"-"` // delivery was measured: the counts from Delivered on have data
}

// ClearCounts zeroes the counts that need delivery measured.
func (o *Outcomes) ClearCounts() {
	o.Delivered, o.NotDelivered, o.Failed, o.Expired, o.OtherFinal, o.NoFinalStatus = 0, 0, 0, 0, 0, 0
	o.ByState = nil
}

// Add adds the counts of p (a part of the run) to o: every count summed,
// the retries allowed the larger. Whether delivery was measured is the
// caller's (a whole run is measured only if each part was).
func (o *Outcomes) Add(p Outcomes) {
	o.Messages += p.Messages
	o.Accepted += p.Accepted
	o.NotAccepted += p.NotAccepted
	o.GaveUp += p.GaveUp
	o.Delivered += p.Delivered
	o.NotDelivered += p.NotDelivered
	o.Failed += p.Failed
	o.Expired += p.Expired
	o.OtherFinal += p.OtherFinal
	o.NoFinalStatus += p.NoFinalStatus
	o.RetryMax = max(o.RetryMax, p.RetryMax)
	o.ByState = addCounts(o.ByState, p.ByState)
	o.Refused = addCounts(o.Refused, p.Refused)
}

// addCounts adds the counts of from to into, made when it is nil and from has any.
func addCounts(into, from map[string]int64) map[string]int64 {
	if into == nil && len(from) > 0 {
		into = make(map[string]int64, len(from))
	}
	for k, v := range from {
		into[k] += v
	}
	return into
}

// OutcomeDeliveryCounts are the JSON names of the Outcomes that need delivery
// measured: null in summary.json when it is not.
var OutcomeDeliveryCounts = []string{"delivered", "not_delivered", "failed", "expired", "other_final", "no_final_status", "by_state"}

// MarshalJSON writes the outcomes, the delivery counts null when delivery was
// not measured.
func (o Outcomes) MarshalJSON() ([]byte, error) {
	type plain Outcomes
	b, err := json.Marshal(plain(o))
	if err != nil || o.Measured {
		return b, err
	}
	return nullKeys(b, OutcomeDeliveryCounts)
}

// MismatchesMeasured says whether mismatches has data: some answer was set
// beside its message's first id (Compared), or the attacker flagged one.
func (i Idempotency) MismatchesMeasured() bool { return i.Compared > 0 || i.Mismatches > 0 }

// MarshalJSON writes the idempotency figures, duplicate_deliveries null
// when delivery was not measured.
func (i Idempotency) MarshalJSON() ([]byte, error) {
	type plain Idempotency
	b, err := json.Marshal(plain(i))
	if err != nil || i.Measured {
		return b, err
	}
	return nullKeys(b, []string{"duplicate_deliveries"})
}

// UnmarshalJSON reads the idempotency figures: duplicate_deliveries null
// (or absent) is not measured.
func (i *Idempotency) UnmarshalJSON(b []byte) error {
	type plain Idempotency
	var v struct {
		plain
		Dup *int64 `json:"duplicate_deliveries"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*i = Idempotency(v.plain)
	if v.Dup != nil {
		i.DuplicateDeliveries, i.Measured = *v.Dup, true
	}
	return nil
}

// UnmarshalJSON reads the outcomes; counts that are null read as 0.
func (o *Outcomes) UnmarshalJSON(b []byte) error {
	type plain Outcomes
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = Outcomes(v)
	o.Measured = v.ByState != nil
	return nil
}

// Drift is summary.json's drift: the slopes, null each when it has no data.
type Drift struct {
	Window                 float64    `json:"window_s" expr:"window"`
	Windows                int        `json:"windows" expr:"windows"`
	Method                 string     `json:"method" expr:"method"`
	RequestsLatencyP95     *float64   `json:"requests_latency_p95_slope" expr:"requests_latency_p95_slope"` // s per s
	DeliveryLatencyP95     *float64   `json:"delivery_latency_p95_slope" expr:"delivery_latency_p95_slope"` // s per s
	ErrorRate              *float64   `json:"error_rate_slope" expr:"error_rate_slope"`                     // fraction per s
	Memory                 *float64   `json:"memory_slope" expr:"memory_slope"`                             // bytes per s: the target's memory (target.metrics), null without it
	RequestsLatencyP95Wins []*float64 `json:"requests_latency_p95" expr:"-"`                                // the request p95 of each window (null: none)
	Notes                  []string   `json:"notes,omitempty" expr:"-"`
}

// OpFigure is one operation's row (summary.json requests.operations[]).
//
// Its latencies follow requests.latency's rule (Percentiles): an attempt
// with no answer (code 0: a timeout, a reset) has no latency, only "more
// than it was waited for". Censored counts such attempts; the mean and max
// run over the answered latencies and the censored ones' waits, and as soon
// as one is censored they are only lower bounds: the field is 0 here (null
// in summary.json) and its _at_least field holds the bound.
type OpFigure struct {
	Op                 string   `json:"op"`           // send, check_status, token, webhook
	Requests           int64    `json:"requests"`     // attempts of this operation
	OK                 int64    `json:"ok"`           // answered with the API's answer (class ok)
	Rejected429        int64    `json:"rejected_429"` // answered 429
	Errors             int64    `json:"errors"`       // every other class: 4xx, 5xx, timeouts, resets, bad answers
	Censored           int64    `json:"censored"`     // of the requests, those with no answer (code 0): their latency is censored
	LatencyMean        float64  `json:"latency_mean_s"`
	LatencyMeanAtLeast *float64 `json:"latency_mean_s_at_least,omitempty"`
	LatencyMax         float64  `json:"latency_max_s"`
	LatencyMaxAtLeast  *float64 `json:"latency_max_s_at_least,omitempty"`
	LatencyNs          int64    `json:"-"` // the sum, in whole nanoseconds, waits included: the mean does not depend on the order read
	LatencyTop         float64  `json:"-"` // the largest latency or wait, at least 0
}

// Latency returns the row's mean or max latency (name "mean" or "max") and
// whether it is only a lower bound (then v is the bound: the figure is more),
// as Percentiles.Figure does.
func (f OpFigure) Latency(name string) (v float64, lower bool) {
	if name == "max" {
		return figure(f.LatencyMax, f.LatencyMaxAtLeast)
	}
	return figure(f.LatencyMean, f.LatencyMeanAtLeast)
}

// RequestsText is the row's requests for the tables: "40", or "40 (3 with
// no answer)".
func (f OpFigure) RequestsText() string { return countText(f.Requests, f.Censored, NoAnswer) }

// MarshalJSON writes the row, its mean and max latency null when they are
// only lower bounds (their _at_least fields beside them hold the bounds).
func (f OpFigure) MarshalJSON() ([]byte, error) {
	type plain OpFigure
	b, err := json.Marshal(plain(f))
	if err != nil || f.Censored == 0 {
		return b, err
	}
	return nullKeys(b, []string{"latency_mean_s", "latency_max_s"})
}

// ErrorRow is one row of the errors table (summary.json requests.error_table[]):
// the attempts of an operation answered code (0: no answer) whose error reads
// alike (digits aside), counted, with the text of the earliest one.
type ErrorRow struct {
	Op      string    `json:"op"`
	Code    int       `json:"code"`
	Class   string    `json:"class"`
	Message string    `json:"message"` // the earliest sent attempt's error text, cut to 200 characters ("" when it had none)
	Count   int64     `json:"count"`
	First   time.Time `json:"-"` // the send time of the attempt whose text is kept
}

// Reason is one reason for a verdict (summary.json `reasons`): whose it is,
// the verdict it makes, what it says and what to do about it.
type Reason struct {
	Whose   string `json:"whose"`   // WhoseService, WhoseMeasurement or WhoseEnvironment
	Verdict string `json:"verdict"` // the verdict this reason makes: fail, incomplete or error
	// Limit names whose limit held the load under its plan (loadReasons):
	// generator_cpu, in_flight_cap, target or generator (it stopped early,
	// for no reason the raw files show); simulator_lag for the embedded
	// simulator's own lag (truth.sim_lag); empty for other reasons.
	Limit string `json:"limit,omitempty"`
	Text  string `json:"text"`
	Next  string `json:"next,omitempty"` // what to do
}

// SimLag is truth.sim_lag: how far behind its own schedule the embedded
// simulator made its calls, and what that did to the messages.
type SimLag struct {
	Max      float64 `json:"max" expr:"max"`           // the largest lag of any call, seconds: its start after its due time
	Messages int64   `json:"messages" expr:"messages"` // accepted messages late or lost only because of the lag
}
