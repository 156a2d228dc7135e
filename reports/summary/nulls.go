package summary

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A figure with no data is null in summary.json, "no data" in the reports, and
// a threshold that reads it fails (thresholds.go). The Go fields stay plain
// numbers (0 when there is no data): Percentiles.Count == 0 and
// Delivery.Measured == false say which are absent. Reading null back into a
// number leaves 0, so summaries old and new decode the same way.

// NoData is how the reports show a figure without data.
const NoData = "no data"

// NotMeasured is how the reports show delivery figures of a run with delivery: none.
const NotMeasured = "not measured"

// Has reports whether the latency object has any value.
func (p Percentiles) Has() bool { return p.Count > 0 }

// MarshalJSON writes the percentiles, or null for each of them when nothing was
// recorded (count stays), and null for each that is only a lower bound (its
// _at_least field beside it holds the bound).
func (p Percentiles) MarshalJSON() ([]byte, error) {
	type plain Percentiles
	if p.Count == 0 {
		return []byte(`{"count":0,"censored":0,"p50":null,"p90":null,"p95":null,"p99":null,"max":null,"mean":null}`), nil
	}
	b, err := json.Marshal(plain(p))
	if err != nil || p.Censored == 0 {
		return b, err
	}
	var null []string
	for _, name := range latencyFigures {
		if _, lower := p.Figure(name); lower {
			null = append(null, name)
		}
	}
	return nullKeys(b, null)
}

// latencyFigures are the figures of a latency object, in summary.json's order.
var latencyFigures = []string{"p50", "p90", "p95", "p99", "max", "mean"}

// Figure returns p's figure name (p50, p90, p95, p99, max, mean) and whether
// it is only a lower bound (then v is the bound: the figure is more).
func (p Percentiles) Figure(name string) (v float64, lower bool) {
	var exact float64
	var bound *float64
	switch name {
	case "p50":
		exact, bound = p.P50, p.P50AtLeast
	case "p90":
		exact, bound = p.P90, p.P90AtLeast
	case "p95":
		exact, bound = p.P95, p.P95AtLeast
	case "p99":
		exact, bound = p.P99, p.P99AtLeast
	case "max":
		exact, bound = p.Max, p.MaxAtLeast
	case "mean":
		exact, bound = p.Mean, p.MeanAtLeast
	}
	return figure(exact, bound)
}

// figure is a figure held as its value and, when it is only a lower bound,
// the bound (its _at_least field): the bound and true when there is one.
func figure(exact float64, bound *float64) (v float64, lower bool) {
	if bound != nil {
		return *bound, true
	}
	return exact, false
}

// ShowFigure formats p's figure name for people: "1.20s", "> 5.00s" for a
// lower bound, or "no data".
func (p Percentiles) ShowFigure(name string) string {
	if p.Count == 0 {
		return NoData
	}
	v, lower := p.Figure(name)
	if lower {
		return "> " + Dur(v)
	}
	return Dur(v)
}

// CensoredNote is "(38 of 40 without a final status)" when p has censored
// values, else "".
func (p Percentiles) CensoredNote() string { return p.CensoredNoteOf(NoFinalStatus) }

// CensoredNoteOf is CensoredNote with what the censored values lacked: a
// final status (a delivery latency: NoFinalStatus) or an answer (a request
// latency: NoAnswer).
func (p Percentiles) CensoredNoteOf(what string) string {
	if p.Censored == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d %s)", p.Censored, p.Count, what)
}

// Lacked is what a censored value of the latency at path lacked: an answer
// for a request latency (requests.…), else a final status.
func Lacked(path string) string {
	if strings.HasPrefix(path, "requests.") {
		return NoAnswer
	}
	return NoFinalStatus
}

// What a censored value lacked, for CensoredNoteOf.
const (
	NoFinalStatus = "without a final status"
	NoAnswer      = "with no answer"
)

// CountText is p's count for the tables: "40", or "40 (38 without a final
// status)".
func (p Percentiles) CountText() string { return countText(p.Count, p.Censored, NoFinalStatus) }

// countText is a count of values for the tables, with how many of them were
// censored and what they lacked: "40", or "40 (38 without a final status)".
func countText(count, censored int64, what string) string {
	if censored == 0 {
		return strconv.FormatInt(count, 10)
	}
	return fmt.Sprintf("%d (%d %s)", count, censored, what)
}

