package rundir

import "time"

// LostMessage is a line of LostFile: a message accepted with no final status
// by the deadline (Late: its final status came after it), as the report
// decided it. The ids the service answered are in AttemptsFile, joined by
// Seq (the report prints the jq line that joins them).
type LostMessage struct {
	Seq       int64      `json:"seq"`                  // the message's sequence number (Attempt.Seq)
	Late      bool       `json:"late"`                 // a final status came, after the deadline
	FirstSent *time.Time `json:"first_sent,omitempty"` // its first attempt's send time, when known
	Channel   string     `json:"channel,omitempty"`    // late: the channel it ended on; else the one it was last seen on (or waited on)
	State     string     `json:"state,omitempty"`      // late: the final state that came
	FinalAt   *time.Time `json:"final_at,omitempty"`   // late: when that final status arrived
}
