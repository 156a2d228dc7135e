package reports

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/msgload/msgload/internal/flatjson"
	"github.com/msgload/msgload/rundir"
)

// truthDecoder reads the lines of truth.jsonl as decodeAttempt reads
// attempts.jsonl (issue 23: encoding/json's reflection was about 70 % of the
// garbage `msgload report` made on a run with callbacks and a truth). The
// two records of every call and every message, as the simulator writes them
// — `{"type":"callback","callback":{…}}` and `{"type":"message","message":{…}}`,
// keys spelt as the tags, each once, strings without escapes — are read
// directly into records reused from line to line (a reader keeps nothing of a
// record past its fn: rundir.TruthDecoder); anything else, and every line
// that does not decode, goes to json.Unmarshal, which stays the judge. The
// two agree on what the direct path takes (TestDecodeTruthAgreesWithJSON,
// FuzzDecodeTruth).
type truthDecoder struct {
	in    interner
	cb    rundir.TruthCallback
	msg   rundir.TruthMessage
	steps []rundir.TruthStep
	flat  []byte // objectFields' copy of a message line
}

const (
	truthCallbackPrefix = `{"type":"callback","callback":`
	truthMessagePrefix  = `{"type":"message","message":`
)

// decode is a rundir.TruthDecoder.
func (d *truthDecoder) decode(b []byte, rec *rundir.TruthRecord) error {
	if d.fast(b, rec) {
		return nil
	}
	*rec = rundir.TruthRecord{}
	return json.Unmarshal(b, rec)
}

// fast reads b into rec when it is one of the two records in the form
// truthDecoder describes; false (rec possibly half filled) otherwise.
func (d *truthDecoder) fast(b []byte, rec *rundir.TruthRecord) bool {
	if len(b) == 0 || b[len(b)-1] != '}' {
		return false
	}
	switch {
	case bytes.HasPrefix(b, []byte(truthCallbackPrefix)):
		d.cb = rundir.TruthCallback{}
		var seen uint16
		if !flatjson.Fields(b[len(truthCallbackPrefix):len(b)-1], func(k, v []byte) bool { return d.callbackField(&seen, k, v) }) {
			return false
		}
		rec.Type, rec.Callback = rundir.TruthRecCallback, &d.cb
	case bytes.HasPrefix(b, []byte(truthMessagePrefix)):
		d.msg, d.steps = rundir.TruthMessage{}, d.steps[:0]
		var seen uint16
		if !objectFields(b[len(truthMessagePrefix):len(b)-1], &d.flat, func(k, v []byte) bool { return d.messageField(&seen, k, v) }) {
			return false
		}
		rec.Type, rec.Message = rundir.TruthRecMessage, &d.msg
	default:
		return false
	}
	return true
}

// once marks field i seen, false when it was already (a key given twice
// goes to json.Unmarshal, whose merging the direct path does not copy).
func once(seen *uint16, i uint) bool {
	if *seen&(1<<i) != 0 {
		return false
	}
	*seen |= 1 << i
	return true
}

func (d *truthDecoder) callbackField(seen *uint16, key, v []byte) bool {
	c, in := &d.cb, &d.in
	var ok bool
	switch string(key) {
	case "id":
		ok = once(seen, 0)
		c.ID, ok = fastStringIf(ok, v)
	case "kind":
		c.Kind, ok = in.field(fieldOp, v) // the interner's slots are the attempt's; any will do
		ok = ok && once(seen, 1)
	case "state":
		c.State, ok = in.field(fieldState, v)
		ok = ok && once(seen, 2)
	case "channel":
		c.Channel, ok = in.field(fieldChannel, v)
		ok = ok && once(seen, 3)
	case "action":
		c.Action, ok = in.field(fieldOutcome, v)
		ok = ok && once(seen, 4)
	case "attempt":
		var x int64
		x, ok = fastInt(v)
		c.Attempt, ok = int(x), ok && once(seen, 5)
	case "at":
		ok = fastTimeTo(v, &c.At) && once(seen, 6)
	case "done":
		ok = fastTimeTo(v, &c.Done) && once(seen, 7)
	case "status":
		var x int64
		x, ok = fastInt(v)
		c.Status, ok = int(x), ok && once(seen, 8)
	case "due":
		ok = fastTimeTo(v, &c.Due) && once(seen, 9)
	}
	return ok
}

func (d *truthDecoder) messageField(seen *uint16, key, v []byte) bool {
	m, in := &d.msg, &d.in
	var ok bool
	switch string(key) {
	case "api":
		m.API, ok = in.field(fieldAPI, v)
		ok = ok && once(seen, 0)
	case "id":
		m.ID, ok = fastStringIf(once(seen, 1), v)
	case "external_id":
		m.ExternalID, ok = fastStringIf(once(seen, 2), v)
	case "client":
		m.Client, ok = in.field(fieldClient, v)
		ok = ok && once(seen, 3)
	case "accepted_at":
		ok = fastTimeTo(v, &m.AcceptedAt) && once(seen, 4)
	case "sends":
		var x int64
		x, ok = fastInt(v)
		m.Sends, ok = int(x), ok && once(seen, 5)
	case "steps":
		ok = once(seen, 6) && d.readSteps(v)
	case "final":
		m.Final, ok = in.field(fieldClass, v)
		ok = ok && once(seen, 7)
	case "pending":
		ok = fastTimeTo(v, &m.Pending) && once(seen, 8)
	}
	return ok
}

