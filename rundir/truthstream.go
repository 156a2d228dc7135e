package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// Record types of truth.jsonl (TruthRecord.Type).
const (
	TruthRecRateLimit = "rate_limit" // first: the limit the simulator enforced
	TruthRecWindow    = "window"     // one limiter window of one client, once it is over
	TruthRecMessage   = "message"    // one accepted message, once its last callback is settled
	TruthRecCallback  = "callback"   // one callback attempt, as it happens
	TruthRecEnd       = "end"        // last: the simulator closed; without it the truth is unfinished
)

// TruthRecord is one line of truth.jsonl: the simulator's truth written as
// it becomes final, so that neither the simulator nor the report holds the
// whole of it. Exactly the field named by Type is set. A message's record
// follows every callback record of its id (it is written when its last call
// is settled): a reader joins the calls to their message and forgets both.
type TruthRecord struct {
	Type      string          `json:"type"`
	RateLimit *TruthRateLimit `json:"rate_limit,omitempty"`
	Window    *TruthWindow    `json:"window,omitempty"`
	Message   *TruthMessage   `json:"message,omitempty"`
	Callback  *TruthCallback  `json:"callback,omitempty"`
	Truncated bool            `json:"truncated,omitempty"` // end: records are missing (see Truth.Truncated)
}

// ErrTruthUnfinished is returned for a truth.jsonl with no end record: the
// simulator did not close (the run was killed), so records of messages in
// flight are missing and the truth cannot be compared.
var ErrTruthUnfinished = errors.New("truth.jsonl has no end record: the simulator did not close")

// DecodeTruthRecords calls fn for every record of a truth.jsonl stream, in
// order. A line that does not decode, or a stream with no end record, is an
// error (ErrTruthUnfinished for the latter): a truth with holes would be
// judged as if complete. The record is valid until fn returns.
func DecodeTruthRecords(r io.Reader, fn func(*TruthRecord) error) error {
	return decodeTruthRecords(r, unmarshalTruth, fn)
}

// TruthDecoder decodes one line of truth.jsonl into a zeroed record; it must
// do what json.Unmarshal does (DecodeJSONLFunc). What it sets may be reused
// for the next line: a reader keeps nothing of a record past its fn.
type TruthDecoder func(line []byte, rec *TruthRecord) error

func unmarshalTruth(b []byte, rec *TruthRecord) error { return json.Unmarshal(b, rec) }

func decodeTruthRecords(r io.Reader, decode TruthDecoder, fn func(*TruthRecord) error) error {
	ended := false
	var bad error
	var cur TruthRecord // one for every line: fn keeps nothing of it past its call
	err := DecodeJSONLFunc(r, decode, func(rec TruthRecord) error {
		if ended {
			return fmt.Errorf("%s: a record after the end record", TruthStreamFile)
		}
		ended = rec.Type == TruthRecEnd
		cur = rec
		return fn(&cur)
	}, func(line int, err error) {
		if bad == nil {
			bad = fmt.Errorf("%s: line %d: %w", TruthStreamFile, line, err)
		}
	})
	switch {
	case err != nil:
		return err
	case bad != nil:
		return bad
	case !ended:
		return ErrTruthUnfinished
	}
	return nil
}

// Records calls fn for the records of t in an order truth.jsonl allows (every
// callback before the messages): how a truth.json is read by the readers of
// truth.jsonl.
func (t *Truth) Records(fn func(*TruthRecord) error) error {
	recs := []TruthRecord{{Type: TruthRecRateLimit, RateLimit: &t.RateLimit}}
	for i := range t.Windows {
		recs = append(recs, TruthRecord{Type: TruthRecWindow, Window: &t.Windows[i]})
	}
	for _, r := range recs {
		if err := fn(&r); err != nil {
			return err
		}
	}
	for i := range t.Callbacks {
		if err := fn(&TruthRecord{Type: TruthRecCallback, Callback: &t.Callbacks[i]}); err != nil {
			return err
		}
	}
	for i := range t.Messages {
		if err := fn(&TruthRecord{Type: TruthRecMessage, Message: &t.Messages[i]}); err != nil {
			return err
		}
	}
	return fn(&TruthRecord{Type: TruthRecEnd, Truncated: t.Truncated})
}

// Add adds one record to t (the inverse of Records).
func (t *Truth) Add(rec *TruthRecord) {
	switch {
	case rec.Type == TruthRecRateLimit && rec.RateLimit != nil:
		t.RateLimit = *rec.RateLimit
	case rec.Type == TruthRecWindow && rec.Window != nil:
		t.Windows = append(t.Windows, *rec.Window)
	case rec.Type == TruthRecMessage && rec.Message != nil:
		t.Messages = append(t.Messages, *rec.Message)
	case rec.Type == TruthRecCallback && rec.Callback != nil:
		t.Callbacks = append(t.Callbacks, *rec.Callback)
	case rec.Type == TruthRecEnd:
		t.Truncated = t.Truncated || rec.Truncated
	}
}

// ReadTruth reads the truth of the run directory fsys whole: truth.jsonl when
// there is one, else truth.json (run directories of before truth.jsonl).
// It returns nil and no error when the run has neither. For small truths and
// tests: the report reads truth.jsonl as a stream (OpenTruth).
func ReadTruth(fsys fs.FS) (*Truth, error) {
	t := &Truth{Windows: []TruthWindow{}, Messages: []TruthMessage{}, Callbacks: []TruthCallback{}}
	found, err := OpenTruth(fsys, func(rec *TruthRecord) error { t.Add(rec); return nil })
	if !found || err != nil {
		return nil, err
	}
	return t, nil
}

// OpenTruth calls fn for every record of the run's truth — truth.jsonl as a
// stream, or truth.json (older runs) through Truth.Records — and reports
// whether the run has either file.
func OpenTruth(fsys fs.FS, fn func(*TruthRecord) error) (bool, error) {
	return OpenTruthFunc(fsys, unmarshalTruth, fn)
}

// OpenTruthFunc is OpenTruth reading truth.jsonl's lines with decode (the
// report's own decoder: reports/truthjson.go).
func OpenTruthFunc(fsys fs.FS, decode TruthDecoder, fn func(*TruthRecord) error) (bool, error) {
	f, err := OpenRegularFS(fsys, TruthStreamFile)
	if err == nil {
		defer f.Close()
		return true, decodeTruthRecords(f, decode, fn)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return true, err
	}
	b, err := ReadFileFS(fsys, TruthFile, MaxTruthBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	var t Truth
	if err := json.Unmarshal(b, &t); err != nil {
		return true, fmt.Errorf("%s: %w", TruthFile, err)
	}
	return true, t.Records(fn)
}

// HasTruth reports whether the run directory fsys holds a truth, either file.
func HasTruth(fsys fs.FS) bool {
	for _, name := range []string{TruthStreamFile, TruthFile} {
		if _, err := fs.Stat(fsys, name); err == nil {
			return true
		}
	}
	return false
}
