package reports

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"unicode/utf8"

	"github.com/msgload/msgload/internal/flatjson"
	"github.com/msgload/msgload/rundir"
)

// eventDecoder reads the lines of events.jsonl as decodeAttempt reads
// attempts.jsonl (issue 23: decoding the callbacks through encoding/json's
// reflection was half the garbage `msgload report` made on a run with
// callbacks). A line as the sink writes it (sink/encode.go) — one object,
// keys spelt as the tags, each once, strings without escapes, corr and sig
// flat, the payload any JSON — is read directly: Payload is the line's own
// bytes and Corr and Sig the decoder's records, reused from line to line, so
// a reader keeps nothing of an event past its fn (rundir.DecodeJSONLFunc's
// line is valid until then; eventFeed hands its head on before it reads the
// next; what the analysis keeps of an event is figures, hashes and strings).
// Anything else (an escape, a null, a key in another case, a number out of
// range or not in JSON's grammar, a key given twice) goes to json.Unmarshal,
// which also judges every line that does not decode. The two agree on what
// the direct path takes (TestDecodeEventAgreesWithJSON, FuzzDecodeEvent).
type eventDecoder struct {
	in   interner
	corr rundir.Correlation
	sig  rundir.Signature
}

// readEventsFile is readJSONLFunc of events.jsonl through an eventDecoder.
func readEventsFile(fsys fs.FS, fn func(rundir.Event) error, bad func(line int, err error)) error {
	d := &eventDecoder{}
	return readJSONLFunc(fsys, rundir.EventsFile, d.decode, fn, bad)
}

// decode decodes one line of events.jsonl into e exactly as json.Unmarshal
// does into a zero Event.
func (d *eventDecoder) decode(b []byte, e *rundir.Event) error {
	if d.fast(b, e) {
		return nil
	}
	*e = rundir.Event{}
	return json.Unmarshal(b, e)
}

// fast reads b into e when it is in the form eventDecoder describes; false
// (e possibly half filled) otherwise.
func (d *eventDecoder) fast(b []byte, e *rundir.Event) bool {
	*e = rundir.Event{}
	var seen uint16
	return members(b, func(k, v []byte) bool { return d.eventField(e, &seen, k, v) })
}

// The keys of an event, a correlation and a signature, as their tags spell
// them: a key of none of them in any case is ignored, as json.Unmarshal
// ignores it.
var (
	eventKeys = []string{"kind", "route", "received_at", "api", "payload", "raw", "reason", "corr", "answered", "delayed_s", "sig"}
	corrKeys  = []string{"key", "run", "part", "seq", "first_sent", "state", "channel", "terminal", "matched", "duplicate", "redelivered", "latency_s", "failover_step", "outgoing_tx_id"}
	sigKeys   = []string{"scheme", "skew_s", "verified", "problem"}
)

func (d *eventDecoder) eventField(e *rundir.Event, seen *uint16, key, v []byte) bool {
	var ok bool
	switch string(key) {
	case "kind":
		e.Kind, ok = d.text(fieldOp, v) // the interner's slots are the attempt's; any will do
		ok = ok && once(seen, 0)
	case "route":
		e.Route, ok = d.text(fieldProbe, v)
		ok = ok && once(seen, 1)
	case "received_at":
		ok = fastTimeTo(v, &e.ReceivedAt) && once(seen, 2)
	case "api":
		e.API, ok = d.text(fieldAPI, v)
		ok = ok && once(seen, 3)
	case "payload":
		// json.RawMessage takes the value's bytes as they are, whatever it is.
		e.Payload, ok = v[:len(v):len(v)], once(seen, 4)
	case "raw":
		e.Raw, ok = d.text(-1, v)
		ok = ok && once(seen, 5)
	case "reason":
		e.Reason, ok = d.text(-2, v)
		ok = ok && once(seen, 6)
	case "corr":
		e.Corr, ok = &d.corr, once(seen, 7) && d.readCorr(v)
	case "answered":
		var x int64
		x, ok = fastInt(v)
		e.Answered, ok = int(x), ok && once(seen, 8)
	case "delayed_s":
		e.Delayed, ok = fastFloat(v)
		ok = ok && once(seen, 9)
	case "sig":
		e.Sig, ok = &d.sig, once(seen, 10) && d.readSig(v)
	default:
		return ignorable(key, eventKeys)
	}
	return ok
}

