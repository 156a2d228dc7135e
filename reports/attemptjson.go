package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/msgload/msgload/internal/flatjson"
	"github.com/msgload/msgload/rundir"
)

// decodeAttempt decodes one line of attempts.jsonl into a (zeroed) exactly as
// json.Unmarshal does. Reading the attempts was most of a report's CPU (5–8 µs
// a line through reflection, for every request of the run). Lines as the
// attacker writes them — flat, keys spelt as the struct's tags, strings
// without escapes — are read directly (about a tenth of the cost); anything
// else (an escape, a null, an unknown or differently cased key, a
// number out of range or not in JSON's grammar) goes to json.Unmarshal, which
// also judges every line that does not decode. The two agree by construction
// on what the direct path takes (TestDecodeAttemptAgreesWithJSON).
//
// The fields of few values (api, op, client, outcome, class, state, channel,
// probe, gave_up) are interned in in: one string each rather than one a line.
func decodeAttempt(in *interner, b []byte, a *rundir.Attempt) error {
	if fastAttempt(in, b, a) {
		return nil
	}
	*a = rundir.Attempt{}
	return json.Unmarshal(b, a)
}

// seqKey is Seq's key in attempts.jsonl.
var seqKey = []byte("seq")

// decodeSeq reads the sequence of one line of attempts.jsonl into a.Seq,
// for the census (stream.go), and fails only where the line cannot decode:
// a line decodeAttempt reads gives its Seq, and one it cannot read may too
// (a value out of its type, a time that does not parse: never converted
// here). So the census counts
// every record the analysis reads and at most a few more; a message with a
// record counted but unread is settled at the end (landAll), never twice.
// The census is a third of a bounded analysis's passes, and converting the
// values it does not need (times, floats, strings) most of a line's cost.
// A key that is not "seq" but reads as it (json.Unmarshal matches keys
// without regard to case: "SEQ", "ſeq"), or a line not in flatjson's subset,
// is decoded in full.
func decodeSeq(in *interner, b []byte, a *rundir.Attempt) error {
	var seq int64
	fast := flatjson.Fields(b, func(key, v []byte) bool {
		if len(key) < 3 || len(key) > 3*utf8.UTFMax || !bytes.EqualFold(key, seqKey) {
			return true // not Seq's field, whatever its value
		}
		var ok bool
		if string(key) == "seq" {
			seq, ok = fastInt(v)
		}
		return ok
	})
	if fast {
		*a = rundir.Attempt{Seq: seq}
		return nil
	}
	*a = rundir.Attempt{}
	return decodeAttempt(in, b, a)
}

// fastAttempt reads b into a when b is in the subset decodeAttempt describes
// (split by flatjson.Fields); false (a possibly half filled) otherwise.
func fastAttempt(in *interner, b []byte, a *rundir.Attempt) bool {
	return flatjson.Fields(b, func(key, v []byte) bool { return fastField(in, a, key, v) })
}

// fastField sets the field of key from the raw value v.
func fastField(in *interner, a *rundir.Attempt, key, v []byte) bool {
	var ok bool
	switch string(key) { // no copy: a switch on the bytes
	case "seq":
		a.Seq, ok = fastInt(v)
	case "api":
		a.API, ok = in.field(fieldAPI, v)
	case "op":
		a.Op, ok = in.field(fieldOp, v)
	case "client":
		a.Client, ok = in.field(fieldClient, v)
	case "attempt":
		var x int64
		x, ok = fastInt(v)
		a.Attempt = int(x)
	case "probe":
		a.Probe, ok = in.field(fieldProbe, v)
	case "intended":
		ok = fastTime(v, a, 0)
	case "sent":
		ok = fastTime(v, a, 1)
	case "first_sent":
		ok = fastTime(v, a, 2)
	case "code":
		var x int64
		x, ok = fastInt(v)
		a.Code = int(x)
	case "latency_s":
		a.Latency, ok = fastFloat(v)
	case "bytes_out":
		a.BytesOut, ok = fastInt(v)
	case "bytes_in":
		a.BytesIn, ok = fastInt(v)
	case "outcome":
		a.Outcome, ok = in.field(fieldOutcome, v)
	case "class":
		a.Class, ok = in.field(fieldClass, v)
	case "error":
		a.Error, ok = fastString(v)
	case "tx_id":
		a.TxID, ok = fastString(v)
	case "state":
		a.State, ok = in.field(fieldState, v)
	case "channel":
		a.Channel, ok = in.field(fieldChannel, v)
	case "notification_id":
		a.NotificationID, ok = fastString(v)
	case "external_id":
		a.ExternalID, ok = fastString(v)
	case "retry_after":
		a.RetryAfter, ok = fastString(v)
	case "ratelimit":
		a.RateLimit, ok = fastString(v)
	case "ratelimit_policy":
		a.RateLimitPolicy, ok = fastString(v)
	case "mismatch":
		a.Mismatch, ok = fastBool(v)
	case "capped":
		a.Capped, ok = fastBool(v)
	case "gave_up":
		a.GaveUp, ok = in.field(fieldGaveUp, v)
	case "expires_in_s":
		a.ExpiresIn, ok = fastFloat(v)
	case "challenge":
		a.Challenge, ok = in.fastString(v)
	case "shape":
		a.Shape, ok = in.fastString(v)
	}
	return ok
}

