package attack

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/msgload/msgload/internal/jsonesc"
	"github.com/msgload/msgload/rundir"
)

// attemptFields is the number of fields appendAttempt knows. When
// rundir.Attempt gains a field, encodeAttempt falls back to encoding/json (and
// TestAppendAttemptMatchesJSON fails until appendAttempt learns it).
const attemptFields = 30

var fastAttempt = reflect.TypeFor[rundir.Attempt]().NumField() == attemptFields

// encodeAttempt returns a's JSON line (with the newline), byte for byte what
// json.Marshal gives, without reflection: the attempt log is written once per
// HTTP request and json.Marshal was the largest cost of the attack path.
func encodeAttempt(buf []byte, a *rundir.Attempt) ([]byte, error) {
	if !fastAttempt {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		return append(append(buf, b...), '\n'), nil
	}
	return append(appendAttempt(buf, a), '\n'), nil
}

func appendAttempt(b []byte, a *rundir.Attempt) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, a.Seq, 10)
	b = append(b, `,"api":`...)
	b = jsonesc.Append(b, a.API)
	b = append(b, `,"op":`...)
	b = jsonesc.Append(b, a.Op)
	b = append(b, `,"client":`...)
	b = jsonesc.Append(b, a.Client)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(a.Attempt), 10)
	b = appendOpt(b, `,"probe":`, a.Probe)
	b = append(b, `,"intended":`...)
	b = appendTime(b, a.Intended)
	b = append(b, `,"sent":`...)
	b = appendTime(b, a.Sent)
	b = append(b, `,"first_sent":`...)
	b = appendTime(b, a.FirstSent)
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(a.Code), 10)
	b = append(b, `,"latency_s":`...)
	b = appendFloat(b, a.Latency)
	b = append(b, `,"bytes_out":`...)
	b = strconv.AppendInt(b, a.BytesOut, 10)
	b = append(b, `,"bytes_in":`...)
	b = strconv.AppendInt(b, a.BytesIn, 10)
	b = append(b, `,"outcome":`...)
	b = jsonesc.Append(b, a.Outcome)
	b = append(b, `,"class":`...)
	b = jsonesc.Append(b, a.Class)
	b = appendOpt(b, `,"error":`, a.Error)
	b = appendOpt(b, `,"tx_id":`, a.TxID)
	b = appendOpt(b, `,"state":`, a.State)
	b = appendOpt(b, `,"channel":`, a.Channel)
	b = appendOpt(b, `,"notification_id":`, a.NotificationID)
	b = appendOpt(b, `,"external_id":`, a.ExternalID)
	b = appendOpt(b, `,"retry_after":`, a.RetryAfter)
	b = appendOpt(b, `,"ratelimit":`, a.RateLimit)
	b = appendOpt(b, `,"ratelimit_policy":`, a.RateLimitPolicy)
	if a.Mismatch {
		b = append(b, `,"mismatch":true`...)
	}
	if a.Capped {
		b = append(b, `,"capped":true`...)
	}
	b = appendOpt(b, `,"gave_up":`, a.GaveUp)
	if a.ExpiresIn != 0 {
		b = appendFloat(append(b, `,"expires_in_s":`...), a.ExpiresIn)
	}
	b = appendOpt(b, `,"challenge":`, a.Challenge)
	b = appendOpt(b, `,"shape":`, a.Shape)
	return append(b, '}')
}

func appendOpt(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return jsonesc.Append(append(b, key...), v)
}

// appendTime is time.Time's MarshalJSON (RFC 3339 with nanoseconds).
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendFloat is encoding/json's float64 format.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0') // json.Marshal would fail; a latency is never one
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
