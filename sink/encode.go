package sink

import (
	"math"
	"strconv"
	"time"

	"github.com/msgload/msgload/internal/jsonesc"
	"github.com/msgload/msgload/rundir"
)

// appendEvent appends ev as one JSON line, decoding to the same rundir.Event as
// json.Marshal(ev) would (same keys, same omissions), without reflection: the
// encoder is on the hot path of every call. ev.Payload must be compact JSON
// (json.Compact), so the line holds no newline.
func appendEvent(b []byte, ev *rundir.Event) []byte {
	b = append(b, `{"kind":`...)
	b = jsonesc.Append(b, ev.Kind)
	b = append(b, `,"route":`...)
	b = jsonesc.Append(b, ev.Route)
	b = append(b, `,"received_at":`...)
	b = appendTime(b, ev.ReceivedAt)
	if ev.API != "" {
		b = append(b, `,"api":`...)
		b = jsonesc.Append(b, ev.API)
	}
	if len(ev.Payload) > 0 {
		b = append(b, `,"payload":`...)
		b = append(b, ev.Payload...)
	}
	if ev.Raw != "" {
		b = append(b, `,"raw":`...)
		b = jsonesc.Append(b, ev.Raw)
	}
	if ev.Reason != "" {
		b = append(b, `,"reason":`...)
		b = jsonesc.Append(b, ev.Reason)
	}
	if ev.Corr != nil {
		b = appendCorr(b, ev.Corr)
	}
	if ev.Answered != 0 {
		b = append(b, `,"answered":`...)
		b = strconv.AppendInt(b, int64(ev.Answered), 10)
	}
	if ev.Delayed != 0 && !math.IsNaN(ev.Delayed) && !math.IsInf(ev.Delayed, 0) {
		b = append(b, `,"delayed_s":`...)
		b = appendFloat(b, ev.Delayed)
	}
	if ev.Sig != nil {
		b = appendSig(b, ev.Sig)
	}
	return append(b, "}\n"...)
}

// appendSig appends the event's signature, as the "sig" member.
func appendSig(b []byte, g *rundir.Signature) []byte {
	b = append(b, `,"sig":{"scheme":`...)
	b = jsonesc.Append(b, g.Scheme)
	b = append(b, `,"skew_s":`...)
	if math.IsNaN(g.Skew) || math.IsInf(g.Skew, 0) {
		b = append(b, '0')
	} else {
		b = appendFloat(b, g.Skew)
	}
	if g.Verified != "" {
		b = append(b, `,"verified":`...)
		b = jsonesc.Append(b, g.Verified)
	}
	if g.Problem != "" {
		b = append(b, `,"problem":`...)
		b = jsonesc.Append(b, g.Problem)
	}
	return append(b, '}')
}

// appendCorr appends the event's correlation, as the "corr" member.
func appendCorr(b []byte, c *rundir.Correlation) []byte {
	b = append(b, `,"corr":{`...)
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, `":`...)
	}
	if c.Key != "" {
		key("key")
		b = jsonesc.Append(b, c.Key)
	}
	if c.Run != "" {
		key("run")
		b = jsonesc.Append(b, c.Run)
	}
	if c.Part != "" {
		key("part")
		b = jsonesc.Append(b, c.Part)
	}
	if c.Seq != 0 {
		key("seq")
		b = strconv.AppendInt(b, c.Seq, 10)
	}
	if !c.FirstSent.IsZero() {
		key("first_sent")
		b = appendTime(b, c.FirstSent)
	}
	if c.State != "" {
		key("state")
		b = jsonesc.Append(b, c.State)
	}
	if c.Channel != "" {
		key("channel")
		b = jsonesc.Append(b, c.Channel)
	}
	if c.Terminal {
		key("terminal")
		b = append(b, "true"...)
	}
	key("matched")
	b = strconv.AppendBool(b, c.Matched)
	if c.Duplicate {
		key("duplicate")
		b = append(b, "true"...)
	}
	if c.Redelivered {
		key("redelivered")
		b = append(b, "true"...)
	}
	if c.Latency != 0 && !math.IsNaN(c.Latency) && !math.IsInf(c.Latency, 0) {
		key("latency_s")
		b = appendFloat(b, c.Latency)
	}
	if c.FailoverStep {
		key("failover_step")
		b = append(b, "true"...)
	}
	if c.OutgoingTxID != "" {
		key("outgoing_tx_id")
		b = jsonesc.Append(b, c.OutgoingTxID)
	}
	b = append(b, '}')
	return b
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendFloat formats like encoding/json: 'f' unless very small or very large.
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(b, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}