// text is a string value of the event's own object, where members let
// escapes through: interned in slot f (-1: not interned, -2: interned
// without a slot), none when it has an escape.
func (d *eventDecoder) text(f int, v []byte) (string, bool) {
	if bytes.IndexByte(v, '\\') >= 0 {
		return "", false
	}
	switch f {
	case -1:
		return fastString(v)
	case -2:
		return d.in.fastString(v)
	}
	return d.in.field(f, v)
}

// readCorr reads the flat object v into the decoder's correlation.
func (d *eventDecoder) readCorr(v []byte) bool {
	d.corr = rundir.Correlation{}
	var seen uint16
	return flatjson.Fields(v, func(k, x []byte) bool { return d.corrField(&seen, k, x) })
}

func (d *eventDecoder) corrField(seen *uint16, key, v []byte) bool {
	c, in := &d.corr, &d.in
	var ok bool
	switch string(key) {
	case "key":
		c.Key, ok = fastStringIf(once(seen, 0), v)
	case "run":
		c.Run, ok = in.field(fieldClient, v)
		ok = ok && once(seen, 1)
	case "part":
		c.Part, ok = in.field(fieldOutcome, v)
		ok = ok && once(seen, 2)
	case "seq":
		c.Seq, ok = fastInt(v)
		ok = ok && once(seen, 3)
	case "first_sent":
		ok = fastTimeTo(v, &c.FirstSent) && once(seen, 4)
	case "state":
		c.State, ok = in.field(fieldState, v)
		ok = ok && once(seen, 5)
	case "channel":
		c.Channel, ok = in.field(fieldChannel, v)
		ok = ok && once(seen, 6)
	case "latency_s":
		c.Latency, ok = fastFloat(v)
		ok = ok && once(seen, 7)
	case "outgoing_tx_id":
		c.OutgoingTxID, ok = fastStringIf(once(seen, 8), v)
	default:
		return corrFlag(c, seen, key, v)
	}
	return ok
}

// corrFlag reads the boolean fields of a correlation (the bits of seen
// from 9), and any other key as json.Unmarshal does.
func corrFlag(c *rundir.Correlation, seen *uint16, key, v []byte) bool {
	var p *bool
	var bit uint
	switch string(key) {
	case "terminal":
		p, bit = &c.Terminal, 9
	case "matched":
		p, bit = &c.Matched, 10
	case "duplicate":
		p, bit = &c.Duplicate, 11
	case "redelivered":
		p, bit = &c.Redelivered, 12
	case "failover_step":
		p, bit = &c.FailoverStep, 13
	default:
		return ignorable(key, corrKeys)
	}
	var ok bool
	*p, ok = fastBool(v)
	return ok && once(seen, bit)
}

// readSig reads the flat object v into the decoder's signature.
func (d *eventDecoder) readSig(v []byte) bool {
	d.sig = rundir.Signature{}
	var seen uint16
	return flatjson.Fields(v, func(k, x []byte) bool { return d.sigField(&seen, k, x) })
}

func (d *eventDecoder) sigField(seen *uint16, key, v []byte) bool {
	g, in := &d.sig, &d.in
	var ok bool
	switch string(key) {
	case "scheme":
		g.Scheme, ok = in.field(fieldClass, v)
		ok = ok && once(seen, 0)
	case "skew_s":
		g.Skew, ok = fastFloat(v)
		ok = ok && once(seen, 1)
	case "verified":
		g.Verified, ok = in.field(fieldGaveUp, v)
		ok = ok && once(seen, 2)
	case "problem":
		g.Problem, ok = in.fastString(v)
		ok = ok && once(seen, 3)
	default:
		return ignorable(key, sigKeys)
	}
	return ok
}

// ignorable reports whether json.Unmarshal ignores key in an object whose
// fields are known: it matches a field's name in any case (Unicode's
// folding: "ſ" is an "s"), so only a key in ASCII that folds to none is
// surely ignored; any other goes to json.Unmarshal.
func ignorable(key []byte, known []string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	for _, k := range known {
		if bytes.EqualFold(key, []byte(k)) {
			return false
		}
	}
	return true
}