// readSteps reads the raw array v of flat step objects into the message.
func (d *truthDecoder) readSteps(v []byte) bool {
	ok := arrayElems(v, func(e []byte) bool {
		d.steps = append(d.steps, rundir.TruthStep{})
		st := &d.steps[len(d.steps)-1]
		var seen uint16
		return flatjson.Fields(e, func(k, v []byte) bool { return d.stepField(st, &seen, k, v) })
	})
	// An empty array is an empty slice, not nil, as json.Unmarshal makes it.
	d.msg.Steps = d.steps[:len(d.steps):len(d.steps)]
	if d.msg.Steps == nil {
		d.msg.Steps = []rundir.TruthStep{}
	}
	return ok
}

func (d *truthDecoder) stepField(st *rundir.TruthStep, seen *uint16, key, v []byte) bool {
	var ok bool
	switch string(key) {
	case "channel":
		st.Channel, ok = d.in.field(fieldChannel, v)
		ok = ok && once(seen, 0)
	case "state":
		st.State, ok = d.in.field(fieldState, v)
		ok = ok && once(seen, 1)
	case "code":
		var x int64
		x, ok = fastInt(v)
		st.Code, ok = int(x), ok && once(seen, 2)
	case "delay":
		ok = fastDuration(v, &st.Delay) && once(seen, 3)
	}
	return ok
}

// fastStringIf is fastString when ok.
func fastStringIf(ok bool, v []byte) (string, bool) {
	if !ok {
		return "", false
	}
	return fastString(v)
}

// fastTimeTo is a quoted time read by time.Time's UnmarshalJSON, as
// json.Unmarshal does.
func fastTimeTo(v []byte, t *time.Time) bool {
	return len(v) >= 2 && v[0] == '"' && t.UnmarshalJSON(v) == nil
}

// fastDuration is rundir.Duration's UnmarshalJSON on a plain string or a
// number in JSON's grammar.
func fastDuration(v []byte, d *rundir.Duration) bool {
	if len(v) > 0 && v[0] == '"' {
		s, ok := fastString(v)
		if !ok {
			return false
		}
		x, err := time.ParseDuration(s)
		*d = rundir.Duration(x)
		return err == nil
	}
	f, ok := fastFloat(v)
	*d = rundir.Duration(f * float64(time.Second))
	return ok
}

// objectFields is flatjson.Fields on an object some of whose values may be
// arrays of flat objects (given raw, brackets included), up to 4 of them:
// the rest of b is split by flatjson.Fields in a copy (in buf, reused) with
// each array replaced by a number of as many digits, the same bytes
// otherwise.
func objectFields(b []byte, buf *[]byte, f func(key, v []byte) bool) bool {
	var arrays [4][2]int // where each array stands in b
	na := 0
	flat := b
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			j := bytes.IndexByte(b[i+1:], '"')
			if j < 0 {
				return false
			}
			i += j + 1 // flatjson refuses an escape: a quote always closes
		case '[':
			j := arrayEnd(b, i)
			if j < 0 || na == len(arrays) {
				return false
			}
			if na == 0 {
				*buf = append((*buf)[:0], b...)
				flat = *buf
			}
			arrays[na] = [2]int{i, j}
			na++
			for k := i; k < j; k++ {
				flat[k] = '0'
			}
			flat[i] = '1' // a number with no leading zero
			i = j - 1
		}
	}
	next := 0
	return flatjson.Fields(flat, func(k, v []byte) bool {
		if at := cap(flat) - cap(v); next < na && arrays[next][0] == at && len(v) > 0 {
			a := arrays[next]
			next++
			return len(v) == a[1]-a[0] && f(k, b[a[0]:a[1]])
		}
		return f(k, v)
	}) && next == na
}

// arrayEnd is the index after the ']' closing the array that opens at b[i],
// its strings plain and no array in it; -1 when there is none.
func arrayEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			k := bytes.IndexByte(b[j+1:], '"')
			if k < 0 {
				return -1
			}
			j += k + 1
		case '[':
			return -1
		case ']':
			return j + 1
		}
	}
	return -1
}

// arrayElems calls f with each element of v, a raw array of flat objects
// (whitespace between tokens), and reports whether v is one and f took each.
func arrayElems(v []byte, f func(obj []byte) bool) bool {
	v = bytes.TrimSpace(v)
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return false
	}
	rest := bytes.TrimSpace(v[1 : len(v)-1])
	for len(rest) > 0 {
		end := objectEnd(rest)
		if end < 0 || !f(rest[:end]) {
			return false
		}
		rest = bytes.TrimSpace(rest[end:])
		if len(rest) == 0 {
			break
		}
		if rest[0] != ',' {
			return false
		}
		if rest = bytes.TrimSpace(rest[1:]); len(rest) == 0 {
			return false // a trailing comma
		}
	}
	return true
}

// objectEnd is the index after the '}' closing the flat object that opens
// b, its strings plain; -1 when b opens none.
func objectEnd(b []byte) int {
	if len(b) == 0 || b[0] != '{' {
		return -1
	}
	for j := 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			k := bytes.IndexByte(b[j+1:], '"')
			if k < 0 {
				return -1
			}
			j += k + 1
		case '{', '[':
			return -1
		case '}':
			return j + 1
		}
	}
	return -1
}