// fastString is a quoted string with no escape and no control character
// (fastAttempt checked both), in valid UTF-8 (json.Unmarshal would replace
// invalid bytes).
func fastString(v []byte) (string, bool) { return (*interner)(nil).fastString(v) }

// interner keeps one copy of each string it saw, up to 1024 of them (a
// hostile file cannot grow it); nil interns nothing. It remembers too the
// value each interned field had on the line before (last): most lines
// repeat it, and comparing bytes costs less than hashing them.
type interner struct {
	m    map[string]string
	last [fieldCount]string
}

// The interned fields of an attempt, indexes of interner.last.
const (
	fieldAPI = iota
	fieldOp
	fieldClient
	fieldProbe
	fieldOutcome
	fieldClass
	fieldState
	fieldChannel
	fieldGaveUp
	fieldCount
)

// field is fastString for the interned field f: the string the line before
// had when the bytes are the same (it passed fastString's checks then).
func (in *interner) field(f int, v []byte) (string, bool) {
	if in == nil {
		return fastString(v)
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && string(v[1:len(v)-1]) == in.last[f] {
		return in.last[f], true
	}
	s, ok := in.fastString(v)
	if ok {
		in.last[f] = s
	}
	return s, ok
}

func (in *interner) fastString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	s := v[1 : len(v)-1]
	for _, c := range s {
		if c >= utf8.RuneSelf {
			if !utf8.Valid(s) {
				return "", false
			}
			break
		}
	}
	if in == nil {
		return string(s), true
	}
	if x, ok := in.m[string(s)]; ok {
		return x, true
	}
	x := string(s)
	if in.m == nil {
		in.m = map[string]string{}
	}
	if len(in.m) < 1024 {
		in.m[x] = x
	}
	return x, true
}

// fastInt is an integer in JSON's grammar (no leading zero, no fraction or
// exponent) that fits in 64 bits, as json.Unmarshal reads it into an int.
func fastInt(v []byte) (int64, bool) {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || d[0] == '0' && len(d) > 1 {
		return 0, false
	}
	var u uint64 // the magnitude, at most 1<<63 (MinInt64's)
	for _, c := range d {
		if c < '0' || c > '9' || u > (1<<63)/10 {
			return 0, false
		}
		if u = u*10 + uint64(c-'0'); u > 1<<63 {
			return 0, false
		}
	}
	if v[0] != '-' {
		if u > math.MaxInt64 {
			return 0, false
		}
		return int64(u), true
	}
	return -int64(u), true // 1<<63 gives MinInt64
}

// fastFloat is a number in JSON's grammar, parsed as json.Unmarshal does.
func fastFloat(v []byte) (float64, bool) {
	i, n := 0, len(v)
	if i < n && v[i] == '-' {
		i++
	}
	digits := func() int {
		s := i
		for i < n && v[i] >= '0' && v[i] <= '9' {
			i++
		}
		return i - s
	}
	s := i
	if d := digits(); d == 0 || v[s] == '0' && d > 1 {
		return 0, false
	}
	if i < n && v[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	if i < n && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < n && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	if i != n {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

func fastBool(v []byte) (bool, bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// fastTime is a quoted time, read by time.Time's UnmarshalJSON as
// json.Unmarshal does (which: 0 intended, 1 sent, 2 first_sent).
func fastTime(v []byte, a *rundir.Attempt, which int) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	t := &a.Intended
	switch which {
	case 1:
		t = &a.Sent
	case 2:
		t = &a.FirstSent
	}
	return t.UnmarshalJSON(v) == nil
}
