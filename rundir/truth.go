package rundir

import "time"

// Truth is what the embedded simulator did, as it drew it: the reference the
// measured figures are compared with. truth.json holds one Truth.
type Truth struct {
	RateLimit TruthRateLimit  `json:"rate_limit"`
	Windows   []TruthWindow   `json:"windows"`             // accepted and refused per client and window
	Messages  []TruthMessage  `json:"messages"`            // one per accepted message or notification
	Callbacks []TruthCallback `json:"callbacks"`           // every callback or webhook delivery attempt
	Truncated bool            `json:"truncated,omitempty"` // the simulator's truth buffer was full; later records are missing
}

// TruthRateLimit is the limit the simulator enforced.
type TruthRateLimit struct {
	Requests  int      `json:"requests"`
	Window    Duration `json:"window"`
	Algorithm string   `json:"algorithm"` // sliding, fixed, token-bucket
	// CountFailures, Count429: whether a request answered with an injected
	// failure, and a refused one, used quota (absent in older truth files).
	CountFailures *bool `json:"count_failures,omitempty"`
	Count429      *bool `json:"count_429,omitempty"`
}

// TruthWindow counts decisions of the limiter for one client in one window
// (windows aligned to the limiter's epoch, of the limit's length).
type TruthWindow struct {
	Client   string    `json:"client"`
	Start    time.Time `json:"start"`
	Accepted int       `json:"accepted"`
	Refused  int       `json:"refused"`
}

// TruthMessage is one accepted message and the fate the simulator drew for it.
type TruthMessage struct {
	API        string      `json:"api"`
	ID         string      `json:"id"` // txId or notificationId
	ExternalID string      `json:"external_id,omitempty"`
	Client     string      `json:"client"`
	AcceptedAt time.Time   `json:"accepted_at"`
	Sends      int         `json:"sends"` // how many times it was really sent downstream (idempotency oracle: must be 1)
	Steps      []TruthStep `json:"steps"`
	Final      string      `json:"final"` // final state or status
	// Pending is set on a message still in flight when the simulator
	// closed: when its next step or call was due by the delays it drew (its
	// own lag taken out, as TruthCallback.Due). Due before the run's
	// deadline, the message's end was kept from the run by the simulator
	// falling behind (a busy machine), not by the service.
	Pending time.Time `json:"pending,omitzero"`
}

// TruthStep is one state change the simulator drew, with its delay from acceptance.
type TruthStep struct {
	Channel string   `json:"channel,omitempty"`
	State   string   `json:"state"`
	Code    int      `json:"code"`
	Delay   Duration `json:"delay"` // from AcceptedAt
}

// Callback actions in TruthCallback.
const (
	CallbackSent       = "sent"
	CallbackRetried    = "retried"
	CallbackDropped    = "dropped"
	CallbackDuplicated = "duplicated"
	CallbackFailed     = "failed" // gave up after the last retry
)

// TruthCallback is one attempt of the simulator to call a callback, incoming or webhook URL.
type TruthCallback struct {
	ID      string    `json:"id"`   // txId or notificationId
	Kind    string    `json:"kind"` // KindCallback, KindIncoming, KindWebhook
	State   string    `json:"state,omitempty"`
	Channel string    `json:"channel,omitempty"` // messaging: the channel of the status change
	Action  string    `json:"action"`
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`               // when the call began (sent, retried) or the fault was drawn
	Done    time.Time `json:"done,omitzero"`    // sent, retried: when the receiver's answer (or the error) came
	Status  int       `json:"status,omitempty"` // the receiver's answer, 0 when none
	// Due is when the simulator meant to start the call (sent, retried) by
	// the delays it drew — acceptance, the drawn step delays, a delay drawn
	// on purpose, a retry's backoff after the last answer — without its own
	// lag: At − Due is how far the simulator itself fell behind (a busy
	// machine), which is the environment's, not the service's. Zero in
	// older truths.
	Due time.Time `json:"due,omitzero"`
}
