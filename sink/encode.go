package sink

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/msgload/msgload/rundir"
)

// appendEvent appends ev as one JSON line, decoding to the same rundir.Event as
// json.Marshal(ev) would (same keys, same omissions), without reflection: the
// encoder is on the hot path of every call. ev.Payload must be compact JSON
// (json.Compact), so the line holds no newline.
func appendEvent(b []byte, ev *rundir.Event) []byte {
	b = append(b, `{"kind":`...)
	b = appendString(b, ev.Kind)
	b = append(b, `,"route":`...)
	b = appendString(b, ev.Route)
	b = append(b, `,"received_at":`...)
	b = appendTime(b, ev.ReceivedAt)
	if ev.API != "" {
		b = append(b, `,"api":`...)
		b = appendString(b, ev.API)
	}
	if len(ev.Payload) > 0 {
		b = append(b, `,"payload":`...)
		b = append(b, ev.Payload...)
	}
	if ev.Raw != "" {
		b = append(b, `,"raw":`...)
		b = appendString(b, ev.Raw)
	}
	if ev.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendString(b, ev.Reason)
	}
	if c := ev.Corr; c != nil {
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
			b = appendString(b, c.Key)
		}
		if c.Run != "" {
			key("run")
			b = appendString(b, c.Run)
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
			b = appendString(b, c.State)
		}
		if c.Channel != "" {
			key("channel")
			b = appendString(b, c.Channel)
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
			b = appendString(b, c.OutgoingTxID)
		}
		b = append(b, '}')
	}
	if ev.Answered != 0 {
		b = append(b, `,"answered":`...)
		b = strconv.AppendInt(b, int64(ev.Answered), 10)
	}
	return append(b, "}\n"...)
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

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD, as with
// encoding/json.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