// LowerBoundWhy says why figure name of p is only a lower bound, or "" when
// it is not: "<label> is at least 5.00s (38 of 40 without a final status by
// the end of the wait)".
func (p Percentiles) LowerBoundWhy(name, label string) string {
	v, lower := p.Figure(name)
	if !lower {
		return ""
	}
	if Lacked(label) == NoAnswer {
		return fmt.Sprintf("%s is at least %s (%d of %d requests %s)", label, Dur(v), p.Censored, p.Count, NoAnswer)
	}
	return fmt.Sprintf("%s is at least %s (%d of %d %s by the end of the wait)", label, Dur(v), p.Censored, p.Count, NoFinalStatus)
}

// Show formats one of p's figures for people, or "no data".
func (p Percentiles) Show(v float64) string {
	if p.Count == 0 {
		return NoData
	}
	return Dur(v)
}

// MarshalJSON writes the request figures, with error_rate null when no
// request was made and achieved_rate null when no message was sent: a rate of
// nothing is no data, not 0.
func (r Requests) MarshalJSON() ([]byte, error) {
	type plain Requests
	b, err := json.Marshal(plain(r))
	if err != nil {
		return b, err
	}
	var null []string
	if r.Total == 0 {
		null = append(null, "error_rate")
	}
	if r.Messages == 0 {
		null = append(null, "achieved_rate")
	}
	if len(null) == 0 {
		return b, nil
	}
	return nullKeys(b, null)
}

// ShowRate formats a rate of r's for people, or "no data" when has is false.
func ShowRate(v float64, has bool, format func(float64) string) string {
	if !has {
		return NoData
	}
	return format(v)
}

// DeliveryCounts are the JSON names of the Delivery figures that only a
// measured delivery has: null in summary.json when delivery is not measured.
var DeliveryCounts = []string{"expected", "received", "lost", "late", "duplicates", "unmatched",
	"malformed", "unauthorized", "unconfirmed", "before_send", "refused_on_purpose", "redelivered", "events", "bad_lines"}

// MarshalJSON writes the delivery figures, with the counts null when delivery
// was not measured (delivery: none).
func (d Delivery) MarshalJSON() ([]byte, error) {
	type plain Delivery
	b, err := json.Marshal(plain(d))
	if err != nil || d.Measured {
		return b, err
	}
	return nullKeys(b, DeliveryCounts)
}

// UnmarshalJSON reads the delivery figures; a summary written before
// `measured` existed was measured unless its delivery was `none`.
func (d *Delivery) UnmarshalJSON(b []byte) error {
	type plain Delivery
	var v struct {
		plain
		Measured *bool `json:"measured"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*d = Delivery(v.plain)
	if v.Measured != nil {
		d.Measured = *v.Measured
	} else {
		d.Measured = d.Via != "none"
	}
	return nil
}

// ClearCounts zeroes the figures a run without delivery measurement cannot
// have (every accepted message would otherwise count as lost).
func (d *Delivery) ClearCounts() {
	d.Expected, d.Received, d.Lost, d.Late, d.Duplicates, d.Unmatched = 0, 0, 0, 0, 0, 0
	d.Malformed, d.Unauthorized, d.Unconfirmed, d.Refused, d.Redelivered, d.Events, d.BadLines, d.BeforeSend = 0, 0, 0, 0, 0, 0, 0, 0
	d.LostSeqs, d.LateSeqs = nil, nil
}

// MarshalJSON writes the threshold with a null value when its figure has no data.
func (t Threshold) MarshalJSON() ([]byte, error) {
	type plain Threshold
	b, err := json.Marshal(plain(t))
	if err != nil || len(t.NoData) == 0 {
		return b, err
	}
	return nullKeys(b, []string{"value"})
}

// nullKeys rewrites a JSON object, setting the listed top-level keys to null
// and keeping every key in its place.
func nullKeys(obj []byte, keys []string) ([]byte, error) {
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("nullKeys: not an object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for first := true; dec.More(); first = false {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if !first {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(key)
		out.Write(kb)
		out.WriteByte(':')
		if drop[key] {
			out.WriteString("null")
		} else {
			out.Write(val)
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// Dur formats seconds for people: 850µs, 12.3ms, 1.25s, 2m5s.
func Dur(sec float64) string {
	switch {
	case sec == 0:
		return "0"
	case sec < 1e-3:
		return strconv.FormatFloat(sec*1e6, 'f', 0, 64) + "µs"
	case sec < 1:
		return strconv.FormatFloat(sec*1e3, 'f', 1, 64) + "ms"
	case sec < 120:
		return strconv.FormatFloat(sec, 'f', 2, 64) + "s"
	}
	m := int(sec) / 60
	return fmt.Sprintf("%dm%ds", m, int(sec)-60*m)
}
